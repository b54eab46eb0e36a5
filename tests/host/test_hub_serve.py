"""`serve` as a front door of the session host: its sessions live in the host (real `coder-tui host`
process, real serve on loopback, the scripted model), so `coder-tui sessions` and `run --attach ID`
see them, and an approval is answered in the host by whoever answers first."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from agent.host.client import HostClient
from tests.conftest import TEST_KEY, run_cli
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import host_files, next_of
from tests.host.test_host_fanout import session_lines
from tests.serve.conftest import TOKEN, make_serve, sse_events  # noqa: F401 - make_serve is a fixture

EDIT = Reply(text="I'll change it:", tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2,
                                                       new_content="    return 2", reason="two is better")])


def test_a_serve_turn_runs_in_the_host_and_run_attach_continues_it(start_host, make_serve, isolated_home: Path,
                                                                    fake_llm: FakeLLM) -> None:
    host = start_host()
    serve = make_serve(hub=True, files={"a.py": "def f():\n    return 1\n"})
    fake_llm.script(EDIT, Reply(text="Done."))
    response, events = serve.chat("make f return 2")
    assert response.status_code == 200
    session_id = response.headers["X-Session-Id"]
    # seed 002's shapes, as in-process
    assert events[0] == {"type": "session", "session_id": session_id} and events[-1] == {"done": True}
    assert events[1]["type"] == "classification"
    assert "".join(e["content"] for e in events if "content" in e) == "I'll change it:\n\nDone."
    [diff] = [e for e in events if e.get("type") == "diff"]
    assert diff["file"] == "a.py" and diff["reason"] == "two is better" and "+    return 2" in diff["diff"]
    assert (serve.root / "a.py").read_text().endswith("return 2\n")
    # the host has it: `coder-tui sessions`, serve's own listing
    env = {"XDG_RUNTIME_DIR": str(host.socket.parent.parent)}
    listed = run_cli(isolated_home, "sessions", **env)
    row = next(line for line in listed.stdout.splitlines() if line.startswith(session_id))
    assert "[live in the host: idle; attached: serve (pid" in row, listed.stdout
    [mine] = [row for row in serve.sessions() if row["session_id"] == session_id]
    assert mine["live"] is True and mine["attached"][0].startswith("serve (pid")
    # `run --attach` joins the same live session: the serve turn so far, then its own turn
    fake_llm.script(Reply(text="Still here."))
    attached = run_cli(isolated_home, "run", "--attach", session_id, "and now?", "--json", "--model",
                       fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY, **env)
    assert attached.returncode == 0, attached.stderr
    lines = [json.loads(line) for line in attached.stdout.splitlines()]
    end = next(line for line in lines if line["type"] == "replay_end")
    assert end["clients"][0].startswith("serve (pid")
    assert lines[0]["type"] == "turn_started" and lines[0]["prompt"].startswith("make f return 2")
    recorded = session_lines(isolated_home, session_id)
    prompts = [m["data"]["content"] for m in recorded if m.get("kind") == "message" and m["data"]["role"] == "user"]
    assert len(prompts) == 2 and prompts[0].startswith("make f return 2") and prompts[1] == "and now?"
    assert host.process.poll() is None


@pytest.mark.parametrize("who_line", ["read", "not read yet"])
async def test_an_approval_of_a_serve_turn_is_answered_in_the_host_first_answer_wins(
        start_host, make_serve, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, who_line: str) -> None:
    """The late answer gets 409 naming who answered, whether or not serve has read the host's
    `approval_answered` line yet (it follows `approval_resolved`; a late answer overtook it once
    in a full run, and was told 404 "no pending approval")."""
    if who_line == "not read yet":
        from agent.frontends.serve.hosted import HostedSession

        read = HostedSession._line
        monkeypatch.setattr(HostedSession, "_line",
                            lambda self, line: None if line.get("type") == "approval_answered" else read(self, line))
    host = start_host()
    serve = make_serve(mode="ask", hub=True, files={"a.py": "def f():\n    return 1\n"})
    fake_llm.script(EDIT, Reply(text="Done."))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    terminal = await HostClient.connect(host.socket)
    try:
        async with httpx.AsyncClient(base_url=serve.url, headers=headers, timeout=60) as http:
            body = {"messages": [{"role": "user", "content": "make f return 2"}]}
            async with http.stream("POST", "/api/chat", json=body) as response:
                events: list[dict] = []
                lines = response.aiter_lines()
                async for line in lines:
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))
                        if events[-1].get("type") == "approval_required":
                            break
                asked = events[-1]
                session_id = response.headers["X-Session-Id"]
                # a terminal attached to the same session answers first
                await terminal.request("open", session=session_id, client="terminal", options={})
                end = await next_of(terminal, "replay_end")
                assert end["pending"] == [asked["id"]]
                await terminal.request("approve", approval_id=asked["id"], decision="allow_once")
                late = await http.post(f"/api/approvals/{asked['id']}", json={"decision": "deny"})
                async for line in lines:
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))
            listed = (await http.get("/api/sessions")).json()["sessions"]
        await next_of(terminal, "turn_done")
    finally:
        await terminal.close()
    assert late.status_code == 409 and "answered already, by terminal" in late.json()["error"], late.text
    assert events[-1] == {"done": True}
    assert "".join(e["content"] for e in events if "content" in e).endswith("Done.")
    assert (serve.root / "a.py").read_text().endswith("return 2\n")
    [row] = [row for row in listed if row["session_id"] == session_id]
    assert row["live"] is True and "terminal" in row["attached"]


async def test_a_late_answer_to_an_approval_a_stop_ended_is_404_as_in_process(
        start_host, make_serve, fake_llm: FakeLLM) -> None:
    """Serve asks the host about an approval it no longer sees pending; the host's "no pending
    approval" (nobody answered it: a stop ended the turn) stays 404, not 409 "answered already"."""
    host = start_host()
    serve = make_serve(mode="ask", hub=True, files={"a.py": "def f():\n    return 1\n"})
    fake_llm.script(EDIT, Reply(text="Done."))
    terminal = await HostClient.connect(host.socket)
    try:
        async with httpx.AsyncClient(base_url=serve.url, headers={"Authorization": f"Bearer {TOKEN}"},
                                     timeout=60) as http:
            body = {"messages": [{"role": "user", "content": "make f return 2"}]}
            async with http.stream("POST", "/api/chat", json=body) as response:
                asked: dict = {}
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and (event := json.loads(line[6:])).get("type") == "approval_required":
                        asked = event
                        break
                await terminal.request("open", session=response.headers["X-Session-Id"], client="terminal",
                                       options={})
                await next_of(terminal, "replay_end")
                assert (await terminal.request("stop"))["stopped"] is True
                await next_of(terminal, "turn_done")
                late = await http.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
    finally:
        await terminal.close()
    assert late.status_code == 404 and "no pending approval" in late.json()["error"], late.text
    assert (serve.root / "a.py").read_text().endswith("return 1\n")


async def test_stop_of_a_serve_turn_stops_the_hosts_run(start_host, make_serve, fake_llm: FakeLLM) -> None:
    import threading

    host = start_host()
    serve = make_serve(hub=True, grace=0)
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release))
    watcher = await HostClient.connect(host.socket)
    try:
        async with httpx.AsyncClient(base_url=serve.url, headers={"Authorization": f"Bearer {TOKEN}"},
                                     timeout=60) as http:
            async with http.stream("POST", "/api/chat", json={"messages": [{"role": "user", "content": "hi"}]}) \
                    as response:
                session_id = response.headers["X-Session-Id"]
                await watcher.request("open", session=session_id, client="watcher", options={})
                await next_of(watcher, "step_started")
            # the client left with grace 0: serve stops its run, in the host
            done = await next_of(watcher, "turn_done")
    finally:
        release.set()
        await watcher.close()
    assert done["completion_reason"] == "stopped" and done["by"].startswith("serve (pid")


async def test_a_host_killed_with_kill_9_ends_serves_turn_with_one_error_and_the_next_message_continues(
        start_host, make_serve, fake_llm: FakeLLM) -> None:
    import asyncio
    import os
    import signal
    import threading

    host = start_host()
    serve = make_serve(hub=True)
    release = threading.Event()
    fake_llm.script(Reply(text="cut off", hold=release), Reply(text="back again"))
    watcher = await HostClient.connect(host.socket)
    events: list[dict] = []
    try:
        async with httpx.AsyncClient(base_url=serve.url, headers={"Authorization": f"Bearer {TOKEN}"},
                                     timeout=60) as http:
            async with http.stream("POST", "/api/chat", json={"messages": [{"role": "user", "content": "one"}]}) \
                    as response:
                session_id = response.headers["X-Session-Id"]
                await watcher.request("open", session=session_id, client="watcher", options={})
                await next_of(watcher, "step_started")
                os.kill(host.process.pid, signal.SIGKILL)
                host.process.wait(30)
                release.set()
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))
    finally:
        release.set()
        await watcher.close()
    errors = [e["error"] for e in events if "error" in e]
    assert len(errors) == 1 and "session host stopped" in errors[0] and events[-1] == {"done": True}, events
    # the next message of the session: a host started on demand resumes it from its record
    again, more = await asyncio.to_thread(serve.chat, "two", session_id=session_id)
    assert again.status_code == 200 and again.headers["X-Session-Id"] == session_id
    assert more[-2] == {"type": "complete", "success": True, "completion_reason": "answered"}
    sent = [m.get("content") for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"]
    assert sent[0].startswith("one") and sent[-1].startswith("two")


def test_serve_says_where_its_sessions_live_and_no_host_keeps_them_in_process(isolated_home: Path,
                                                                               fake_llm: FakeLLM,
                                                                               tmp_path: Path) -> None:
    from tests.serve.test_serve_cli import ServeProcess

    fake_llm.script(Reply(text="in-process answer"), Reply(text="hosted answer"))
    here = ServeProcess(isolated_home, tmp_path, fake_llm, "--no-host", "--mode", "allow", "--token", TOKEN)
    hosted = ServeProcess(isolated_home, tmp_path, fake_llm, "--mode", "allow", "--token", TOKEN)
    try:
        banners = [next(line for line in iter(server.proc.stdout.readline, "")  # type: ignore[union-attr]
                        if line.startswith("sessions:")) for server in (here, hosted)]
        assert banners[0].startswith("sessions: in this process (--no-host)"), banners
        assert banners[1].startswith("sessions: live in the session host"), banners
        for server, text in ((here, "in-process answer"), (hosted, "hosted answer")):
            with httpx.stream("POST", server.url + "/api/chat", headers={"Authorization": f"Bearer {TOKEN}"},
                              json={"messages": [{"role": "user", "content": "hi"}]}, timeout=120) as response:
                events = list(sse_events(response.iter_lines()))
            assert "".join(e["content"] for e in events if "content" in e) == text
            assert bool(host_files(server.runtime)) is (server is hosted)
    finally:
        for server in (here, hosted):
            assert server.stop() == 0


def test_serve_with_no_usable_host_runs_in_process_and_says_so_once(make_serve, fake_llm: FakeLLM,
                                                                     runtime_dir: Path, capfd) -> None:
    import os

    import pytest

    folder = runtime_dir / "coder-tui"
    folder.mkdir(mode=0o700)
    try:
        os.chown(folder, 12345, 12345)
    except PermissionError:
        pytest.skip("changing a folder's owner needs root here")
    serve = make_serve(hub=True)
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    for text in ("one", "two"):
        response, events = serve.chat("hi")
        assert response.status_code == 200 and "".join(e["content"] for e in events if "content" in e) == text
    said = [line for line in capfd.readouterr().err.splitlines() if "not available" in line]
    assert len(said) == 1 and "another user" in said[0] and "in this process" in said[0]
    assert not host_files(runtime_dir)


def _shapes(serve, query: str) -> list[dict]:
    body = {"messages": [{"role": "user", "content": "explain f"}]}
    with serve.client() as http, http.stream("POST", f"/api/chat{query}", json=body) as response:
        session_id = response.headers["X-Session-Id"]
        text = json.dumps(list(sse_events(response.iter_lines())))
    return json.loads(re.sub(r"call_\d+", "CALL", text.replace(session_id, "SESSION")))


def test_a_hosted_turn_has_the_same_sse_and_seed_shapes_as_an_in_process_one(start_host, make_serve,
                                                                            fake_llm: FakeLLM) -> None:
    start_host()
    replies = (Reply(text="It reads a.", tool_calls=[call("read_file", file_path="a.py")]), Reply(text="f returns 1."))
    seen = {}
    for hub in (False, True):
        serve = make_serve(hub=hub, files={"a.py": "def f():\n    return 1\n"})
        for query in ("", "?events=seed"):
            fake_llm.script(*replies)
            seen[hub, query] = _shapes(serve, query)
    for query in ("", "?events=seed"):
        assert seen[True, query] == seen[False, query], query
    assert any("content" in data for data in seen[True, ""]) and seen[True, ""][-1] == {"done": True}


def test_a_new_session_the_host_cannot_open_is_503_with_the_hosts_reason(start_host, make_serve,
                                                                          fake_llm: FakeLLM) -> None:
    """As a session serve cannot open in its own process is: 503 and why, not 404 (which says
    "no such session" to a client that asked for a new one)."""
    import shutil

    start_host()
    serve = make_serve(hub=True, files={"a.py": "x = 1\n"})
    shutil.rmtree(serve.root)  # the folder went away: the host cannot open a session on it
    with serve.client() as client:
        response = client.post("/api/chat", json={"messages": [{"role": "user", "content": "hello"}]})
        assert response.status_code == 503, response.text
    assert "does not exist" in response.json()["error"]  # the host's reason
    assert not fake_llm.requests
