"""`coder-tui --room`: the app in a live room, with the Node host typing `@agent` lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakellm import Reply, call
from tests.oct.server import ServerConfig
from tests.tui.conftest import APP_SIZE, app_options, ready, rendered_text, type_text, wait_for

DOC = "ws/main.py"


async def test_the_app_joins_answers_a_trigger_after_approval_and_a_prompt_typed_in_it(
        oct_server: Any, node_host: Any, fake_llm: Any, isolated_home: Path) -> None:
    from tui.app import CoderApp
    from tui.widgets.approvalpanel import ApprovalPanel
    from tui.widgets.answer import AssistantMessage
    from tui.widgets.transcript import UserMessage

    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    node_host.send(cmd="open", path=DOC)
    app = CoderApp(app_options(Path("."), fake_llm, "--room", room, "--server", oct_server.url), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        status = app.bridge.room.status
        await wait_for(pilot, lambda: status.followed == DOC, timeout=60, what="the followed document")
        pane = rendered_text(app.query_one("#pane"))
        assert room in pane and "joined" in pane and status.host.name in pane and DOC in pane

        fake_llm.script(Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1,
                                               new_content="a = 2")]),
                        Reply(text="Set a to 2."))
        node_host.send(cmd="type", path=DOC, at="end", text="# @agent set a to 2\n")
        panel = await wait_for(pilot, lambda: app.focused is not app.query_one("#prompt")
                               and next(iter(app.query(ApprovalPanel)), None), timeout=60, what="the approval")
        assert [c.path for c in panel.request.changes] == [DOC]
        await pilot.press("y")
        await wait_for(pilot, lambda: app.query_one("#prompt").has_focus, what="the prompt back")
        assert await node_host.wait_text(DOC, equals="a = 2\n# @agent set a to 2\n")
        who = [str(m.render()) for m in app.query(UserMessage)]
        assert any(f"{DOC}:2" in w and "set a to 2" in w for w in who)

        fake_llm.script(Reply(text="It sets a to 2."))
        await type_text(pilot, "what does main.py do")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(m.written == "It sets a to 2." for m in app.query(AssistantMessage)),
                       timeout=60, what="the local prompt's answer")
        asked = fake_llm.requests[-1]["messages"][-1]["content"]
        assert "what does main.py do" in asked and "a = 2" in asked  # the followed document goes along
        await app.bridge.shutdown()
    assert app.bridge.room.client.closed.is_set() or app.bridge.room.client._leaving


@pytest.mark.parametrize("server_config", [ServerConfig(web_login=True, form_login=False)])
async def test_the_app_shows_the_web_login_address_and_joins_once_logged_in(
        oct_server: Any, node_host: Any, fake_llm: Any, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    import httpx

    from tui.app import CoderApp
    from tui.widgets.transcript import Notice

    monkeypatch.setenv("BROWSER", "true")  # the app asks a browser to open the page: a no-op here
    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    app = CoderApp(app_options(Path("."), fake_llm, "--room", room, "--server", oct_server.url), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        notice = await wait_for(pilot, lambda: next((str(n.render()) for n in app.query(Notice)
                                                     if "Log in to the room's server" in str(n.render())), None),
                                timeout=60, what="the login address")
        url = re.search(r"https?://\S+", notice)[0]
        pane = rendered_text(app.query_one("#pane"))
        assert url in "".join(line.strip() for line in pane.splitlines())  # folded over lines in the pane
        token = parse_qs(urlsplit(url).query)["token"][0]
        async with httpx.AsyncClient() as web:  # what the user does in the browser
            await web.post(oct_server.url + "api/login/web-confirm", json={"token": token, "name": "ada"})
        await ready(pilot)
        await wait_for(pilot, lambda: app.bridge.room.status.phase == "joined", timeout=60, what="joined")
        await app.bridge.shutdown()
    assert oct_server.join_requests[-1]["name"] == "ada"


async def test_an_answer_shown_from_outside_the_apps_context_does_not_break_its_exit(
        fake_llm: Any, tmp_path: Path) -> None:
    """The agent's side (a room client's task, a callback handed to the loop by a thread) may call
    the app from a context without Textual's `active_app`: the transcript's flush timer, set by an
    answer's first text, then died on its first tick and the app's exit raised LookupError."""
    import asyncio
    import contextvars

    from agent.events import TextDelta
    from tui.app import CoderApp
    from tui.widgets.answer import AssistantMessage

    (tmp_path / "ws").mkdir()
    app = CoderApp(app_options(tmp_path / "ws", fake_llm), animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        shown = asyncio.Event()
        asyncio.get_running_loop().call_soon(lambda: (app.show_event(TextDelta(text="Hello.")), shown.set()),
                                             context=contextvars.Context())  # no active_app in it
        await shown.wait()
        answer = await wait_for(pilot, lambda: next(iter(app.query(AssistantMessage)), None), what="the answer")
        await wait_for(pilot, lambda: answer.drawn, what="the text drawn by the flush timer")
    # leaving run_test stops the app's timers: the flush timer's task ended with LookupError before
