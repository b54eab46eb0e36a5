"""The codebase map in the side panel: a folder tree with each file's description and tags,
filtered as you type (paths, descriptions, tags and definitions all match)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static, Tree

MAX_SHOWN = 400  # a tree of thousands of lines helps nobody; search narrows it


class CodeMap(Vertical):
    DEFAULT_CSS = Path(__file__).with_name("codemap.tcss").read_text(encoding="utf-8")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view: Any = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search the map…", id="codemap-search")
        yield Static("", id="codemap-counts")
        yield Tree("", id="codemap-tree")

    def on_mount(self) -> None:
        self.border_title = "Codebase map"
        self.query_one(Tree).show_root = False

    def show(self, view: Any) -> None:
        """Show a MapView (agent.knowledge.view), keeping the current search."""
        self.view = view
        self._render_tree(self.query_one(Input).value)

    @on(Input.Changed, "#codemap-search")
    def _search(self, event: Input.Changed) -> None:
        if self.view is not None:
            self._render_tree(event.value)

    def _render_tree(self, query: str) -> None:
        entries = [e for e in self.view.ranked() if matches(e, query)]
        files, summarised = self.view.counts()
        shown = sorted(entries[:MAX_SHOWN], key=lambda e: e.path)
        note = f" · {len(entries)} match" if query else ""
        more = f" · first {MAX_SHOWN} shown" if len(entries) > MAX_SHOWN else ""
        self.query_one("#codemap-counts", Static).update(f"{files} files · {summarised} summarised{note}{more}")
        tree = self.query_one(Tree)
        tree.clear()
        folders: dict[str, Any] = {"": tree.root}
        for entry in shown:
            parent = _folder(folders, entry.path.rsplit("/", 1)[0] if "/" in entry.path else "")
            parent.add_leaf(Text(label(entry)), data=entry.path)  # Text: brackets in tags are not markup
        if query:
            tree.root.expand_all()
        else:
            tree.root.expand()


def _folder(folders: dict[str, Any], path: str) -> Any:
    if path not in folders:
        parent_path, _, name = path.rpartition("/")
        folders[path] = _folder(folders, parent_path).add(Text(f"{name}/"), data=path)
    return folders[path]


def label(entry: Any) -> str:
    summary = entry.summary or {}
    text = entry.path.rsplit("/", 1)[-1]
    if summary.get("description"):
        text += f" — {summary['description']}"
    elif entry.record.defs:  # not summarised yet: what it defines says something too
        text += " · " + ", ".join(s.name for s in entry.record.defs[:4])
    if summary.get("tags"):
        text += f" [{', '.join(summary['tags'])}]"
    return text


def matches(entry: Any, query: str) -> bool:
    words = query.lower().split()
    if not words:
        return True
    summary = entry.summary or {}
    haystack = " ".join([entry.path, summary.get("description", ""), *summary.get("tags", []),
                         *(s.name for s in entry.record.defs)]).lower()
    return all(word in haystack for word in words)
