"""What went wrong with a model request, in words that say what to fix.

`failure` names the kind (no key, cannot connect, unknown provider or model, rate limited,
overloaded, server error with its status, ...) together with the model and the address the
request went to, and says whether trying again can help; each kind reads the same on every path
(the built-in clients map HTTP answers onto the kinds in agent/llm/http.py, the litellm path its
exceptions in agent/llm/litellm_errors.py). A refused connection is not retried (nothing listens
there; waiting will not change that). Keys never appear: every message passes through `redact`.
"""

from __future__ import annotations

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
    from agent.llm.routing import PROVIDERS, provider_prefix

    provider = provider_prefix(model)
    known = PROVIDERS.get(provider)
    if known is not None and known.base:
        return known.base
    return f"the {provider} API" if provider else "the provider's API"


@dataclass(frozen=True)
class Place:
    """Where a request went, for the messages: the model, the address given, the key variable."""

    model: str
    api_base: str | None
    key_variable: str | None

    @property
    def url(self) -> str:
        return where(self.model, self.api_base)

    @property
    def provider(self) -> str:
        return provider_name(self.model, self.api_base)


def failure(kind: str, place: Place, text: str = "", status: int | None = None,
            retry_after: float | None = None, raw: str = "") -> Failure:
    """The Failure of `kind` with its one-line message (the same words on every model path)."""
    model, url, provider = place.model, place.url, place.provider
    messages = {
        "no_key": f"no API key for {model}: {_key_hint(place.key_variable)} (a key in the folder's .env is used "
                  "once you trust the folder: `coder-tui trust DIR`)",
        "auth": f"authentication failed for {model} at {url}: {provider} rejected the API key ({text}); "
                f"{_key_hint(place.key_variable)}",
        "unknown_provider": unknown_provider(model),
        "context_window": f"the conversation no longer fits {model}'s context window ({provider}: {text}); start a "
                          "new session (or /clear in the app) and give a narrower task",
        "content_filter": f"{provider}'s content filter refused the request for {model} ({text}); rephrase the "
                          "request or leave out what it objects to",
        "unknown_model": f"model {model} was not found at {url}: {text} (check the model name, or --api-base if "
                         "the address is wrong)",
        "rate_limited": f"rate limited by {provider}: {text}",
        "overloaded": f"{provider} is overloaded (overloaded_error)",
        "timeout": f"timed out waiting for {url}: {text}",
        "stream_broke": f"the stream broke off: {text}",
        "refused": f"cannot connect to {url}: connection refused (is the server running there? {ADDRESS_HINT})",
        "untrusted": f"cannot connect to {url}: its TLS certificate is not trusted ({text}); when a company proxy or "
                     "CA signs it, name that CA's bundle in SSL_CERT_FILE or REQUESTS_CA_BUNDLE",
        "cannot_connect": f"cannot connect to {url}: {_connect_reason(raw)}",
        "failed": f"the request to {model} at {url} failed: {text}",
        "server": f"server error {status} from {url}: {text}",
        "request": f"{url} refused the request for {model} ({status}): {text}" if status is not None
                   else f"the request to {model} at {url} failed: {text}",
    }
    keeps_wait = kind in ("rate_limited", "overloaded", "server")
    return Failure(kind, messages[kind], retry_after if keeps_wait else None)


def connection_kind(raw: str) -> str | None:
    """refused / cannot_connect when the text of a failure says the connection was not made."""
    if not _CONNECT.search(raw):
        return None
    # nothing listens there: waiting will not change that, so no retries
    return "refused" if _REFUSED.search(raw) else "cannot_connect"


def missing_key(raw: str) -> bool:
    return bool(_MISSING_KEY.search(raw))


def chain_text(exc: BaseException) -> str:
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
    return body_message((str(exc).strip() or type(exc).__name__).split(" Original exception")[0])


def body_message(text: str) -> str:
    """The one line to quote from a provider's answer: its JSON error's message (and type), else
    its first line; keys masked."""
    body = _json_body(text)
    if body is not None:
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            kind = error.get("type")
            text = f"{error['message']} ({kind})" if kind and kind not in ("error", "scripted") else error["message"]
        elif isinstance(error, str):
            text = error
        elif isinstance(body.get("message"), str):  # Mistral's {"object": "error", "message": ...}
            text = body["message"]
    text = _NOISE.sub("", text).strip()
    return redact((text.splitlines() or ["no message"])[0][:300])


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
    return header_wait(headers or getattr(exc, "litellm_response_headers", None))


def header_wait(headers: Any) -> float | None:
    """The wait a response's headers ask for: OpenAI's retry-after-ms, else Retry-After (seconds or a date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        if millis is not None:
            return float(millis) / 1000
        return float(value) if value is not None else None
    except ValueError:
        return _http_date_wait(value)


def _http_date_wait(value: str | None) -> float | None:
    """Seconds until a Retry-After given as an HTTP date."""
    import email.utils  # rare: not on every start

    try:
        moment = email.utils.parsedate_to_datetime(value or "")
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time()) if moment is not None else None
