"""Instructions where users keep them: the user's global `AGENTS.md` (user config folder), then
`AGENTS.md` in every folder from the repository's root down to the working folder (`CLAUDE.md` in
a folder without one), nearest last so that it has the last word; `@path` lines inside them bring
in other files.

An import is read relative to the file that names it, inside the repository (a workspace's file)
or the home folder (the user's global file) only, never through a link that leads out, at most
`DEPTH` imports deep, each file once (no cycles). What was loaded is kept (`Loaded.files`) for the
app's /memory; the 20,000-character cut, and every import refused, is said (`Loaded.notes`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md")  # per folder: the first found
CAP = 20_000  # characters in the system prompt
READ_CAP = 1 << 20  # bytes read of one file at most (a larger one is cut)
DEPTH = 5
MAX_FILES = 50
IMPORT = re.compile(r"(?<![\w`@])@((?:~/|\./|\.\./|/)?[\w][\w.\-/]*[\w])")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")


@dataclass
class Loaded:
    text: str = ""
    files: list[tuple[str, int]] = field(default_factory=list)  # (path as shown, characters)
    notes: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)  # the files themselves, for /memory's editor


def yours(path: Path) -> bool:
    """Whether `path` (itself, not what a link leads to) belongs to you or to root: in a folder other
    users may write in (the system's temporary folder), what they put there is not yours to read as
    instructions."""
    try:
        return os.lstat(path).st_uid in (os.getuid(), 0)
    except OSError:
        return False


def repository_root(folder: Path) -> Path:
    """The nearest folder at or above `folder` with a `.git` of yours; `folder` itself outside a
    repository. The search stops at a folder that is not yours (nor root's): a `.git` another user
    planted in a shared parent does not make its `AGENTS.md` the project's."""
    home = Path.home().resolve()
    current = folder.resolve()
    while True:
        if current == home or current.parent == current:  # a dotfiles repository in home is not the project's
            return folder.resolve()
        if not yours(current):
            return folder.resolve()
        if (current / ".git").exists() and yours(current / ".git"):
            return current
        current = current.parent


def chain(root: Path, working: Path) -> list[str]:
    """The folders (relative to root, "" for root itself) from root down to working."""
    rel = working.resolve().relative_to(root)
    parts = list(rel.parts)
    return ["/".join(parts[:i]) for i in range(len(parts) + 1)]


def gather(working: Path, global_folder: Path) -> Loaded:
    """The instructions for a session in the local folder `working`."""
    loaded = Loaded()
    seen: set[str] = set()
    home = Path.home()
    user_file = global_folder / "AGENTS.md"
    if user_file.is_file() and global_folder.resolve().is_relative_to(home.resolve()):
        _load(loaded, home.resolve(), os.path.relpath(user_file.resolve(), home.resolve()), seen, 0, str(user_file))
    elif user_file.is_file():  # a config folder outside home: read it, imports confined to that folder
        _load(loaded, global_folder.resolve(), "AGENTS.md", seen, 0, str(user_file))
    root = repository_root(working)
    above = os.path.relpath(working.resolve(), root)
    for folder in chain(root, working):
        for name in NAMES:
            rel = f"{folder}/{name}" if folder else name
            if os.path.lexists(root / rel) and not yours(root / rel):
                loaded.notes.append(f"ignored {root / rel}: it belongs to another user, not to you")
                continue
            if _load(loaded, root, rel, seen, 0, rel):
                if above != "." and folder != above:  # outside the folder the session works in: said
                    loaded.notes.append(f"instructions read from {root / rel} (the repository above this folder)")
                break
    text = loaded.text
    if len(text) > CAP:
        cut = f"instructions cut at {CAP:,} characters (they have {len(text):,}; /memory lists the files)"
        loaded.text = text[:CAP] + f"\n[{cut}]"
        loaded.notes.append(cut)
    return loaded


def _load(loaded: Loaded, base: Path, rel: str, seen: set[str], depth: int, shown: str) -> bool:
    """Read base/rel (and its imports) into loaded; False when there is no such file."""
    from agent.workspace_input import files

    real = os.path.realpath(base / rel)
    if real in seen or len(seen) >= MAX_FILES:
        return real in seen
    try:
        text = files.read_inside(base, rel, cap=READ_CAP, cut=True)
    except files.OutsideWorkspace as exc:
        loaded.notes.append(f"ignored {shown}: {exc}")
        return False
    if text is None:
        return False
    seen.add(real)
    loaded.files.append((shown, len(text)))
    loaded.paths.append(Path(real))
    heading = f"### {shown}" if depth == 0 else f"### {shown} (imported)"
    loaded.text += f"{heading}\n{text.strip()}\n\n"
    for name in imports(text):
        _import(loaded, base, rel, name, seen, depth + 1, shown)
    return True


def _import(loaded: Loaded, base: Path, rel: str, name: str, seen: set[str], depth: int, parent: str) -> None:
    from agent.textsafe import line
    from agent.workspace_input import files

    if name.startswith(("~/", "/")):
        target = os.path.expanduser(name)
        candidate = os.path.relpath(target, base) if os.path.isabs(target) else name
    else:
        candidate = os.path.normpath(os.path.join(os.path.dirname(rel), name))
    if not os.path.lexists(base / candidate) and not candidate.startswith(".."):
        return  # not a file: an @mention of someone, a decorator, …
    if depth > DEPTH:
        loaded.notes.append(f"ignored @{line(name)} in {parent}: imports go at most {DEPTH} deep")
        return
    try:
        files.inside(base, candidate)
    except files.OutsideWorkspace:
        where = "the repository" if base != Path.home().resolve() else "your home folder"
        loaded.notes.append(f"ignored @{line(name)} in {parent}: only files inside {where} are imported")
        return
    _load(loaded, base, candidate, seen, depth, candidate)


def imports(text: str) -> list[str]:
    """The `@path` names of a Markdown text, outside code blocks and code spans, in order."""
    found: list[str] = []
    fenced = False
    for row in text.splitlines():
        if FENCE.match(row):
            fenced = not fenced
            continue
        if fenced:
            continue
        for match in IMPORT.finditer(INLINE_CODE.sub("", row)):
            if match.group(1) not in found:
                found.append(match.group(1))
    return found
