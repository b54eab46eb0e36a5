"""The router's start/stop of continuous exploration in the app, and its on/off state kept across
restarts (an app opened on a workspace whose exploration was on resumes it, saying so once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.knowledge.conftest import write_repo
from tests.knowledge.test_app_map import command, notices
from tests.tui.conftest import APP_SIZE, make_app, ready, wait_for, workspace  # noqa: F401


def wanted(root: Path) -> Any:
    from agent.knowledge.explore import workspace_wanted
    from agent.workspaces.local import LocalWorkspace

    return workspace_wanted(LocalWorkspace(root))


def resumed(app: Any) -> list[str]:
    return [n for n in notices(app) if "Resuming continuous exploration" in n]


async def test_exploration_started_by_a_message_resumes_after_a_restart_until_stopped(
        make_app: Any, tmp_path: Path, summary_llm: Any, summariser: Any) -> None:  # noqa: F811
    root = write_repo(tmp_path / "repo")
    app = make_app(fake=summary_llm, root=root)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await command(pilot, "start exploring the repo")
        await wait_for(pilot, lambda: any(n.startswith(f"Exploring {root}") for n in notices(app)),
                       what="exploration to start")
        assert app.explore_run is not None and resumed(app) == []
        assert app.bridge.session.messages[1:] == []  # the router acted; the main model was not asked
    assert wanted(root) == {"on": True, "interval": 120.0}

    again = make_app(fake=summary_llm, root=root)
    async with again.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: len(resumed(again)) == 1, what="the resume notice")
        assert again.explore_run is not None and "every 120 s" in resumed(again)[0]
        await command(pilot, "stop exploring")
        await wait_for(pilot, lambda: any("Exploration stopped" in n for n in notices(again)), timeout=30,
                       what="the stop")
        assert len(resumed(again)) == 1
    assert wanted(root) == {"on": False, "interval": 120.0}

    third = make_app(fake=summary_llm, root=root)
    async with third.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        # the resume check's worker is made with the session (before `ready`); finished ones leave the list
        await wait_for(pilot, lambda: all(w.is_finished for w in third.workers if w.name == "explore-resume"),
                       what="the resume check")
        assert third.explore_run is None and resumed(third) == []
