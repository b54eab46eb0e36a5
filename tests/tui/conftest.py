"""The app against the scripted model server: launch options, waiting for states, typing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_KEY

APP_SIZE = (120, 36)


def app_options(workspace: Path, fake_llm: Any = None, *extra: str) -> Any:
    """The app's parsed command line, as `coder-tui DIR --model ... --api-base ...` would give."""
    from tui.cli import launch_parser

    argv = [str(workspace)]
    if fake_llm is not None:
        argv += ["--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY]
    return launch_parser().parse_args([*argv, *extra])


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
    """Let the app run until condition() is truthy (its value is returned)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)


async def screen_shown(pilot: Any, kind: type, what: str = "", timeout: float = 15.0) -> Any:
    """The app's screen once it is a `kind` and all it composed is mounted: its nested rows mount
    turns after its first ones (a test that queried them as soon as the screen showed failed in CI)."""
    app = pilot.app
    return await wait_for(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted and app.screen,
                          timeout, what or kind.__name__)


async def type_text(pilot: Any, text: str) -> None:
    """Type into the focused widget: one key event per character, as the terminal sends them when
    a user types quickly; the app then settles once. (`pilot.press` waits for the process to go
    idle after every key: about 75 ms a key, seconds a line, minutes over the suite.)"""
    import unicodedata

    from textual import events
    from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    keys = {" ": "space", "\n": "ctrl+j", "/": "slash", "@": "at", ".": "full_stop", "-": "minus",
            "_": "underscore", ",": "comma", ":": "colon"}
    for ch in text:  # the key and character as Pilot.press makes them
        key = keys.get(ch, ch)
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        try:
            char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
        except KeyError:
            char = key if len(key) == 1 else None
        pilot.app.post_message(events.Key(key, char))  # in order: the app hands each to the focused widget
    await pilot.pause()  # the app has handed every key on
    await pilot.pause()  # the widgets have handled them


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    print('hello')\n\n\nif __name__ == '__main__':\n    main()\n")
    (root / "README.md").write_text("# demo\n")
    return root


@pytest.fixture
def make_app(workspace: Path, fake_llm: Any) -> Callable[..., Any]:
    from tui.app import CoderApp

    def make(*extra: str, fake: Any = fake_llm, root: Path | None = None, animate: bool = False) -> Any:
        return CoderApp(app_options(root or workspace, fake, *extra), animate=animate)

    return make


async def ready(pilot: Any) -> Any:
    """Wait until the app's agent session exists and it is idle; returns the app."""
    app = pilot.app
    # Idle includes the model library's load (a few seconds; far more on a busy machine).
    await wait_for(pilot, lambda: app.bridge.ready and app.query_one("#status").state == "idle",
                   timeout=90, what="the session to be ready")
    return app


def rendered_text(widget: Any) -> str:
    """What a widget shows, as plain text (renders its Rich content at the widget's width)."""
    from rich.console import Console

    console = Console(width=widget.content_region.width or 100, color_system=None, record=True,
                      file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the console
    content = getattr(widget, "content", None)
    console.print(content if content is not None and not isinstance(content, str) else widget.render())
    text = console.export_text()
    console.file.close()
    return text
