"""One config object: command-line flags > environment > workspace `.coder-tui.toml` > user config.

Loading is cheap (no litellm). Errors name the file, key, flag or variable to fix.

A workspace's `.coder-tui.toml` comes with the repository, so it is untrusted: until the user
trusts the folder (`coder-tui trust DIR`, `--trust`, or the app's prompt; remembered in the user
config with the folder's identity, agent/workspace_input/trust.py), what it may set is decided by
agent/workspace_input/policy.py, the one rule for every file a workspace supplies. Settings left
out are listed in `Config.ignored` so that front ends can say so.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from agent import paths, secrets
from agent.events import Mode
from agent.llm.reasoning import LEVELS, Level
from agent.permissions.settings import HookSettings, PermissionSettings
from agent.workspace_input import dotenv, folderfiles
from agent.workspace_input.folderfiles import WORKSPACE_FILE
from agent.workspace_input.merge import Merged, merge
from agent.workspace_input.policy import Ignored

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
Sandbox = Literal["auto", "bwrap", "off"]
Workflow = Literal["auto", "direct", "structured"]
SECRET_VARS = ("CODER_TUI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN")


class ConfigError(Exception):
    """Bad or missing configuration; the message names what to fix."""


class McpServerSettings(BaseModel):
    """`[mcp_servers.NAME]`: a local server (`command`, `args`, `env`) or a remote one (`url`)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    timeout: float = Field(default=30.0, gt=0)  # seconds to start and list tools
    read_only_tools: list[str] = Field(default_factory=list)  # tools that run without asking ("*": all)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if bool(self.command) == bool(self.url):
            raise ValueError("give either `command` (a local server) or `url` (a remote one)")
        return self


class LspServerSettings(BaseModel):
    """`[lsp.NAME]`: a language server (agent/lsp). A table named like a default (`python`,
    `typescript`) changes that default field by field; any other name adds a server."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] | None = Field(default=None, min_length=1)  # the program and its arguments
    patterns: list[str] | None = None  # file names it serves, as globs: ["*.rs"]
    language_id: str | None = None  # the LSP language id of its files (default: from the extension)
    init_options: dict[str, Any] | None = None  # initializationOptions
    settings: dict[str, Any] | None = None  # what it is told for workspace/configuration
    enabled: bool = True
    timeout: float | None = Field(default=None, gt=0, le=600)  # seconds to start, and for each answer


class RoomSettings(BaseModel):
    """`[room]`: what participants of a room may make the agent do (the operator's own prompts
    are not limited). Off by default: the network (web_fetch and other network tools), the
    operator's MCP servers, and scheduled tasks run on the operator's machine and accounts."""

    model_config = ConfigDict(extra="forbid")

    allow_network: bool = False
    allow_mcp: bool = False
    allow_tasks: bool = False
    # who may answer the agent's proposals from the room chat (`@agent yes` / `@agent no ...`):
    # peer names or emails as the room shows them, "*" for everyone; empty: only the operator
    approvers: list[str] = Field(default_factory=list)


class FleetSettings(BaseModel):
    """`[fleet]` (agent/fleet): the broker every fleet command and worker uses (Redis; the
    CODER_TUI_FLEET_BROKER variable wins) and the worker's time limits. A job is stopped at
    `job_timeout`; the broker hands an unacknowledged job to another worker after
    `visibility_timeout` (default: job_timeout + 10 minutes, always longer than a job), so only a
    job whose worker died is run again. An approval waits `approval_wait` seconds, then its job
    parks (`coder-tui fleet approve` resumes it) and the worker takes the next job."""

    model_config = ConfigDict(extra="forbid")

    broker: str | None = None  # redis://HOST:PORT/DB
    job_timeout: float = Field(default=3600.0, gt=0)
    visibility_timeout: float | None = Field(default=None, gt=0)
    approval_wait: float = Field(default=300.0, ge=0)
    restore_interval: float = Field(default=10.0, gt=0)  # how often workers look for jobs to hand on


class ToolSettings(BaseModel):
    """`[tools.NAME]` (seed 003's per-tool configuration): `enabled = false` never offers the tool;
    `timeout` is the seconds a tool with a timeout parameter gets when the model gives none."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    timeout: int | None = Field(default=None, ge=1, le=600)


class FolderTrust(BaseModel):
    """`[folder_trust."PATH"]`: the user's answer for one folder, bound to its identity."""

    model_config = ConfigDict(extra="forbid")

    trusted: bool
    identity: str  # device:inode[:generation] (agent/workspace_input/trust.py)
    confirmed: list[str] | None = None  # what the trust covers (agent/workspace_input/grants.py)


class Settings(BaseModel):
    """Every setting, declared once with its default and bounds. A config file may set any of them
    (`given()` is what it set); `Config` is the merged result that a session runs with."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    api_base: str | None = None
    api_key: SecretStr | None = None
    mode: Mode = "ask"
    max_steps: int = Field(default=50, ge=1, le=10_000)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    theme: str | None = None
    github_token: SecretStr | None = None  # used when GITHUB_TOKEN, GH_TOKEN and `gh auth token` give none
    github_api_url: str | None = None  # GitHub Enterprise: https://HOST/api/v3
    keymap: dict[str, str] = Field(default_factory=dict)  # the app's binding id -> keys, e.g. {"app.quit" = "ctrl+x"}
    sandbox: Sandbox = "auto"  # shell commands in bubblewrap: auto (when it works), bwrap, off
    sandbox_network: bool = False  # shell commands in the sandbox may use the network
    shell_env: list[str] = Field(default_factory=list)  # more variables shell commands get (NAME or PREFIX*)
    sandbox_sockets: list[str] = Field(default_factory=list)  # system sockets (or folders of them) sandboxed commands reach
    trusted_folders: list[str] = Field(default_factory=list)  # older form of folder_trust: paths only
    folder_trust: dict[str, FolderTrust] = Field(default_factory=dict)  # `coder-tui trust`, the app's prompt
    # agent profiles, long sessions, budgets, fallbacks and MCP (agent/profiles, agent/session/setup.py)
    profile: str | None = None
    small_model: str | None = None  # file summaries, page extraction, compaction (default: `model`)
    context_window: int | None = Field(default=None, ge=1000)  # for models litellm does not know
    fallback_models: list[str] = Field(default_factory=list)
    max_cost: float | None = Field(default=None, gt=0)  # USD per run
    max_tokens: int | None = Field(default=None, ge=1)  # per run
    tool_calling: Literal["auto", "native", "text"] = "auto"  # text: the ReAct protocol
    mcp_servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    lsp: dict[str, LspServerSettings] = Field(default_factory=dict)  # language servers (agent/lsp)
    tools: dict[str, ToolSettings] = Field(default_factory=dict)  # per tool: enabled, timeout
    room: RoomSettings = Field(default_factory=RoomSettings)  # what room participants may use
    fleet: FleetSettings = Field(default_factory=FleetSettings)  # the fleet's broker and time limits
    map_tokens: int = Field(default=1024, ge=0, le=64_000)  # the prompt's map section; 0 leaves it out
    max_subagents: int = Field(default=3, ge=1, le=16)  # subagents that run at once (agent/subagents)
    workflow: Workflow = "direct"  # auto (plan when needed), direct (one loop), structured (always plan)
    reasoning: Level = "off"  # the model's reasoning effort (agent/llm/reasoning.py)
    vision: bool | None = None  # the model takes images (None: as litellm's model table says; agent/images.py)
    notifications: Literal["auto", "terminal", "desktop", "off"] = "auto"  # the app's, when unfocused (tui/notify.py)
    host: Literal["auto", "off"] = "auto"  # `run` through a warm session host (docs/host.md)
    model_path: Literal["auto", "litellm"] = "auto"  # litellm: every model through litellm (agent/llm/routing.py)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)  # allow/ask/deny (agent/permissions)
    hooks: HookSettings = Field(default_factory=HookSettings)  # [[hooks.pre_tool_use]] ... (agent/permissions/hooks.py)

    def given(self) -> dict[str, Any]:
        """The settings that were set (in a file: its keys), as plain values."""
        values = self.model_dump(include=self.model_fields_set, exclude_none=True, exclude_unset=True)
        for key in ("permissions", "hooks"):  # tables of lists: the lists that have entries
            if key in values:
                values[key] = {name: items for name, items in values[key].items() if items}
        return values


class Config(Settings):
    """The merged settings (flags > environment > workspace file > user file), and what the merge
    knows besides: where each value came from and what an untrusted workspace file was refused."""

    retry_base_delay: float = 1.0
    workspace_trusted: bool = False  # whether workspace config may run programs or raise the mode
    sources: dict[str, str] = Field(default_factory=dict)  # key -> where it came from
    ignored: list[Ignored] = Field(default_factory=list)  # workspace settings left out, with why
    rule_sources: dict[str, str] = Field(default_factory=dict)  # "allow bash_exec(x)" -> the file it came from

    def require_model(self) -> str:
        if not self.model:
            raise ConfigError(
                "no model configured: pass --model, set CODER_TUI_MODEL, or set `model` in "
                f"{paths.user_config_file()} (e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, "
                "ollama_chat/qwen2.5-coder with --api-base http://localhost:11434); a provider's key "
                "(OPENAI_API_KEY, ANTHROPIC_API_KEY…) in the environment or in the folder's .env, once you "
                "trust the folder (`coder-tui trust DIR`), picks one"
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


def read_settings(path: Path, text: str | None = None) -> Settings:
    """Parse and validate one TOML config file (missing file: empty settings; text: its contents)."""
    try:
        raw = path.read_bytes() if text is None else text.encode("utf-8")
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
        key, problem = first_problem(exc, "(top level)")
        raise ConfigError(f"{path}: key `{key}`: {problem}") from None


def first_problem(exc: ValidationError, whole: str) -> tuple[str, str]:
    """Where a validation error's first problem is (its dotted path, or `whole`) and what it is."""
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]) or whole, first["msg"]


def _env_settings(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, var in (("model", "CODER_TUI_MODEL"), ("api_base", "CODER_TUI_API_BASE"),
                     ("api_key", "CODER_TUI_API_KEY"), ("mode", "CODER_TUI_MODE"),
                     ("reasoning", "CODER_TUI_REASONING"), ("model_path", "CODER_TUI_MODEL_PATH")):
        if environ.get(var):
            values[key] = environ[var]
    if values.get("mode") not in (None, "plan", "ask", "allow"):
        raise ConfigError(f"CODER_TUI_MODE must be plan, ask or allow (got {values['mode']!r})")
    if values.get("reasoning") not in (None, *LEVELS):
        raise ConfigError(f"CODER_TUI_REASONING must be {', '.join(LEVELS)} (got {values['reasoning']!r})")
    if values.get("model_path") not in (None, "auto", "litellm"):
        raise ConfigError(f"CODER_TUI_MODEL_PATH must be auto or litellm (got {values['model_path']!r})")
    return values


def load_config(
    workspace: Path | None = None,
    flags: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
    trust: bool = False,
) -> Config:
    """Merge the layers; later layers in `layers` override earlier ones.

    `trust` trusts the workspace's own file for this load (agent.workspace_input.trust remembers it).
    Read from the real environment, the secrets found are registered for masking and hidden
    from /proc (see `secrets.hide_from_proc`).
    """
    real_environment = environ is None
    environ = dict(os.environ) if environ is None else environ
    user_file = paths.user_config_file()
    user = read_settings(user_file).given()
    layers: list[tuple[str, dict[str, Any]]] = [(str(user_file), user)]
    ignored: list[Ignored] = []
    trusted = False
    dotenv_keys: dict[str, str] = {}
    if workspace is not None:
        found = folderfiles.read(workspace, user)
        trusted = trust or folderfiles.trusted(workspace, user, found)
        if found.broken is not None and trusted:
            raise ConfigError(found.broken)
        layers.extend(found.layers(workspace, trusted))
        ignored = found.ignored
        dotenv_keys = _dotenv(workspace, trusted, ignored)
        environ = {**dotenv_keys, **environ}  # the environment you started coder-tui with wins over the file
    layers.append(("environment", _env_settings(environ)))
    layers.append(("command line", {k: v for k, v in (flags or {}).items() if v is not None}))
    config = _merged(merge(layers), workspace is not None and trusted)
    _apply_provider_env(config, environ, {k for k, v in environ.items() if dotenv_keys.get(k) == v})
    _check_api_base(config)
    config.ignored = ignored
    _register_secrets(config, environ, layers)
    if real_environment:
        secrets.hide_from_proc()
    return config


def _merged(merged: Merged, trusted: bool) -> Config:
    """The merged layers as a validated Config, each hook and rule knowing the file it came from."""
    try:
        config = Config.model_validate({**merged.values, "workspace_trusted": trusted})
    except ValidationError as exc:
        key, problem = first_problem(exc, "(top level)")
        raise ConfigError(f"`{key}` ({merged.sources.get(key.split('.')[0], 'config')}): {problem}") from None
    config.sources, config.rule_sources = merged.sources, merged.rule_sources
    for event, sources in merged.hook_sources.items():
        for spec, source in zip(getattr(config.hooks, event), sources):
            spec._source, spec._claude = source, "/.claude/" in source
    return config


def _check_api_base(config: Config) -> None:
    """An address without a scheme (`127.0.0.1:9`) reaches litellm as a path and fails as "server
    error 500" on every retry: refuse it here, saying where it was set and how to write it."""
    base = (config.api_base or "").strip()
    if not base or re.match(r"^https?://[^/\s]", base):
        return
    source = config.sources.get("api_base", "")
    where = {"command line": "--api-base", "environment": "CODER_TUI_API_BASE"}.get(source, f"`api_base` in {source}")
    fix = f"http://{base}" if "://" not in base else "http://HOST:PORT or https://HOST"
    raise ConfigError(f"{where} {base!r} is not an http(s) address: write it as {fix} (https:// for remote servers)")




def _dotenv(workspace: Path, trusted: bool, ignored: list[Ignored]) -> dict[str, str]:
    """The `*_API_KEY` values of the folder's `.env`: read once the folder is trusted."""
    found, why = dotenv.keys(workspace)
    where = str(workspace / dotenv.FILE)
    if why is not None:
        ignored.append(Ignored("the whole file", why, where, False))
    if found and not trusted:
        ignored.append(Ignored(f"the keys in it ({', '.join(sorted(found))})",
                               "a folder's keys are used once you trust it", where))
        for value in found.values():
            secrets.register(value)  # not used, and never shown either
        return {}
    return found


def _register_secrets(config: Config, environ: dict[str, str], layers: list[tuple[str, dict[str, Any]]]) -> None:
    """Every configured key is masked wherever it would appear, whatever it looks like: those in
    use and those another layer outranks (a config.toml key that OPENAI_API_KEY shadows)."""
    given = [values.get(name) for _, values in layers for name in ("api_key", "github_token")]
    for value in (config.api_key, config.github_token, *given):
        if value is not None:
            secrets.register(value.get_secret_value() if isinstance(value, SecretStr) else str(value))
    for var, value in environ.items():
        if var in SECRET_VARS or var in PROVIDER_KEY_VARS.values() or var.endswith("_API_KEY"):
            secrets.register(value)


def _apply_provider_env(config: Config, environ: dict[str, str], from_file: set[str]) -> None:
    """Provider variables outrank config files: let litellm read them itself (a trusted folder's
    `.env` key, which is not in the process environment, becomes the session's key)."""
    if not config.model:
        for var, model in DEFAULT_MODELS:
            if environ.get(var):
                config.model = model
                config.sources["model"] = f"default for {var}"
                break
    var = config.key_variable()
    explicit = ("environment", "command line")
    if var and environ.get(var) and config.sources.get("api_key") not in explicit:
        config.api_key = SecretStr(environ[var]) if var in from_file else None
        config.sources["api_key"] = f"{var} in .env" if var in from_file else var


def save_user_settings(updates: dict[str, Any]) -> Path:
    """Merge updates into the user config file (0600 when it holds a key)."""
    import tomli_w

    path = paths.user_config_file()
    current = read_settings(path).given()
    for key, value in updates.items():
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value
    plain = {k: (v.get_secret_value() if isinstance(v, SecretStr) else v) for k, v in current.items()}
    Settings.model_validate(plain)
    paths.private_dir(path.parent)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(tomli_w.dumps(plain).encode("utf-8"))
    os.replace(tmp, path)
    return path
