"""Custom slash commands: Markdown files whose name is the command and whose body is the prompt.

Found in the workspace's `.coder-tui/commands/` and `.claude/commands/` (only when the folder is
trusted), the user config folder's `commands/` and `~/.claude/commands/`; a file in a subfolder is
`folder:name`, as Claude Code names it. Front matter (all optional): `description`,
`argument-hint`, `model` (the model for that turn), `allowed-tools` (the turn is offered only these
tools; approvals still ask). The body is the prompt: `$ARGUMENTS` is everything typed after the
name, `$1`…`$9` its words; arguments a body does not use are added at its end.

A name a built-in command of the app has stays the built-in's (said once); so does a name found
earlier (workspace before user, coder-tui's folder before Claude Code's). A file that cannot be read
or whose front matter is wrong is left out with the reason, said once by the session.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from agent.custom.frontmatter import FrontMatterError, parse, text_list

# The app's own commands (tui/commands.py HANDLERS; a test keeps them equal): a custom command cannot take these.
BUILTIN = frozenset({"attach", "plan", "mode", "model", "profile", "compact", "undo", "allowances", "clear", "new",
                     "sessions", "resume", "theme", "pr", "setup", "help", "quit", "exit", "map", "explore",
                     "memory", "reasoning", "rewind", "fork", "permissions", "repo", "goal", "live"})
WORKSPACE_FOLDERS = (".coder-tui/commands", ".claude/commands")
FILE_CAP = 64 * 1024
MAX_FILES = 500
MAX_DEPTH = 4
NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(:[A-Za-z0-9][\w.-]*)*$")
TYPED = re.compile(r"^/(\S+)\s*(.*)$", re.DOTALL)
POSITIONAL = re.compile(r"\$([1-9])(?!\d)")
STRINGS = ("description", "argument-hint", "model")


class CommandFile(BaseModel):
    """The fields of a command file (the schema agent/workspace_input/policy.py's COMMANDS rules)."""

    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: list[str] = []
    body: str = ""


@dataclass(frozen=True)
class Command:
    name: str
    file: CommandFile
    source: str  # "workspace" or "user"
    path: str  # shown to the user

    @property
    def description(self) -> str:
        return self.file.description or _first_line(self.file.body)

    def expand(self, arguments: str) -> str:
        """The body with `$ARGUMENTS` and `$1`…`$9` filled in."""
        body = self.file.body
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words
            words = arguments.split()
        used = "$ARGUMENTS" in body or POSITIONAL.search(body) is not None
        text = body.replace("$ARGUMENTS", arguments)
        text = POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", text)
        if arguments.strip() and not used:
            text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
        return text.strip()


@dataclass
class Expansion:
    """A typed `/name args` made into the turn's prompt, with the command's model and tools."""

    command: Command
    prompt: str
    model: str | None
    tools: list[str] = field(default_factory=list)


@dataclass
class CommandSet:
    commands: dict[str, Command] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # problems, each said once by the session

    def expand(self, text: str) -> Expansion | None:
        """`/name args` → its Expansion; None when the text is not a custom command."""
        match = TYPED.match(text)
        if match is None:
            return None
        name, arguments = match.groups()
        command = self.commands.get(name)
        if command is None:
            return None
        return Expansion(command, command.expand(arguments.strip()), command.file.model, command.file.allowed_tools)

    def unknown(self, text: str) -> str | None:
        """Why `text`, shaped `/name args`, cannot run: no command has that name (None: it is a
        custom command, or text that is not shaped as one, such as `/etc/hosts is wrong`)."""
        match = TYPED.match(text)
        if match is None or match.group(1) in self.commands or not NAME.match(match.group(1)):
            return None
        name = match.group(1)
        if name.lower() in BUILTIN:
            return f"/{name} is a command of the app; a prompt here takes custom commands only ({self._known()})"
        return f"unknown command /{name} ({self._known()})"

    def _known(self) -> str:
        if not self.commands:
            return ("no custom commands found: Markdown files in ~/.config/coder-tui/commands/, or a trusted "
                    "folder's .coder-tui/commands/")
        return "custom commands: " + ", ".join(f"/{name}" for name in sorted(self.commands))

    def listing(self) -> list[tuple[str, str]]:
        """(name with its argument hint, description) for completion, /help and ACP."""
        return [(c.name, _described(c)) for c in sorted(self.commands.values(), key=lambda c: c.name)]


def _described(command: Command) -> str:
    hint = f"{command.file.argument_hint}: " if command.file.argument_hint else ""
    return f"{hint}{command.description} ({command.source})"


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            text = line.strip().lstrip("#").strip()
            return text if len(text) <= 80 else text[:79].rstrip() + "…"  # cut, and seen to be
    return ""


def read_command(text: str) -> CommandFile:
    """A command file's fields (FrontMatterError with the reason when they are wrong)."""
    values, body = parse(text, STRINGS)
    for key in ("description", "argument-hint", "model"):
        if key in values and values[key] is not None and not isinstance(values[key], str):
            raise FrontMatterError(f"`{key}` must be text, not {type(values[key]).__name__}")
    if not isinstance(values.get("allowed-tools") or [], (str, list)):
        raise FrontMatterError("`allowed-tools` must be a list of tools or text like `Bash(git add:*), Read`")
    return CommandFile(description=values.get("description") or "", argument_hint=values.get("argument-hint") or "",
                       model=(values.get("model") or None), allowed_tools=text_list(values.get("allowed-tools")),
                       body=body)


def command_names(folder: Path) -> list[tuple[str, Path]]:
    """(command name, file) for the `.md` files under folder (not following links to folders)."""
    found: list[tuple[str, Path]] = []
    if not folder.is_dir():
        return found
    for current, dirs, names in os.walk(folder, followlinks=False):
        depth = len(Path(current).relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_DEPTH else []
        for name in sorted(names):
            if name.endswith(".md") and len(found) < MAX_FILES:
                path = Path(current) / name
                parts = [*path.relative_to(folder).parts[:-1], name[:-3]]
                found.append((":".join(parts), path))
    return found


def load_commands(root: Path | None, trusted: bool, user_folders: list[Path]) -> CommandSet:
    """The commands of the workspace at root and the folders above it in its repository (trusted
    only, agent/custom/places.py) and of the user's folders."""
    from agent.custom.places import places
    from agent.workspace_input import files

    found = CommandSet()
    for place in places(root, trusted) if root is not None else []:
        base, shown = place.folder, place.shown
        present = [folder for folder in WORKSPACE_FOLDERS if command_names(base / folder)]
        if present and not place.trusted:
            from agent.workspace_input.policy import NOT_TRUSTED

            found.notes.append(f"ignored the commands in {', '.join(shown + f for f in present)}: {NOT_TRUSTED}")
        for folder in present if place.trusted else []:
            try:
                files.inside(base, folder)
            except files.OutsideWorkspace as exc:
                found.notes.append(f"ignored the commands in {shown}{folder}: {exc}")
                continue
            for name, path in command_names(base / folder):
                rel = path.relative_to(base).as_posix()
                _add(found, name, shown + rel, "workspace",
                     lambda base=base, rel=rel: files.read_inside(base, rel, cap=FILE_CAP))
    for user_folder in user_folders:
        for name, path in command_names(user_folder):
            _add(found, name, str(path), "user", lambda path=path: _read_user(path))
    return found


def _read_user(path: Path) -> str:
    if path.stat().st_size > FILE_CAP:
        raise FrontMatterError(f"it is {path.stat().st_size} bytes; at most {FILE_CAP} are read")
    return path.read_text("utf-8")


def _add(found: CommandSet, name: str, shown: str, source: str, read: object) -> None:
    from agent.textsafe import line
    from agent.workspace_input.files import OutsideWorkspace

    if not NAME.match(name):
        found.notes.append(f"ignored command file {line(shown)}: {line(name)!r} is not a command name "
                           "(letters, digits, `-`, `_`, `.`)")
        return
    if name.lower() in BUILTIN:
        found.notes.append(f"ignored command file {line(shown)}: /{name} is a built-in command, which wins")
        return
    if name in found.commands:
        found.notes.append(f"ignored command file {line(shown)}: /{name} is already defined by "
                           f"{found.commands[name].path}")
        return
    try:
        text = read()  # type: ignore[operator]
        if text is None:
            return
        command = read_command(text)
    except (FrontMatterError, OutsideWorkspace) as exc:
        found.notes.append(f"ignored command file {line(shown)}: {exc}")
        return
    except (OSError, UnicodeDecodeError) as exc:
        found.notes.append(f"ignored command file {line(shown)}: cannot be read ({type(exc).__name__})")
        return
    found.commands[name] = Command(name, command, source, shown)


def user_folders() -> list[Path]:
    """The user's command folders: the config folder's `commands/`, then Claude Code's."""
    from agent import paths

    return [paths.config_dir() / "commands", Path.home() / ".claude" / "commands"]
