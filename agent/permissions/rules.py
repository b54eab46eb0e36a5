"""One permission rule, as users write it, parsed and matched against a tool call.

    bash_exec                      every call of the tool
    mcp__github__*                 every tool whose name matches the glob
    bash_exec(git status)          exactly this command
    bash_exec(npm test:*)          this command, with or without more arguments (a word prefix)
    read_file(./secrets/**)        a file whose path (relative to the workspace) matches the glob
    web_fetch(domain:docs.python.org)   a page on this host (`*.python.org`: its subdomains)

Claude Code's names are read as ours: Bash, Read, Edit, Write, WebFetch (and `Bash(npm test:*)`).
A command rule is matched part by part (agent/permissions/shell.py): `allow` needs every part of
a compound line to be allowed; `deny` and `ask` apply when any part matches. A rule naming
`bash_exec` also denies or asks `shell_exec` (the same commands in a persistent shell), never allows it.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agent.permissions.shell import split_command

COMMAND_TOOLS = ("bash_exec", "shell_exec")
EDIT_TOOLS = ("write_file", "patch_file", "multi_edit", "replace_lines", "insert_at_line", "delete_lines")
PATH_TOOLS = ("read_file", "get_line_range", "list_dir", *EDIT_TOOLS)
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "Bash": ("bash_exec",), "Read": ("read_file", "get_line_range"), "Edit": EDIT_TOOLS,
    "Write": ("write_file",), "MultiEdit": ("multi_edit",), "WebFetch": ("web_fetch",),
    "Glob": ("list_dir",), "Grep": ("search_code",), "LS": ("list_dir",),
}
RULE = re.compile(r"^\s*([A-Za-z0-9_*?\[\]\-.]+)\s*(?:\((.*)\))?\s*$", re.S)


class RuleError(ValueError):
    """A rule that cannot be used; the message says why."""


@dataclass(frozen=True)
class Rule:
    text: str  # as written
    tools: tuple[str, ...]  # tool names or globs
    kind: str  # "any" | "exact" | "prefix" | "glob" | "path" | "domain"
    value: str = ""

    def names(self, tool: str, tightening: bool) -> bool:
        """Whether the rule is about `tool` (a deny or ask rule on bash_exec covers shell_exec and shell_send too)."""
        tools = self.tools + (("shell_exec", "shell_send") if tightening and "bash_exec" in self.tools else ())
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in tools)

    def command(self, part: str) -> bool:
        if self.kind == "exact":
            return part == self.value
        if self.kind == "prefix":
            return part == self.value or part.startswith(self.value + " ")
        return fnmatch.fnmatchcase(part, self.value)

    def path(self, path: str) -> bool:
        """`*` stays in one folder, `**` crosses folders, `dir/**` is the folder and all below it;
        a pattern without `/` matches the file name at any depth (as in .gitignore)."""
        if "/" not in self.value:
            return glob_regex(self.value).fullmatch(path.rsplit("/", 1)[-1]) is not None
        if self.value.endswith("/**") and path == self.value[:-3]:
            return True
        return glob_regex(self.value).fullmatch(path) is not None

    def host(self, url: str) -> bool:
        try:
            host = (urlsplit(url).hostname or "").lower().rstrip(".")
        except ValueError:
            return False
        return fnmatch.fnmatchcase(host, self.value)


def glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i])))
            i += 1
    return re.compile("".join(out), re.S)


def parse(text: str) -> Rule:
    """A rule from its written form; RuleError with the reason when it cannot be used."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("a rule is a non-empty string such as bash_exec(npm test:*)")
    found = RULE.match(text)
    if found is None:
        raise RuleError("write TOOL or TOOL(SPECIFIER), e.g. bash_exec(git status) or read_file(./docs/**)")
    name, spec = found.group(1), found.group(2)
    tools = CLAUDE_NAMES.get(name, (name,))
    if spec is None or spec.strip() in ("", "*", ":*"):
        return Rule(text, tools, "any")
    spec = spec.strip()
    if all(t in COMMAND_TOOLS for t in tools):
        return _command_rule(text, tools, spec)
    if all(t in PATH_TOOLS for t in tools):
        return Rule(text, tools, "path", _path_pattern(spec))
    if tools == ("web_fetch",):
        if not spec.startswith("domain:") or not spec[7:].strip():
            raise RuleError("web_fetch rules name a host: web_fetch(domain:docs.python.org)")
        return Rule(text, tools, "domain", spec[7:].strip().lower())
    raise RuleError(f"{name} takes no specifier; write the bare tool name (or a name glob)")


def _command_rule(text: str, tools: tuple[str, ...], spec: str) -> Rule:
    split = split_command(spec.removesuffix(":*"))
    if len(split.parts) != 1 or split.opaque:
        raise RuleError("a command rule names one simple command (no &&, ;, |, $(...) or redirection); "
                        "write one rule per command")
    if spec.endswith(":*"):
        return Rule(text, tools, "prefix", split.parts[0])
    if "*" in spec:
        return Rule(text, tools, "glob", " ".join(spec.split()))
    return Rule(text, tools, "exact", split.parts[0])


def _path_pattern(spec: str) -> str:
    if spec.startswith(("/", "~")) or "\\" in spec:
        raise RuleError("file rules are paths relative to the workspace (./src/** or src/**); "
                        "the file tools never reach files outside it")
    parts = [p for p in spec.split("/") if p not in ("", ".")]
    if ".." in parts or not parts:
        raise RuleError("file rules are paths inside the workspace (no `..`)")
    return "/".join(parts)


def tool_paths(tool: str, args: dict[str, Any]) -> list[str]:
    """The workspace paths a call reads or changes (as the model wrote them)."""
    if tool == "multi_edit":
        return [str(e.get("file_path", "")) for e in args.get("edits") or [] if isinstance(e, dict)]
    for key in ("file_path", "path"):
        if isinstance(args.get(key), str):
            return [args[key]]
    return []


def narrowest(tool: str, args: dict[str, Any], paths: list[str]) -> list[str]:
    """The narrowest rules that would allow this very call (empty: no rule can; see `why_not`)."""
    if tool in COMMAND_TOOLS:
        split = split_command(str(args.get("command") or ""))
        return [] if split.opaque else [f"{tool}({part})" for part in dict.fromkeys(split.parts)]
    if tool in PATH_TOOLS and paths:
        return [f"{tool}(./{path})" for path in dict.fromkeys(paths)]
    if tool == "web_fetch":
        try:
            host = urlsplit(str(args.get("url") or "")).hostname
        except ValueError:
            host = None
        return [f"web_fetch(domain:{host})"] if host else []
    return [tool]
