"""litellm's exceptions as the kinds of agent/llm/errors.py (the litellm path only).

The same failure arrives differently from each of litellm's adapters: a missing OpenAI key is an
`InternalServerError` ("Missing credentials"), a refused connection a 500 ("Connection error."),
Anthropic's 529 a 500 whose body says it was overloaded. The kinds and words are the built-in
clients' (agent/llm/http.py), so a user reads the same line whichever path served the model.
"""

from __future__ import annotations

from typing import Any

from agent.llm.errors import (Failure, Place, chain_text, connection_kind, failure, missing_key, provider_message,
                              retry_after)


def classify(exc: Exception, litellm: Any, place: Place, streaming: bool = False) -> Failure:
    """The kind of a failed request and the message to show for it (`streaming`: it failed after
    the answer had started to arrive, so a lost connection is a broken stream, not a refusal)."""
    errors, text = litellm.exceptions, provider_message(exc)
    status = getattr(exc, "status_code", None)
    raw = chain_text(exc)
    if missing_key(raw):
        return failure("no_key", place)
    kind = _kind(exc, errors, raw, status, streaming)
    return failure(kind, place, text, status if isinstance(status, int) else None, retry_after(exc), raw)


def _kind(exc: Exception, errors: Any, raw: str, status: Any, streaming: bool) -> str:
    if isinstance(exc, (errors.AuthenticationError, errors.PermissionDeniedError)):
        return "auth"
    if "LLM Provider NOT provided" in raw:
        return "unknown_provider"
    for kind, cls in (("context_window", errors.ContextWindowExceededError),
                      ("content_filter", errors.ContentPolicyViolationError), ("unknown_model", errors.NotFoundError),
                      ("rate_limited", errors.RateLimitError)):
        if isinstance(exc, cls):
            return kind
    if status == 429:
        return "rate_limited"
    if status == 529 or "overloaded_error" in raw:
        return "overloaded"
    if isinstance(exc, errors.Timeout):
        return "timeout"
    if type(exc).__name__ == "MidStreamFallbackError" or (streaming and isinstance(exc, errors.APIConnectionError)):
        return "stream_broke"
    if (connected := connection_kind(raw)) is not None:
        return connected
    if isinstance(exc, errors.APIConnectionError):  # litellm's name for anything its adapter raised
        return "failed"
    if isinstance(status, int) and status >= 500:
        return "server"
    return "request"
