"""One config object: command-line flags > environment > workspace `.coder-tui.toml` > user config.

Loading is cheap (no litellm). Errors name the file, key, flag or variable to fix.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from agent import paths
from agent.events import Mode

WORKSPACE_FILE = ".coder-tui.toml"

# provider prefix -> the variable litellm reads for its key
PROVIDER_KEY_VARS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "xai": "XAI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "azure": "AZURE_API_KEY",
}
# Used when no model is configured but a provider key is present (first match wins).
DEFAULT_MODELS: list[tuple[str, str]] = [
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-4.1"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-pro"),
    ("OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5"),
]
KEYLESS_PROVIDERS = {"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "llamafile"}


class ConfigError(Exception):
    """Bad or missing configuration; the message names what to fix."""


class Settings(BaseModel):
    """Keys accepted in config files (all optional there)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    api_base: str | None = None
    api_key: SecretStr | None = None
    mode: Mode | None = None
    max_steps: int | None = Field(default=None, ge=1, le=10_000)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0, le=20)
    theme: str | None = None
    github_token: SecretStr | None = None  # used when GITHUB_TOKEN, GH_TOKEN and `gh auth token` give none
    github_api_url: str | None = None  # GitHub Enterprise: https://HOST/api/v3
    keymap: dict[str, str] | None = None  # the app's binding id -> keys, e.g. {"app.quit" = "ctrl+x"}
    small_model: str | None = None  # file summaries for the codebase map (default: `model`)
    map_tokens: int | None = Field(default=None, ge=0, le=64_000)  # the prompt's map section; 0 leaves it out


@dataclass
class Config:
    model: str | None = None
    api_base: str | None = None
    api_key: SecretStr | None = None
    mode: Mode = "ask"
    max_steps: int = 50
    timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    theme: str | None = None
    github_token: SecretStr | None = None
    github_api_url: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    small_model: str | None = None
    map_tokens: int = 1024
    sources: dict[str, str] = field(default_factory=dict)  # key -> where it came from

    def require_model(self) -> str:
        if not self.model:
            raise ConfigError(
                "no model configured: pass --model, set CODER_TUI_MODEL, or set `model` in "
                f"{paths.user_config_file()} (e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, "
                "ollama_chat/qwen2.5-coder with --api-base http://localhost:11434)"
            )
        return self.model

    def key_variable(self) -> str | None:
        """The environment variable litellm reads for this model's key, when known."""
        return PROVIDER_KEY_VARS.get(provider_of(self.model or ""))


def provider_of(model: str) -> str:
    if "/" in model:
        return model.split("/", 1)[0]
    if model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    if model.startswith("claude"):
        return "anthropic"
    if model.startswith("gemini"):
        return "gemini"
    return ""


def read_settings(path: Path) -> Settings:
    """Parse and validate one TOML config file (missing file: empty settings)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ConfigError(f"{path}: key `{key}`: {first['msg']}") from None


def _env_settings(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, var in (("model", "CODER_TUI_MODEL"), ("api_base", "CODER_TUI_API_BASE"),
                     ("api_key", "CODER_TUI_API_KEY"), ("mode", "CODER_TUI_MODE")):
        if environ.get(var):
            values[key] = environ[var]
    if values.get("mode") not in (None, "plan", "ask", "allow"):
        raise ConfigError(f"CODER_TUI_MODE must be plan, ask or allow (got {values['mode']!r})")
    return values


def load_config(
    workspace: Path | None = None,
    flags: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Config:
    """Merge the layers; later layers in `layers` override earlier ones."""
    environ = dict(os.environ) if environ is None else environ
    user_file = paths.user_config_file()
    layers: list[tuple[str, dict[str, Any]]] = [
        (str(user_file), read_settings(user_file).model_dump(exclude_none=True)),
    ]
    if workspace is not None:
        ws_file = workspace / WORKSPACE_FILE
        layers.append((str(ws_file), read_settings(ws_file).model_dump(exclude_none=True)))
    layers.append(("environment", _env_settings(environ)))
    layers.append(("command line", {k: v for k, v in (flags or {}).items() if v is not None}))
    config = Config()
    for source, values in layers:
        for key, value in values.items():
            if key == "api_key" and not isinstance(value, SecretStr):
                value = SecretStr(str(value))
            setattr(config, key, value)
            config.sources[key] = source
    _apply_provider_env(config, environ)
    return config


def _apply_provider_env(config: Config, environ: dict[str, str]) -> None:
    """Provider variables outrank config files: let litellm read them itself."""
    if not config.model:
        for var, model in DEFAULT_MODELS:
            if environ.get(var):
                config.model = model
                config.sources["model"] = f"default for {var}"
                break
    var = config.key_variable()
    explicit = ("environment", "command line")
    if var and environ.get(var) and config.sources.get("api_key") not in explicit:
        config.api_key = None
        config.sources["api_key"] = var


def save_user_settings(updates: dict[str, Any]) -> Path:
    """Merge updates into the user config file (0600 when it holds a key)."""
    import tomli_w

    path = paths.user_config_file()
    current = read_settings(path).model_dump(exclude_none=True)
    for key, value in updates.items():
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value
    plain = {k: (v.get_secret_value() if isinstance(v, SecretStr) else v) for k, v in current.items()}
    Settings.model_validate(plain)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(tomli_w.dumps(plain).encode("utf-8"))
    os.replace(tmp, path)
    return path
