"""The app's codebase map pane (/map) and background exploration (/explore)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakellm import Reply
from tests.knowledge.conftest import FILES, write_repo
from tests.tui.conftest import APP_SIZE, make_app, ready, type_text, wait_for, workspace  # noqa: F401


def notices(app: Any) -> list[str]:
    from tui.widgets.transcript import Notice

    earlier = [b.text for b in app.query_one("#history").blocks if b.kind == "notice"]
    return earlier + [str(n.render()) for n in app.query(Notice)]


def tree_labels(app: Any) -> list[str]:
    from textual.widgets import Tree

    labels: list[str] = []

    def walk(node: Any) -> None:
        for child in node.children:
            labels.append(str(child.label))
            walk(child)

    walk(app.query_one("#codemap-tree", Tree).root)
    return labels


async def command(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_map_pane_shows_the_tree_with_summaries_and_searches(
        make_app: Any, tmp_path: Path, summary_llm: Any) -> None:  # noqa: F811
    from agent.knowledge.builder import MapBuilder
    from agent.workspaces.local import LocalWorkspace
    from tests.knowledge.test_map_build import llm_for

    root = write_repo(tmp_path / "repo")
    builder = MapBuilder(LocalWorkspace(root), llm_for(summary_llm))
    await builder.build()
    builder.close()
    app = make_app(root=root)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one("#codemap")
        assert not pane.display
        await command(pilot, "/map")
        await wait_for(pilot, lambda: "format.ts — Summary of web/format.ts. [shapes, ts]" in tree_labels(app),
                       what="the map tree")
        assert pane.display and "web/" in tree_labels(app)
        assert f"{len(FILES)} files · {len(FILES)} summarised" in str(app.query_one("#codemap-counts").render())
        app.query_one("#codemap-search").focus()
        await type_text(pilot, "polygon")
        await wait_for(pilot, lambda: [x for x in tree_labels(app) if "—" in x] == [
            "lib.rs — Summary of engine/lib.rs. [shapes, rs]"], what="the search to filter")
        app.query_one("#prompt").focus()
        await command(pilot, "/map")
        await wait_for(pilot, lambda: not pane.display, what="the pane to hide")


async def test_explore_runs_in_the_background_and_reports(make_app: Any, tmp_path: Path, summary_llm: Any,
                                                          summariser: Any) -> None:  # noqa: F811
    root = write_repo(tmp_path / "repo")
    app = make_app(fake=summary_llm, root=root)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await command(pilot, "/explore start 0")
        await wait_for(pilot, lambda: sum(summariser.counts.values()) >= len(FILES), timeout=60,
                       what="every file to be summarised")
        await wait_for(pilot, lambda: any("everything is current" in n for n in notices(app)), timeout=30,
                       what="the idle notice")
        await command(pilot, "/explore status")
        await wait_for(pilot, lambda: any(f"{len(FILES)} of {len(FILES)} files summarised" in n
                                          for n in notices(app)), what="the status")
        await command(pilot, "/explore stop")
        await wait_for(pilot, lambda: any("Exploration stopped" in n for n in notices(app)), timeout=30,
                       what="the stop")
        assert set(summariser.counts.values()) == {1}


async def test_the_app_runs_a_due_task_while_idle(make_app: Any, workspace: Path, fake_llm: Any,  # noqa: F811
                                                  monkeypatch: Any) -> None:
    import tui.knowledge
    from agent.session.tasks import task_store
    from agent.workspaces.local import LocalWorkspace

    monkeypatch.setattr(tui.knowledge, "TASK_CHECK_SECONDS", 0.1)
    store = task_store(LocalWorkspace(workspace))
    task = store.schedule("summarise the readme", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(text="It says demo."))
    app = make_app()
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: any(f"task {task.id} completed" in n for n in notices(app)), timeout=30,
                       what="the task to run")
    store = task_store(LocalWorkspace(workspace))
    done = store.get(task.id)
    store.close()
    assert done.status == "completed" and done.runs == 1 and "It says demo." in done.notes[-1]
    assert fake_llm.requests[0]["messages"][-1]["content"] == "summarise the readme"
