"""What went wrong with a model request, in words that say what to fix.

litellm raises its own exception classes, but the same failure arrives differently from each
adapter: a missing OpenAI key is an `InternalServerError` ("Missing credentials"), a refused
connection a 500 ("Connection error."), Anthropic's 529 a 500 whose body says it was overloaded.
A refused connection is not retried (nothing listens there; waiting will not change that).
`classify` names the kind (no key, cannot connect, unknown provider or model, rate limited,
server error with its status, ...) together with the model and the address it was sent to, and
says whether trying again can help. Keys never appear: every message passes through `redact`.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from agent.secrets import redact

# Kinds that only a change of configuration fixes (`coder-tui run` exits 2; the app opens setup).
CONFIGURATION_KINDS = frozenset({"no_key", "unknown_provider", "unknown_model"})
RETRYABLE_KINDS = frozenset({"rate_limited", "cannot_connect", "timeout", "server", "stream_broke", "failed",
                             "overloaded"})
ADVICE = {"overloaded": ": it usually passes within minutes; send the message again later, or switch model "
                          "(--model, /model, `fallback_models`)",
          "rate_limited": ": send the message again in a minute, or switch model (--model, /model)"}
PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic", "azure": "Azure OpenAI", "gemini": "Gemini",
                  "vertex_ai": "Vertex AI", "ollama": "Ollama", "ollama_chat": "Ollama", "mistral": "Mistral",
                  "deepseek": "DeepSeek", "openrouter": "OpenRouter", "groq": "Groq", "bedrock": "Bedrock",
                  "xai": "xAI", "together_ai": "Together AI", "fireworks_ai": "Fireworks AI"}
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com",
                "ollama": "http://localhost:11434", "ollama_chat": "http://localhost:11434"}
_MISSING_KEY = re.compile(r"Missing credentials|Missing [\w ]*API Key|api_key client option must be set|"
                          r"no key is set", re.IGNORECASE)
_CONNECT = re.compile(r"Connection error|Cannot connect to host|Connect call failed|Connection refused|"
                      r"Name or service not known|nodename nor servname|getaddrinfo failed", re.IGNORECASE)
_REFUSED = re.compile(r"Connect call failed|Connection refused", re.IGNORECASE)
ADDRESS_HINT = "To use another address: --api-base URL, CODER_TUI_API_BASE, `api_base` in config.toml, or /setup in the app"
_NOISE = re.compile(r"\b(?:litellm\.|[A-Z]\w*(?:Exception|Error) - |[A-Z]\w*(?:Error|Exception|Timeout): |"
                    r"[A-Z]\w*Exception (?=\S))")


class LLMError(Exception):
    """The model could not be reached or refused the request; the message says why."""

    def __init__(self, message: str, kind: str = "request") -> None:
        super().__init__(redact(message))
        self.kind = kind

    @property
    def configuration(self) -> bool:
        """Only a different model, provider or key fixes it: not worth a retry or another prompt."""
        return self.kind in CONFIGURATION_KINDS


@dataclass
class Failure:
    kind: str
    message: str
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS


def where(model: str, api_base: str | None) -> str:
    """The address a request for `model` goes to, as the user would recognise it."""
    if api_base:
        return api_base
    provider = model.split("/", 1)[0] if "/" in model else ""
    return DEFAULT_URLS.get(provider, f"the {provider} API" if provider else "the provider's API")


def classify(exc: Exception, litellm: Any, model: str, api_base: str | None, key_variable: str | None,
             streaming: bool = False) -> Failure:
    """The kind of a failed request and the message to show for it (`streaming`: it failed after
    the answer had started to arrive, so a lost connection is a broken stream, not a refusal)."""
    errors, text = litellm.exceptions, provider_message(exc)
    status = getattr(exc, "status_code", None)
    url = where(model, api_base)
    raw = _chain_text(exc)
    if _MISSING_KEY.search(raw):
        return Failure("no_key", f"no API key for {model}: {_key_hint(key_variable)} (a key in the folder's .env "
                                 "is used once you trust the folder: `coder-tui trust DIR`)")
    provider = provider_name(model, api_base)
    if isinstance(exc, (errors.AuthenticationError, errors.PermissionDeniedError)):
        return Failure("auth", f"authentication failed for {model} at {url}: {provider} rejected the API key "
                               f"({text}); {_key_hint(key_variable)}")
    if "LLM Provider NOT provided" in raw:
        return Failure("unknown_provider", unknown_provider(model))
    if isinstance(exc, errors.ContextWindowExceededError):
        return Failure("context_window", f"the conversation no longer fits {model}'s context window ({provider}: "
                                         f"{text}); start a new session (or /clear in the app) and give a "
                                         "narrower task")
    if isinstance(exc, errors.ContentPolicyViolationError):
        return Failure("content_filter", f"{provider}'s content filter refused the request for {model} ({text}); "
                                         "rephrase the request or leave out what it objects to")
    if isinstance(exc, errors.NotFoundError):
        return Failure("unknown_model", f"model {model} was not found at {url}: {text} (check the model "
                                        "name, or --api-base if the address is wrong)")
    if isinstance(exc, errors.RateLimitError) or status == 429:
        return Failure("rate_limited", f"rate limited by {provider}: {text}", retry_after(exc))
    if status == 529 or "overloaded_error" in raw:
        return Failure("overloaded", f"{provider} is overloaded (overloaded_error)", retry_after(exc))
    if isinstance(exc, errors.Timeout):
        return Failure("timeout", f"timed out waiting for {url}: {text}")
    if type(exc).__name__ == "MidStreamFallbackError" or (streaming and isinstance(exc, errors.APIConnectionError)):
        return Failure("stream_broke", f"the stream broke off: {text}")
    if _CONNECT.search(raw):
        if _REFUSED.search(raw):  # nothing listens there: waiting will not change that, so no retries
            return Failure("refused", f"cannot connect to {url}: connection refused (is the server running "
                                      f"there? {ADDRESS_HINT})")
        return Failure("cannot_connect", f"cannot connect to {url}: {_connect_reason(raw)}")
    if isinstance(exc, errors.APIConnectionError):  # litellm's name for anything its adapter raised
        return Failure("failed", f"the request to {model} at {url} failed: {text}")
    if isinstance(status, int) and status >= 500:
        return Failure("server", f"server error {status} from {url}: {text}", retry_after(exc))
    if isinstance(status, int):
        return Failure("request", f"{url} refused the request for {model} ({status}): {text}")
    return Failure("request", f"the request to {model} at {url} failed: {text}")


def _chain_text(exc: BaseException) -> str:
    """The exception's text and its causes': the OpenAI SDK says only "Connection error." and
    keeps the refused connection underneath."""
    parts, seen = [], 0
    current: BaseException | None = exc
    while current is not None and seen < 8:
        parts.append(str(current))
        current, seen = current.__cause__ or current.__context__, seen + 1
    return "\n".join(parts)


def provider_name(model: str, api_base: str | None = None) -> str:
    """The provider of `model` as its users call it (the litellm prefix when it has no better name)."""
    prefix = model.split("/", 1)[0] if "/" in model else "openai"
    if prefix == "openai" and api_base and "api.openai.com" not in api_base:
        return "the OpenAI-compatible server"
    return PROVIDER_NAMES.get(prefix, prefix)


def gave_up(why: str, place: str, attempts: int, wait: float | None, kind: str = "") -> str:
    """The one line for a retryable failure not retried further (`place`: the model and its address):
    after `attempts`, or at once when the provider asks for a `wait` too long to sit through."""
    if wait is None:
        return f"{why} ({place}; gave up after {attempts} attempts){ADVICE.get(kind, '')}"
    when = time.strftime("%H:%M:%S UTC", time.gmtime(time.time() + wait))
    return f"{why} ({place}); it asks to wait {_duration(wait)}: try again after {when}"


def waiting(why: str, wait: float | None) -> str:
    """The retry status: what went wrong and, when the provider named it, that its wait is honoured."""
    return why if wait is None else f"{why}; waiting the {_duration(wait)} it asks for"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:g} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def unknown_provider(model: str) -> str:
    return (f"litellm does not know the provider of model {model!r}: use a provider prefix such as "
            "openai/, anthropic/, ollama_chat/ (see litellm's provider list)")


def _key_hint(key_variable: str | None) -> str:
    var = key_variable or "the provider's API key variable"
    return f"set {var} or CODER_TUI_API_KEY, or pass --api-key"


def _connect_reason(raw: str) -> str:
    if re.search(r"Name or service not known|nodename nor servname|getaddrinfo", raw, re.IGNORECASE):
        return "the host name does not resolve"
    return "the connection failed"


def provider_message(exc: Exception) -> str:
    """The provider's own message: the `error.message` of a JSON error body when there is one,
    else the exception's first line without litellm's repeated class-name prefixes."""
    text = (str(exc).strip() or type(exc).__name__).split(" Original exception")[0]
    body = _json_body(text)
    if body is not None:
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            kind = error.get("type")
            text = f"{error['message']} ({kind})" if kind and kind not in ("error", "scripted") else error["message"]
        elif isinstance(error, str):
            text = error
    text = _NOISE.sub("", text).strip()
    return redact((text.splitlines() or [type(exc).__name__])[0][:300])


def _json_body(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def retry_after(exc: Exception) -> float | None:
    headers = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    headers = headers or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    millis = headers.get("retry-after-ms")  # OpenAI's
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        if millis is not None:
            return float(millis) / 1000
        return float(value) if value is not None else None
    except ValueError:
        return _http_date_wait(value)


def _http_date_wait(value: str | None) -> float | None:
    """Seconds until a Retry-After given as an HTTP date."""
    try:
        moment = email.utils.parsedate_to_datetime(value or "")
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time()) if moment is not None else None
