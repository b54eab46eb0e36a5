"""What an untrusted workspace may contribute, field by field, for every kind of file it supplies.

A repository can ship files that coder-tui reads: `.coder-tui.toml`, profiles, the prompt files
they name, `AGENTS.md`. Until the user trusts the folder, such a file contributes text the model
reads (prompts, descriptions, instructions) and settings that cannot hurt (limits, looks), and
nothing that picks an endpoint, a model, a key, a command, an MCP server, the sandbox or an
approval. Each kind lists every field it has with its rule; a field without one is refused, so a
new field is safe until someone decides otherwise. A new kind of file (commands, skills, hooks,
permission rules) is one more `InputKind` in `KINDS`, and the test that walks `KINDS` through an
untrusted folder covers it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MODE_RANK = {"plan": 0, "ask": 1, "allow": 2}
# The tools that run programs on the machine; a profile selector that names or matches one of them
# (`exec`, `*`, `b*`, `?hell_*`) needs trust.
EXEC_TOOLS = ("bash_exec", "shell_open", "shell_exec", "shell_send", "shell_close")
NOT_TRUSTED = "the folder is not trusted; `coder-tui trust DIR` trusts it"


@dataclass(frozen=True)
class Ignored:
    """A workspace setting left out because the folder is not trusted (or a file it named refused)."""

    setting: str  # e.g. mode = 'allow'
    why: str
    file: str
    trust_would_help: bool = True  # False: refused whatever the trust (a file outside the workspace)

    def __str__(self) -> str:
        return f"{self.setting} in {self.file}: {self.why}"


@dataclass(frozen=True)
class Context:
    """What a rule compares against: the mode the user chose (their config, or the default) and
    the settings their own config file gives (`Settings.given()`), which a lower layer may not widen."""

    base_mode: str = "ask"
    user: Mapping[str, Any] = field(default_factory=dict)


_DROP = object()


class Rule:
    """How one field of an untrusted file is treated: `check` gives (the value kept, or _DROP; why not)."""

    kind = "rule"

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        return value, None


class Text(Rule):
    """Text the model reads (a prompt, a description, instructions): always kept."""

    kind = "text"


class Harmless(Rule):
    """A limit or a look (max_steps, theme): cannot reach a key, a file or a program."""

    kind = "harmless"


class FileName(Rule):
    """A file whose text the model reads: kept, and read inside the workspace only (files.py)."""

    kind = "file"


class NeedsTrust(Rule):
    kind = "needs trust"

    def __init__(self, why: str) -> None:
        self.why = why

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        return _DROP, self.why


class StricterMode(Rule):
    """An approval mode: an untrusted file may make approvals stricter, never looser."""

    kind = "stricter mode"

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        if value is not None and MODE_RANK.get(value, 3) > MODE_RANK.get(ctx.base_mode, 1):
            return _DROP, f"it would raise the mode above {ctx.base_mode}"
        return value, None


def executing(selector: str) -> bool:
    """Whether a profile's tool selector picks a tool that runs programs (by kind, name or glob)."""
    return selector == "exec" or any(fnmatch.fnmatchcase(name, selector) for name in EXEC_TOOLS)


class ToolsWithoutExec(Rule):
    """Tool selectors: those that pick a tool that runs programs (exec, `*`, a shell tool's name or
    any glob matching one) need trust."""

    kind = "tools"

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        kept = [item for item in value if not executing(str(item))]
        if len(kept) == len(value):
            return value, None
        return kept, "it would let the model run commands on your machine"


class Limit(Rule):
    """A limit (steps, cost, tokens): a lower layer may set one where the user's config sets none,
    or lower the user's; never raise it."""

    kind = "limit"

    def __init__(self, key: str) -> None:
        self.key = key

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        mine = ctx.user.get(self.key)
        if mine is None or value is None or value <= mine:
            return value, None
        return _DROP, f"it would raise the limit your config sets ({self.key} = {mine!r})"


class ToolLimits(Rule):
    """`[tools.NAME]`: a lower layer may turn a tool off or lower its default timeout; it may not
    turn on a tool the user's config turns off, nor raise a timeout the user's config sets."""

    kind = "tool limits"

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        mine = ctx.user.get("tools") or {}
        kept: dict[str, Any] = {}
        why: list[str] = []
        for name, table in dict(value).items():
            user = mine.get(name) or {}
            table = dict(table)
            if table.get("enabled") is True and user.get("enabled") is False:
                table.pop("enabled")
                why.append("it would turn on a tool your config turns off")
            if None not in (table.get("timeout"), user.get("timeout")) and table["timeout"] > user["timeout"]:
                table.pop("timeout")
                why.append("it would raise a tool timeout your config sets")
            if table:
                kept[name] = table
        return (value, None) if not why else (kept, "; ".join(dict.fromkeys(why)))


class TighterRules(Rule):
    """Permission rules: an untrusted file may add `deny` and `ask` rules (they only ask more or
    refuse), never `allow` (it would skip your approval)."""

    kind = "tighter rules"

    def check(self, value: Any, ctx: Context) -> tuple[Any, str | None]:
        if not isinstance(value, dict) or not value.get("allow"):
            return value, None
        return {k: v for k, v in value.items() if k != "allow"}, "it would run tools without asking you"


@dataclass(frozen=True)
class InputKind:
    """One kind of file a workspace supplies: where it is, its schema, and a rule for every field."""

    name: str
    where: str  # relative to the workspace root (a glob for folders of files)
    schema: str  # "module:Class" of its pydantic model ("" for plain text)
    fields: Mapping[str, Rule]


HOOKS_WHY = "hooks are commands the file would run on your machine"
MODEL_WHY = "it would choose the model, and with it where your key and code are sent"
CONFIG = InputKind("workspace config", ".coder-tui.toml", "agent.config:Settings", {
    "model": NeedsTrust(MODEL_WHY),
    "small_model": NeedsTrust(MODEL_WHY),
    "fallback_models": NeedsTrust(MODEL_WHY),
    "api_base": NeedsTrust("it would change where your API key and code are sent"),
    "api_key": NeedsTrust("it would send your prompts and code to an account the file chooses"),
    "github_token": NeedsTrust("tokens belong in your own config"),
    "github_api_url": NeedsTrust("it would change where your GitHub token is sent"),
    "sandbox": NeedsTrust("it would change how shell commands are confined"),
    "sandbox_network": NeedsTrust("it would give shell commands network access"),
    "shell_env": NeedsTrust("it would pass your environment variables to shell commands"),
    "sandbox_sockets": NeedsTrust("it would let shell commands reach sockets of your system"),
    "room": NeedsTrust("only your own config decides what room participants may make the agent do"),
    "fleet": NeedsTrust("only your own config chooses the fleet's broker and its workers' limits"),
    "trusted_folders": NeedsTrust("only your own config can trust folders"),
    "folder_trust": NeedsTrust("only your own config can trust folders"),
    "mcp_servers": NeedsTrust("MCP servers are programs the file would start on your machine"),
    "lsp": NeedsTrust("language servers are programs the file would start on your machine"),
    "profile": NeedsTrust("it would choose the agent's tools and mode"),
    "keymap": NeedsTrust("it would rebind keys, approvals included"),
    "reasoning": NeedsTrust("it would change how much each request thinks, and costs"),
    "model_path": NeedsTrust("it would choose the library your requests and API key go through"),
    "mode": StricterMode(),
    "permissions": TighterRules(),
    "hooks": NeedsTrust(HOOKS_WHY),
    "max_steps": Limit("max_steps"), "max_cost": Limit("max_cost"), "max_tokens": Limit("max_tokens"),
    "max_subagents": Limit("max_subagents"),
    "timeout": Harmless(), "max_retries": Harmless(), "theme": Harmless(),
    "context_window": Harmless(), "tool_calling": Harmless(), "map_tokens": Harmless(), "workflow": Harmless(),
    "tools": ToolLimits(),  # per tool: turn one off, or lower its default timeout (never a new power)
    "vision": Harmless(), "notifications": Harmless(),  # a request refused, a notice shown: no program named
    "host": Harmless(),  # `run` reads it from your own config.toml only (agent/frontends/hostrun.py)
})
PROFILE = InputKind("profile", ".coder-tui/profiles/*.toml", "agent.profiles:Profile", {
    "name": Text(), "description": Text(), "system_prompt": Text(),
    "system_prompt_file": FileName(),
    "agent": Harmless(),  # iterative, stream or react: how the same tools are called
    "tools": ToolsWithoutExec(),
    "mode": StricterMode(),
    "model": NeedsTrust(MODEL_WHY),
    "small_model": NeedsTrust(MODEL_WHY),
    "max_steps": Harmless(), "max_cost": Harmless(), "max_tokens": Harmless(),
    "save_code_blocks": Harmless(),  # each file still goes through the approval the mode asks for
})
INSTRUCTIONS = InputKind("instructions", "AGENTS.md", "", {"text": Text()})
# Commands and skills of an untrusted folder are not loaded at all (agent/custom): a command's
# `model` and tools, a skill's instructions the model follows on its own, come from whoever wrote them.
COMMAND_WHY = "the folder's commands are loaded once you trust it"
COMMANDS = InputKind("commands", ".coder-tui/commands/**/*.md", "agent.custom.commands:CommandFile", {
    key: NeedsTrust(COMMAND_WHY) for key in ("description", "argument_hint", "model", "allowed_tools", "body")})
SKILL_WHY = "the folder's skills are loaded once you trust it"
SKILLS = InputKind("skills", ".agents/skills/*/SKILL.md", "agent.custom.skills:SkillFile", {
    key: NeedsTrust(SKILL_WHY) for key in ("name", "description", "license", "compatibility", "metadata",
                                           "allowed_tools", "body")})
CLAUDE_SETTINGS = InputKind("Claude Code settings", ".claude/settings*.json", "agent.permissions.claude:ClaudeSettings", {
    "permissions": TighterRules(),
    "hooks": NeedsTrust(HOOKS_WHY),
})
KINDS: tuple[InputKind, ...] = (CONFIG, PROFILE, INSTRUCTIONS, COMMANDS, SKILLS, CLAUDE_SETTINGS)
UNKNOWN = NeedsTrust("coder-tui does not know what it does")


def show(key: str, value: Any) -> str:
    """`key = value` for a notice; secrets and tables are not spelled out."""
    if key in ("api_key", "github_token") or type(value).__name__ == "SecretStr":
        return f"{key} = (hidden)"
    if isinstance(value, dict):
        return f"{key} ({', '.join(map(str, value)) or 'empty'})"
    return f"{key} = {value!r}"


def screen(kind: InputKind, values: Mapping[str, Any], source: str, ctx: Context,
           trusted: bool = False) -> tuple[dict[str, Any], list[Ignored]]:
    """The fields of one file that apply, and what was left out with why (nothing when trusted)."""
    if trusted:
        return dict(values), []
    kept: dict[str, Any] = {}
    ignored: list[Ignored] = []
    for key, value in values.items():
        result, why = kind.fields.get(key, UNKNOWN).check(value, ctx)
        if why is not None:
            dropped = [v for v in value if v not in result] if result is not _DROP and isinstance(value, list) else value
            parts = [(key, dropped)]
            if result is not _DROP and isinstance(value, dict):  # a table kept in part: name what was not
                parts = [(f"{key}.{k}", v) for k, v in value.items() if result.get(k) != v] or parts
            ignored.extend(Ignored(show(name, part), why, source) for name, part in parts)
        if result is not _DROP:
            kept[key] = result
    return kept, ignored


def notices(items: Iterable[Ignored]) -> list[str]:
    """One line per item left out, as front ends show them."""
    return [f"ignored {item}" + (f" ({NOT_TRUSTED})" if item.trust_would_help else "") for item in items]
