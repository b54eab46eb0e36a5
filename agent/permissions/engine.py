"""The rules in force for a session, and the verdict they give a tool call.

`deny` wins over `ask`, which wins over `allow`; a call no rule names gets no verdict and the
mode decides as before. Plan mode still never writes (the executor checks it first). An `allow`
rule skips the question in ask mode but never grants the network a command asks for; an `ask` rule
asks even in allow mode (and for tools that only read). Each rule remembers the file it came from;
a rule that cannot be parsed is kept out and reported once, with its reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.permissions.rules import COMMAND_TOOLS, PATH_TOOLS, Rule, RuleError, parse, tool_paths
from agent.permissions.shell import split_command

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("deny", "ask", "allow")


@dataclass(frozen=True)
class Entry:
    action: Action
    rule: Rule
    source: str

    def __str__(self) -> str:
        return f"{self.action} {self.rule.text}  ({self.source})"


@dataclass(frozen=True)
class Verdict:
    action: Action | None
    entries: tuple[Entry, ...] = ()

    def reason(self) -> str:
        return ", ".join(f"{e.rule.text} ({e.source})" for e in self.entries)


@dataclass
class Permissions:
    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rules left out, with why (said once)

    @classmethod
    def from_config(cls, config: Any) -> Permissions:
        found = cls()
        settings = getattr(config, "permissions", None)
        sources = getattr(config, "rule_sources", {}) or {}
        for action in ACTIONS:
            for text in getattr(settings, action, None) or []:
                found.add(action, text, sources.get(f"{action} {text}", "config"))
        return found

    def add(self, action: Action, text: str, source: str) -> Entry | None:
        """Parse and add one rule (None, with the problem recorded, when it cannot be used)."""
        try:
            entry = Entry(action, parse(text), source)
        except RuleError as exc:
            self.problems.append(f"permission rule {action} {text!r} in {source} is not used: {exc}")
            return None
        if entry not in self.entries:
            self.entries.append(entry)
        return entry

    def remove(self, text: str) -> list[Entry]:
        gone = [e for e in self.entries if e.rule.text == text]
        self.entries = [e for e in self.entries if e.rule.text != text]
        return gone

    def decide(self, tool: str, args: dict[str, Any], paths: list[list[str]] | None = None) -> Verdict:
        """The rules' verdict on one call. `paths`: per path the call names, every form it has
        (as written, normalized, resolved through links): deny matches any, allow needs all."""
        for action in ("deny", "ask"):
            hits = [e for e in self._of(action, tool, True) if self._touches(e.rule, tool, args, paths)]
            if hits:
                return Verdict(action, tuple(hits))  # type: ignore[arg-type]
        allowed = self._allowed(tool, args, paths)
        return Verdict("allow", allowed) if allowed else Verdict(None)

    def _of(self, action: str, tool: str, tightening: bool) -> list[Entry]:
        return [e for e in self.entries if e.action == action and e.rule.names(tool, tightening)]

    def _touches(self, rule: Rule, tool: str, args: dict[str, Any], paths: list[list[str]] | None) -> bool:
        """Whether a deny/ask rule applies: any command part, any form of any path."""
        if rule.kind == "any":
            return True
        if rule.kind in ("exact", "prefix", "glob") and tool == "shell_send":
            return True  # keys typed into a terminal cannot be checked against a command: the rule covers them all
        if rule.kind in ("exact", "prefix", "glob") and tool in COMMAND_TOOLS:
            line = str(args.get("command") or "")
            return any(rule.command(part) for part in [*split_command(line).parts, " ".join(line.split())])
        if rule.kind == "path" and tool in PATH_TOOLS:
            return any(rule.path(form) for forms in _forms(tool, args, paths) for form in forms)
        if rule.kind == "domain":
            return rule.host(str(args.get("url") or ""))
        return False

    def _allowed(self, tool: str, args: dict[str, Any], paths: list[list[str]] | None) -> tuple[Entry, ...]:
        rules = self._of("allow", tool, False)
        if any(e.rule.kind == "any" for e in rules):
            return tuple(e for e in rules if e.rule.kind == "any")[:1]
        used: list[Entry] = []
        if tool in COMMAND_TOOLS:
            split = split_command(str(args.get("command") or ""))
            if split.opaque or not split.parts:
                return ()
            for part in split.parts:
                hit = next((e for e in rules if e.rule.kind in ("exact", "prefix", "glob") and e.rule.command(part)), None)
                if hit is None:
                    return ()
                used.append(hit)
            return tuple(dict.fromkeys(used))
        if tool in PATH_TOOLS:
            forms = _forms(tool, args, paths)
            for group in forms:
                hit = next((e for e in rules if e.rule.kind == "path" and all(e.rule.path(f) for f in group)), None)
                if hit is None:
                    return ()
                used.append(hit)
            return tuple(dict.fromkeys(used)) if forms else ()
        if tool == "web_fetch":
            return tuple(e for e in rules if e.rule.kind == "domain" and e.rule.host(str(args.get("url") or "")))[:1]
        return ()

    def listing(self) -> list[str]:
        return [str(e) for action in ACTIONS for e in self.entries if e.action == action]


def _forms(tool: str, args: dict[str, Any], paths: list[list[str]] | None) -> list[list[str]]:
    if paths is not None:
        return paths
    return [[_plain(p)] for p in tool_paths(tool, args)]


def _plain(path: str) -> str:
    return "/".join(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))


def call_paths(workspace: Any, tool: str, args: dict[str, Any]) -> list[list[str]]:
    """Every form of every path a call names: normalized by the workspace and, on disk, resolved
    through links (a link into ./secrets is a path in ./secrets)."""
    found: list[list[str]] = []
    root = getattr(workspace, "root", None)
    for path in tool_paths(tool, args):
        forms = [_plain(path)]
        try:
            forms.append(workspace.normalize(path))
            if root is not None and hasattr(workspace, "resolve"):
                real_root = os.path.realpath(root)
                forms.append(os.path.relpath(str(workspace.resolve(path)), real_root).replace(os.sep, "/"))
        except Exception:  # noqa: BLE001 - a path the workspace refuses: the tool says why; rules see it as written
            pass
        found.append(list(dict.fromkeys(f for f in forms if f != ".")) or [""])
    return found
