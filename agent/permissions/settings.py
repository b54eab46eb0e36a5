"""The `[permissions]` and `[[hooks.*]]` tables of a config file, as validated settings.

    [permissions]
    allow = ["bash_exec(npm test:*)", "bash_exec(git status)"]
    ask = ["web_fetch"]
    deny = ["read_file(./secrets/**)"]

    [[hooks.pre_tool_use]]
    match = "bash_exec"            # a tool-name pattern (`a|b` for either); absent: every tool
    command = "./scripts/check.sh" # run by bash in the workspace, in the sandbox
    timeout = 10                   # seconds (default 60)

Rule strings are parsed where they are used (agent/permissions/engine.py), so that a bad rule is
reported with its reason and the rest still apply.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

HOOK_EVENTS = ("pre_tool_use", "post_tool_use", "user_prompt_submit", "stop", "notification")


class PermissionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class HookSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    match: str | None = None
    command: str = Field(min_length=1)
    timeout: float = Field(default=60.0, gt=0, le=3600)
    _source: str = PrivateAttr(default="")
    _claude: bool = PrivateAttr(default=False)  # written for Claude Code: its tool names on stdin


class HookSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pre_tool_use: list[HookSpec] = Field(default_factory=list)
    post_tool_use: list[HookSpec] = Field(default_factory=list)
    user_prompt_submit: list[HookSpec] = Field(default_factory=list)
    stop: list[HookSpec] = Field(default_factory=list)
    notification: list[HookSpec] = Field(default_factory=list)

    def any(self) -> bool:
        return any(getattr(self, name) for name in HOOK_EVENTS)
