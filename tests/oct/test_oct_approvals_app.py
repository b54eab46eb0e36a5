"""`coder-tui --room ROOM --approver host`: a proposal shown in the app's approval panel and in the
room chat; the host (the published npm client) approves it from the chat, and the panel closes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakellm import Reply, call
from tests.tui.conftest import APP_SIZE, app_options, ready, wait_for

DOC = "ws/main.py"


async def test_a_chat_approval_closes_the_apps_panel(oct_server: Any, node_host: Any, fake_llm: Any,
                                                     isolated_home: Path) -> None:
    from tui.app import CoderApp
    from tui.widgets.approvalpanel import ApprovalPanel
    from tui.widgets.transcript import ToolRow

    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    node_host.send(cmd="open", path=DOC)
    options = app_options(Path("."), fake_llm, "--room", room, "--server", oct_server.url, "--approver", "host")
    app = CoderApp(options, animate=False)
    async with app.run_test(size=APP_SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: app.bridge.room.status.followed == DOC, timeout=60, what="the document")
        fake_llm.script(Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1,
                                               new_content="a = 2")]),
                        Reply(text="Set a to 2."))
        node_host.send(cmd="type", path=DOC, at="end", text="# @agent set a to 2\n")
        await wait_for(pilot, lambda: next(iter(app.query(ApprovalPanel)), None), timeout=60, what="the panel")
        while "Proposal 1" not in (await node_host.expect("chat", timeout=60))["text"]:
            pass
        node_host.send(cmd="chat", text="@agent yes")
        await wait_for(pilot, lambda: not app.query(ApprovalPanel) and app.query_one("#prompt").has_focus,
                       timeout=60, what="the panel closed by the chat's answer")
        assert await node_host.wait_text(DOC, equals="a = 2\n# @agent set a to 2\n")
        await wait_for(pilot, lambda: any("by host in the room chat" in row.note for row in app.query(ToolRow)),
                       timeout=30, what="who answered, on the call's row")
        assert "Proposal 1 approved by host." in [e.get("text") for e in node_host.seen]  # before the text
        await app.bridge.shutdown()
