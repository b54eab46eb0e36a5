"""`serve`'s per-turn settings and approvals, with its sessions in this process (`--no-host`) and
in the session host (a real `coder-tui host`): seed 003's `mode`/`edit_mode`/`agent_id` on a
WebSocket frame or a `POST /api/chat` body are honoured on both, or refused with a clear error;
the browser view answers approvals of sessions other front ends started."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import httpx
import pytest

from agent.host.client import HostClient
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import next_of
from tests.serve.conftest import TOKEN, make_serve  # noqa: F401 - make_serve is a fixture

WRITE = Reply(tool_calls=[call("write_file", file_path="new.txt", content="written\n")])
EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(params=["local", "hosted"])
def serve_of(request: pytest.FixtureRequest, make_serve):  # noqa: F811
    """A serve whose sessions run in this process, or in a host started for the test."""
    if request.param == "hosted":
        request.getfixturevalue("start_host")()
    return lambda **kw: make_serve(hub=request.param == "hosted", **kw)


async def frames_until_done(ws: aiohttp.ClientWebSocketResponse) -> list[dict]:
    frames: list[dict] = []
    while True:
        data = json.loads((await ws.receive(timeout=60)).data)
        frames.append(data)
        if data.get("done") or ("error" in data and len(frames) == 1):
            return frames


async def test_plan_mode_of_a_websocket_turn_blocks_its_writes(serve_of) -> None:
    serve = serve_of(mode="allow", files={"a.py": "x = 1\n"})
    serve.llm.script(WRITE, Reply(text="Planned."), WRITE, Reply(text="Written."))
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{serve.url}/ws", headers=HEADERS) as ws:
        await ws.send_json({"message": "write new.txt", "edit_mode": "plan"})
        planned = await frames_until_done(ws)
        assert not (serve.root / "new.txt").exists(), planned
        await ws.send_json({"message": "now write it", "mode": "allow"})
        await frames_until_done(ws)
    assert (serve.root / "new.txt").read_text() == "written\n"


@pytest.mark.parametrize("field", ["mode", "edit_mode"])
def test_plan_mode_of_a_posted_turn_blocks_its_writes(serve_of, field: str) -> None:
    serve = serve_of(mode="allow", files={"a.py": "x = 1\n"})
    serve.llm.script(WRITE, Reply(text="Planned."))
    response, events = serve.chat("write new.txt", **{field: "plan"})
    assert response.status_code == 200 and events[-1] == {"done": True}
    assert not (serve.root / "new.txt").exists()
    [row] = [row for row in serve.sessions() if row["session_id"] == response.headers["X-Session-Id"]]
    assert row["mode"] == "plan"


def test_an_agent_that_is_none_or_a_bad_mode_is_refused(serve_of) -> None:
    serve = serve_of(mode="allow")
    with serve.client() as http:
        agent = http.post("/api/chat", json={"messages": [{"role": "user", "content": "hi"}], "agent_id": "nobody"})
        mode = http.post("/api/chat", json={"messages": [{"role": "user", "content": "hi"}], "mode": "yolo"})
    assert agent.status_code == 400 and "nobody" in agent.json()["error"], agent.text
    assert mode.status_code == 400 and "mode" in mode.json()["error"], mode.text
    assert serve.llm.requests == []


async def test_the_view_answers_an_approval_of_a_session_a_terminal_started(start_host, make_serve,  # noqa: F811
                                                                          fake_llm: FakeLLM) -> None:
    """`run --attach new` waits for an approval; the browser view (POST /api/approvals/ID) answers
    it: 200, the terminal's turn goes on; a late answer is 409 naming who answered."""
    host = start_host()
    serve = make_serve(mode="ask", hub=True, files={"a.py": "def f():\n    return 1\n"})
    fake_llm.script(EDIT, Reply(text="Edited."))
    terminal = await HostClient.connect(host.socket)
    try:
        await terminal.request("open", session="new", client="run --attach",
                               options=host.options(fake_llm, serve.root, "ask"))
        await terminal.request("prompt", text="edit a.py")
        asked = await next_of(terminal, "approval_required")
        async with httpx.AsyncClient(base_url=serve.url, headers=HEADERS, timeout=60) as http:
            listed = (await http.get("/api/sessions")).json()["sessions"]
            answered = await http.post(f"/api/approvals/{asked['approval_id']}", json={"decision": "allow_once"})
            late = await http.post(f"/api/approvals/{asked['approval_id']}", json={"decision": "deny"})
            unknown = await http.post("/api/approvals/ap_none", json={"decision": "deny"})
        done = await next_of(terminal, "turn_done")
    finally:
        await terminal.close()
    [row] = [row for row in listed if asked["approval_id"] in [p["id"] for p in row["pending_approvals"]]]
    assert row["prompt"] == "edit a.py"  # a live session's title, as the view lists it (was "(no prompt yet)")
    assert answered.status_code == 200, answered.text
    assert answered.json()["session_id"] == done.get("session_id", answered.json()["session_id"])
    assert late.status_code == 409 and "answered already" in late.json()["error"], late.text
    assert unknown.status_code == 404
    assert done["success"] is True and (serve.root / "a.py").read_text().endswith("return 2\n")


def test_a_late_answer_in_this_process_is_409(make_serve) -> None:  # noqa: F811
    serve = make_serve(mode="ask", files={"a.py": "def f():\n    return 1\n"})
    serve.llm.script(EDIT, Reply(text="Edited."))
    with serve.client() as http, http.stream("POST", "/api/chat",
                                             json={"messages": [{"role": "user", "content": "edit"}]}) as response:
        lines = response.iter_lines()
        for line in lines:
            if line.startswith("data: ") and json.loads(line[6:]).get("type") == "approval_required":
                approval = json.loads(line[6:])["id"]
                break
        first = http.post(f"/api/approvals/{approval}", json={"decision": "allow_once"})
        late = http.post(f"/api/approvals/{approval}", json={"decision": "deny"})
        for _line in lines:
            pass
    assert first.status_code == 200 and late.status_code == 409, late.text
    assert Path(serve.root / "a.py").read_text().endswith("return 2\n")


def test_the_attach_picker_shows_a_live_session_s_title() -> None:
    from tui.screens.attachpicker import live_label

    row = {"session_id": "20260101-000000-abcdef", "prompt": "fix the failing test", "running": True,
           "clients": ["run --attach"], "workspace": "~/proj"}
    assert "fix the failing test" in live_label(row).plain
    assert "(no prompt yet)" in live_label({**row, "prompt": ""}).plain
