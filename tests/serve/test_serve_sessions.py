"""`coder-tui serve`'s sessions: idle ones beyond the limit close and resume from their record; a
client that leaves while an approval waits; editor paths outside the folder."""

from __future__ import annotations

import json
import socket

from tests.fakellm import Reply, call
from tests.serve.conftest import TOKEN, sse_events
from tests.serve.test_serve_safety import read_until


def test_idle_sessions_beyond_the_limit_close_and_resume_from_their_record(make_serve):
    serve = make_serve(max_live=2)
    serve.llm.script(Reply(text="A1"), Reply(text="B1"), Reply(text="C1"), Reply(text="A2"))
    ids = [serve.chat(text)[1][0]["session_id"] for text in ("I am A", "I am B", "I am C")]
    assert [s["session_id"] for s in serve.sessions()] == ids[1:]  # A, the oldest idle one, was closed
    _, events = serve.chat("who am I?", session_id=ids[0][:-2])  # a unique prefix names it too
    assert events[0]["session_id"] == ids[0] and events[-1] == {"done": True}
    sent = [m["content"] for m in serve.llm.requests[-1]["messages"] if m["role"] in ("user", "assistant")]
    assert sent == ["I am A", "A1", "who am I?"]
    assert [s["session_id"] for s in serve.sessions()] == [ids[2], ids[0]]


def test_a_client_that_leaves_while_an_approval_waits_and_does_not_return_stops_its_run(make_serve):
    serve = make_serve(mode="ask", files={"a.txt": "before\n"}, timeout=300, grace=0.5)
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="after\n")]))
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "write"}]}) as response:
        lines = response.iter_lines()
        asked = read_until(lines, "approval_required")[-1]
        assert serve.sessions()[0]["pending_approvals"][0]["id"] == asked["id"]
    # nobody reconnected within the grace period: the run is stopped, its approval answered by nobody
    serve.wait_for(lambda: serve.sessions()[0]["running"] is False, "the run to stop")
    assert serve.sessions()[0]["pending_approvals"] == []
    with serve.client() as client:
        late = client.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
    assert late.status_code == 404
    assert (serve.root / "a.txt").read_text() == "before\n"


def test_editor_files_outside_the_folder_are_refused(make_serve):
    serve = make_serve()
    with serve.client() as client:
        response = client.post("/api/chat", json={"messages": [{"role": "user", "content": "x"}], "apply": "client",
                                                  "context": {"open_files": [{"path": "../secret.txt", "content": "s"}]}})
    assert response.status_code == 400
    assert "../secret.txt" in response.json()["error"] and "outside the workspace" in response.json()["error"]
    assert serve.sessions() == [] and serve.llm.requests == []


def test_a_continued_client_session_takes_the_editors_new_buffers(make_serve):
    serve = make_serve(files={"m.py": "on disk\n"})
    serve.llm.script(Reply(text="seen"), Reply(tool_calls=[call("read_file", file_path="m.py")]), Reply(text="ok"))
    _, events = serve.chat("look", apply="client", context={"current_file": {"path": "m.py", "content": "v1\n"}})
    session_id = events[0]["session_id"]
    serve.chat("again", apply="client", session_id=session_id,
               context={"current_file": {"path": "m.py", "content": "v2 unsaved\n"}})
    assert "v2 unsaved" in serve.llm.requests[-1]["messages"][-1]["content"]
    assert (serve.root / "m.py").read_text() == "on disk\n"


def test_a_stream_false_client_that_disconnects_stops_its_run_too(make_serve):
    serve = make_serve(files={"a.txt": "kept\n"}, timeout=300)
    serve.llm.script(Reply(text="Working", chunk_size=2, stall_after=2,
                           tool_calls=[call("write_file", file_path="a.txt", content="lost\n")]))
    body = json.dumps({"messages": [{"role": "user", "content": "go"}], "stream": False}).encode()
    host, port = serve.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(f"POST /api/chat HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n".encode()
                    + f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        serve.wait_for(lambda: serve.sessions() and serve.sessions()[0]["running"], "the run to start")
        serve.wait_for(lambda: len(serve.llm.requests) == 1, "the model request")
    serve.wait_for(lambda: serve.sessions()[0]["running"] is False, "the run to stop")
    assert (serve.root / "a.txt").read_text() == "kept\n"


def test_a_seed_only_client_is_told_in_content_how_to_answer_an_approval(make_serve):
    # Seed 002 knows content, diff, error and done only: a client built from it shows the content
    # line, and whoever reads it can answer (before, only keep-alives came and the turn never ended).
    serve = make_serve(mode="ask", files={"a.txt": "old\n"})
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="new\n")]), Reply(text="ok"))
    shown: list[str] = []
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "write"}]}) as response:
        for event in sse_events(response.iter_lines()):
            if "content" in event:
                shown.append(event["content"])
                if "POST /api/approvals/" in event["content"]:
                    approval_id = event["content"].split("POST /api/approvals/")[1].split()[0]
                    with serve.client() as answer:
                        assert answer.post(f"/api/approvals/{approval_id}",
                                           json={"decision": "allow_once"}).status_code == 200
            elif event.get("done"):
                break
    # The reply streams in pieces; how many the server coalesces depends on timing.
    assert "[waiting for approval: write_file on a.txt." in shown[0] and "".join(shown[1:]).endswith("ok")
    assert (serve.root / "a.txt").read_text() == "new\n"
