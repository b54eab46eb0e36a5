"""/memory in the app: the instruction files loaded, with their sizes, and one opened in $EDITOR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.conftest import APP_SIZE, make_app, ready, wait_for, workspace  # noqa: F401
from tests.tui.test_app_sessions import notices, submit


def test_custom_commands_cannot_take_a_builtin_name() -> None:
    from agent.custom.commands import BUILTIN
    from tui.commands import HANDLERS

    assert BUILTIN == set(HANDLERS)


async def test_memory_lists_the_files_with_sizes(make_app: Any, workspace: Path, monkeypatch: Any) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs. See @docs/style.md\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "style.md").write_text("Short lines.\n")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await submit(pilot, "/memory")
        said = await wait_for(pilot, lambda: [n for n in notices(app) if "Instruction files" in n], what="/memory")
        assert "1. AGENTS.md  (29 characters)" in said[0] and "2. docs/style.md  (13 characters)" in said[0]
        await submit(pilot, "/memory 2")
        await wait_for(pilot, lambda: any("set $EDITOR" in n and "style.md" in n for n in notices(app)),
                       what="the editor's absence said")
        await submit(pilot, "/memory 9")
        await wait_for(pilot, lambda: any("/memory N opens file N (1 to 2)" in n for n in notices(app)),
                       what="a wrong number said")
