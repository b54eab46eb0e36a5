"""What the setup screen decides without drawing anything: whether the app needs it at all (the
same rule `run` follows: agent.llm.routing.keyless_server), which key variables are set, what to export,
and what is wrong with a typed model or address."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlparse

from agent.config import DEFAULT_MODELS, KEYLESS_PROVIDERS, PROVIDER_KEY_VARS, Config, provider_of
from agent.llm.routing import keyless_server

GENERIC_KEY_VAR = "CODER_TUI_API_KEY"
MODEL_EXAMPLES = "anthropic/claude-sonnet-4-5, openai/gpt-4.1"


def needs_setup(config: Config, environ: Mapping[str, str]) -> str | None:
    """Why the app cannot talk to a model with this configuration, or None when it can."""
    model = config.model
    if not model:
        return "no model is configured"
    provider = provider_of(model)
    if not provider:
        return f"litellm cannot tell the provider of model {model!r}"
    var = PROVIDER_KEY_VARS.get(provider)
    # Keyless local servers need nothing; providers we hold no variable for (bedrock, vertex_ai,
    # ...) authenticate in their own ways, so only litellm can tell whether they are set up.
    if provider in KEYLESS_PROVIDERS or var is None or keyless_server(model, config.api_base):
        return None
    has_key = config.api_key is not None and bool(config.api_key.get_secret_value())
    if has_key or environ.get(var) or environ.get(GENERIC_KEY_VAR):
        return None
    return f"{model} needs an API key, and neither {var} nor {GENERIC_KEY_VAR} is set"


def found_key_variables(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(variable, model it would use) for each provider key variable set now: names, never values."""
    order = [var for var, _ in DEFAULT_MODELS]
    defaults = dict(DEFAULT_MODELS)
    found = [(var, defaults.get(var, f"{provider}/<model>"))
             for provider, var in PROVIDER_KEY_VARS.items() if environ.get(var)]
    # load_config picks the first DEFAULT_MODELS entry that is set: list that one first.
    return sorted(found, key=lambda item: order.index(item[0]) if item[0] in order else len(order))


def export_variable(model: str, api_base: str | None) -> str:
    """The variable a key that is not saved should be exported as."""
    var = Config(model=model).key_variable()
    # A key for a proxy or self-hosted server is that server's, not the provider account's;
    # CODER_TUI_API_KEY is read whatever the model is and outranks the provider variables.
    return GENERIC_KEY_VAR if var is None or api_base else var


def model_problem(model: str) -> str | None:
    if not model:
        return "Enter a model, e.g. anthropic/claude-sonnet-4-5."
    if any(ch.isspace() for ch in model):
        return "A model name has no spaces, e.g. anthropic/claude-sonnet-4-5."
    if not provider_of(model):
        return (f"litellm cannot tell the provider of {model!r}: add a prefix such as anthropic/, "
                "ollama_chat/, or openai/ for any OpenAI-compatible server.")
    return None


def url_problem(url: str) -> str | None:
    if not url:
        return None
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return "Use an http:// or https:// address, e.g. http://localhost:11434."
    return None
