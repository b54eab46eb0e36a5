"""The approval's "allow from now on": the narrowest rule that allows this very call, shown before it
is saved, and where it will be saved (the user's config.toml; `w` switches to the workspace's
.coder-tui.toml). `r` saves it (agent/permissions/store.py), applies it to the session and allows
the call once. A call no rule can vouch for (`echo $(curl …)`) says so instead of offering one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Static

from agent.approval import ApprovalRequest
from agent.permissions.rules import narrowest, tool_paths
from agent.textsafe import line

DEFAULT_CSS = """
RuleOffer {
    height: auto;
    #approval-rule-text { width: 1fr; color: $text-muted; }
}
"""


def offered_rules(request: ApprovalRequest) -> list[str]:
    """The rules that would allow this call and no other (one per command of a compound line)."""
    paths = [c.path for c in request.changes] or [
        "/".join(part for part in p.split("/") if part not in ("", ".")) for p in tool_paths(request.tool, request.args)]
    return narrowest(request.tool, request.args, paths)


class RuleOffer(Horizontal):
    DEFAULT_CSS = DEFAULT_CSS

    def __init__(self, request: ApprovalRequest, *, id: str | None = "approval-rule") -> None:
        super().__init__(id=id)
        self.request = request
        self.rules = offered_rules(request)
        self.in_workspace = False

    def compose(self) -> ComposeResult:
        self.rules = [rule for rule in self.rules if not self._allowed(rule)] or self.rules
        yield Static(self._text(), id="approval-rule-text")
        if self.rules:
            button = Button("Always allow (r)", compact=True, id="approval-allow-always")
            button.can_focus = False
            yield button

    def _allowed(self, rule: str) -> bool:
        """Whether the session's rules already allow what `rule` names (`ls` under `ls:*`)."""
        from agent.permissions.rules import parse

        rules = getattr(self._screen(), "rules", None)
        parsed = parse(rule)
        if rules is None or parsed.kind != "exact":
            return False
        return rules.decide(self.request.tool, {"command": parsed.value}).action == "allow"

    def _screen(self) -> Any:
        session = getattr(getattr(self.app, "bridge", None), "session", None)
        return session.ctx.extras.get("permissions") if session is not None else None

    def _text(self) -> Content:
        if not self.rules:
            return Content("No lasting rule can allow this call (it runs a command a rule cannot see).")
        where = ".coder-tui.toml (this workspace)" if self.in_workspace else "your config.toml"
        rules = ", ".join(line(rule) for rule in self.rules)
        other = "w: yours" if self.in_workspace else "w: workspace"  # where w saves it instead
        return Content.assemble("From now on: ", (rules, "bold"), f" → {where} ({other})")

    def toggle_target(self) -> None:
        self.in_workspace = not self.in_workspace
        self.query_one("#approval-rule-text", Static).update(self._text())

    def save(self) -> str | None:
        """Write the rules and apply them to the running session; the problem when they are not saved."""
        from agent.permissions import store

        session = getattr(getattr(self.app, "bridge", None), "session", None)
        screen = self._screen()
        root = getattr(getattr(session, "workspace", None), "root", None)
        if self.in_workspace and root is None:
            return "this session has no workspace folder to write to"
        target = Path(root) if self.in_workspace and root is not None else None
        try:
            for rule in self.rules:
                store.add(getattr(screen, "rules", None), "allow", rule, target)
        except (ValueError, OSError) as exc:
            return str(exc)
        return None
