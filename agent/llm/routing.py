"""Which path a model takes: one of the three built-in clients, or litellm.

    route("anthropic/claude-sonnet-4-5")     -> anthropic, https://api.anthropic.com, ANTHROPIC_API_KEY
    route("openai/gpt-4.1")                  -> chat (OpenAI Chat Completions)
    route("openai/responses/gpt-4.1")        -> responses (OpenAI Responses), as is every model whose
                                                facts say mode "responses" (openai/gpt-5-codex)
    route("ollama_chat/qwen2.5-coder")       -> chat at http://localhost:11434/v1, no key needed
    route("bedrock/anthropic.claude-...")    -> litellm (imported then, and only then)

A provider prefix in PROVIDERS goes to the built-in client named there, with its default address
(or the one in its address variable, or --api-base) and its key variable. Every other prefix goes
to litellm, as does every model when the user chooses it (`model_path = "litellm"` in the config,
CODER_TUI_MODEL_PATH=litellm). Gemini goes to litellm's native adapter unless its address is
Gemini's OpenAI-compatible endpoint (an api_base ending in /openai).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

Protocol = Literal["chat", "anthropic", "responses", "litellm"]
PATHS = ("auto", "litellm")
PATH_VARIABLE = "CODER_TUI_MODEL_PATH"
OPENAI_TOOL_LIMIT = 128  # OpenAI refuses a request with more tools ("array_above_max_length")


@dataclass(frozen=True)
class Provider:
    protocol: Protocol
    base: str | None  # the default address (None: the user names it)
    key_variable: str | None
    base_variables: tuple[str, ...] = ()  # variables that name its address, as litellm reads them
    keyless: bool = False  # a local server or a proxy: a request goes without a key when none is set
    max_tools: int | None = OPENAI_TOOL_LIMIT
    version_path: str = ""  # appended to an address given without it (Ollama's OpenAI API is at /v1)
    stream_usage: bool = True  # takes stream_options.include_usage (Mistral refuses unknown fields)


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("chat", "https://api.openai.com/v1", "OPENAI_API_KEY", ("OPENAI_BASE_URL", "OPENAI_API_BASE")),
    "anthropic": Provider("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
                          ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"), max_tools=None),
    "openrouter": Provider("chat", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", ("OPENROUTER_API_BASE",)),
    "ollama": Provider("chat", "http://localhost:11434", "OLLAMA_API_KEY", ("OLLAMA_API_BASE",), keyless=True,
                       version_path="/v1"),
    "ollama_chat": Provider("chat", "http://localhost:11434", "OLLAMA_API_KEY", ("OLLAMA_API_BASE",), keyless=True,
                            version_path="/v1"),
    "lm_studio": Provider("chat", "http://localhost:1234/v1", "LM_STUDIO_API_KEY", ("LM_STUDIO_API_BASE",),
                          keyless=True),
    "hosted_vllm": Provider("chat", None, "HOSTED_VLLM_API_KEY", ("HOSTED_VLLM_API_BASE",), keyless=True),
    "llamafile": Provider("chat", "http://127.0.0.1:8080/v1", "LLAMAFILE_API_KEY", ("LLAMAFILE_API_BASE",),
                          keyless=True),
    "groq": Provider("chat", "https://api.groq.com/openai/v1", "GROQ_API_KEY", ("GROQ_API_BASE",)),
    "deepseek": Provider("chat", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", ("DEEPSEEK_API_BASE",)),
    "together_ai": Provider("chat", "https://api.together.xyz/v1", "TOGETHERAI_API_KEY", ("TOGETHERAI_API_BASE",)),
    "mistral": Provider("chat", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", ("MISTRAL_API_BASE",),
                        stream_usage=False),
    "xai": Provider("chat", "https://api.x.ai/v1", "XAI_API_KEY", ("XAI_API_BASE",)),
    "litellm_proxy": Provider("chat", None, "LITELLM_PROXY_API_KEY", ("LITELLM_PROXY_API_BASE",), keyless=True),
}
# Gemini's OpenAI-compatible endpoint, taken when the address given is it (…/v1beta/openai)
GEMINI_OPENAI = Provider("chat", None, "GEMINI_API_KEY", ())
LITELLM = Provider("litellm", None, None, (), max_tools=OPENAI_TOOL_LIMIT)
DESCRIPTIONS = {"chat": "built-in OpenAI Chat Completions client", "anthropic": "built-in Anthropic Messages client",
                "responses": "built-in OpenAI Responses client", "litellm": "litellm (its adapter for this provider)"}


@dataclass(frozen=True)
class Route:
    protocol: Protocol
    provider: str  # the model string's provider prefix ("openai" for a bare gpt-4.1)
    model: str  # the name sent to the API
    base: str | None  # the address requests go to (None on the litellm path: litellm decides)
    settings: Provider

    @property
    def key_variable(self) -> str | None:
        return self.settings.key_variable

    @property
    def max_tools(self) -> int | None:
        return self.settings.max_tools

    @property
    def builtin(self) -> bool:
        return self.protocol != "litellm"

    def describe(self) -> str:
        """The path as a user reads it: `built-in Anthropic Messages client at https://...`."""
        where = f" at {self.base}" if self.base else ""
        return f"{DESCRIPTIONS[self.protocol]}{where}"

    def url(self, path: str) -> str:
        """The address of `path` (`/chat/completions`, `/messages`, `/responses`) at this route's base."""
        base = (self.base or "").rstrip("/")
        if self.protocol == "anthropic":
            if base.endswith("/v1/messages"):
                return base
            return f"{base}{path}" if base.endswith("/v1") else f"{base}/v1{path}"
        version = self.settings.version_path
        if version and not base.endswith(version):
            base += version
        return f"{base}{path}"


def provider_prefix(model: str) -> str:
    """The provider of a model string: its prefix, or the one a bare name implies (gpt-4.1, claude-...)."""
    if "/" in model:
        return model.split("/", 1)[0].lower()
    if model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt", "codex-")):
        return "openai"
    if model.startswith("claude"):
        return "anthropic"
    return ""


def chosen_path(setting: str | None = None) -> str:
    """The user's choice of path: the setting given, else CODER_TUI_MODEL_PATH, else "auto"."""
    value = (setting or os.environ.get(PATH_VARIABLE) or "auto").strip().lower()
    return value if value in PATHS else "auto"


def route(model: str, api_base: str | None = None, path: str | None = None) -> Route:
    """The route of `model` (with the address the user gave, and their choice of path)."""
    prefix = provider_prefix(model)
    name = model.split("/", 1)[1] if "/" in model else model
    if chosen_path(path) == "litellm":
        return Route("litellm", prefix, model, api_base, LITELLM)
    settings = PROVIDERS.get(prefix)
    if prefix == "gemini" and api_base and api_base.rstrip("/").endswith("/openai"):
        settings = GEMINI_OPENAI
    if settings is None:
        return Route("litellm", prefix, model, api_base, LITELLM)
    protocol = settings.protocol
    if prefix == "openai" and name.startswith("responses/"):
        protocol, name = "responses", name.removeprefix("responses/")
    elif prefix == "openai" and _facts_mode(model) == "responses":
        protocol = "responses"
    base = api_base or next((os.environ[v] for v in settings.base_variables if os.environ.get(v)), None) or settings.base
    return Route(protocol, prefix, name, base, settings)


def _facts_mode(model: str) -> str | None:
    from agent.llm.facts import facts

    return facts(model).mode


def keyless_server(model: str, api_base: str | None = None) -> bool:
    """A request for `model` needs no key: a local server or a proxy (Ollama, LM Studio, vLLM, ...),
    or an OpenAI-compatible server at an address of the user's own (`openai/NAME` with an API base;
    a server that wants a key answers 401, which says so). One rule for the requests and the app's
    setup check."""
    found = route(model, api_base)
    return found.settings.keyless or (found.provider == "openai" and found.base != found.settings.base)


def needs_litellm(model: str, api_base: str | None = None, path: str | None = None) -> bool:
    """Whether requests for `model` go through litellm (which must then be imported)."""
    return not route(model, api_base, path).builtin
