"""`coder-tui serve`: the token, bad and oversized requests, approvals in ask mode, a client that
disconnects, and several chats at once (real loopback sockets, httpx)."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from tests.fakellm import Reply, call
from tests.serve.conftest import sse_events

CHAT = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize("route", [("POST", "/api/chat"), ("GET", "/api/sessions"),
                                   ("POST", "/api/approvals/ap_1")])
def test_every_route_but_health_needs_the_token(make_serve, route):
    serve = make_serve()
    method, path = route
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "test-token-0123456789"}):
        response = httpx.request(method, serve.url + path, headers=headers, json=CHAT)
        assert response.status_code == 401, headers
        assert "token" in response.json()["error"]
        assert response.headers["WWW-Authenticate"] == "Bearer"
    assert httpx.get(serve.url + "/api/health").json()["status"] == "ok"
    assert serve.llm.requests == []


@pytest.mark.parametrize(("body", "problem"), [
    (b"{not json", "not valid JSON"),
    (b"", "empty"),
    (b"[]", "body"),
    (b'{"context": {}}', "messages: Field required"),
    (b'{"messages": []}', "messages: is empty: send at least one message"),
    (b'{"messages": [{"role": "assistant", "content": "x"}]}', "messages: must end with a user message"),
    (b'{"messages": [{"role": "user"}]}', "messages.0.content: Field required"),
    (b'{"messages": [{"role": "user", "content": "x"}], "apply": "editor"}', "apply"),
])
def test_bad_requests_get_400_with_a_json_error(make_serve, body, problem):
    serve = make_serve()
    with serve.client() as client:
        response = client.post("/api/chat", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert problem in response.json()["error"]
    assert serve.llm.requests == [] and serve.sessions() == []


def test_bodies_over_the_limit_get_413(make_serve):
    serve = make_serve(max_body=4096)
    big = {"messages": [{"role": "user", "content": "x" * 5000}]}
    with serve.client() as client:
        sized = client.post("/api/chat", json=big)
        chunked = client.post("/api/chat", content=iter([json.dumps(big).encode()]))
        approval = client.post("/api/approvals/ap_1", json={"decision": "deny", "feedback": "y" * 5000})
    for response in (sized, chunked, approval):
        assert response.status_code == 413
        assert "larger than 4,096 bytes" in response.json()["error"]
    assert serve.llm.requests == []


def read_until(lines: Any, wanted: str) -> list[dict[str, Any]]:
    """Events up to and including the first whose type (or key) is `wanted`."""
    seen = []
    for event in sse_events(lines):
        seen.append(event)
        if event.get("type") == wanted or wanted in event:
            return seen
    raise AssertionError(f"the stream ended without {wanted!r}: {seen}")


def test_ask_mode_sends_approvals_answered_by_post(make_serve):
    serve = make_serve(mode="ask", files={"a.txt": "old\n"})
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="new\n", reason="newer")]),
                     Reply(tool_calls=[call("write_file", file_path="b.txt", content="b\n")]),
                     Reply(text="One written, one refused."))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        lines = response.iter_lines()
        first = read_until(lines, "approval_required")[-1]
        assert first["tool"] == "write_file" and first["kind"] == "edit" and first["reason"] == "newer"
        assert first["files"][0]["file"] == "a.txt" and "+new" in first["files"][0]["diff"]
        [pending] = serve.sessions()[0]["pending_approvals"]
        assert pending["id"] == first["id"]
        assert client.post(f"/api/approvals/{first['id']}", json={"decision": "allow_once"}).status_code == 200
        second = read_until(lines, "approval_required")[-1]
        answer = client.post(f"/api/approvals/{second['id']}", json={"decision": "deny", "feedback": "not b"})
        assert answer.json()["decision"] == "deny"
        rest = list(sse_events(lines))
    assert (serve.root / "a.txt").read_text() == "new\n" and not (serve.root / "b.txt").exists()
    assert rest[-1] == {"done": True}
    assert "not b" in serve.llm.requests[2]["messages"][-1]["content"]
    with serve.client() as client:
        gone = client.post(f"/api/approvals/{second['id']}", json={"decision": "allow_once"})
        wrong = client.post("/api/approvals/ap_x", json={"decision": "maybe"})
    # answered already: a late answer is a 409 naming who answered, as in the session host (issue 33)
    assert gone.status_code == 409 and second["id"] in gone.json()["error"] and "by serve" in gone.json()["error"]
    assert wrong.status_code == 400 and "decision" in wrong.json()["error"]


def test_a_stop_decision_ends_the_run(make_serve):
    serve = make_serve(mode="ask")
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="c.txt", content="c\n")]))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        lines = response.iter_lines()
        asked = read_until(lines, "approval_required")[-1]
        client.post(f"/api/approvals/{asked['id']}", json={"decision": "stop"})
        rest = list(sse_events(lines))
    assert {"type": "complete", "success": False, "completion_reason": "stopped"} in rest
    assert rest[-1] == {"done": True} and not (serve.root / "c.txt").exists()


def test_a_client_that_disconnects_and_does_not_return_has_its_run_stopped(make_serve):
    # only the disconnect can end the run: once the grace period for a reconnect has passed
    serve = make_serve(files={"a.txt": "original\n"}, timeout=300, grace=0.5)
    # the model streams its text, then hangs in the middle of a write_file call
    serve.llm.script(Reply(text="Rewriting a.txt now.", chunk_size=5, stall_after=5,
                           tool_calls=[call("write_file", file_path="a.txt", content="half" * 1000)]))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        lines = response.iter_lines()  # kept: dropping the generator would close the response already
        read_until(lines, "content")
        assert serve.sessions()[0]["running"] is True
    # the response is closed: after the grace period the server stops the run and waits for it to end
    serve.wait_for(lambda: serve.sessions() and serve.sessions()[0]["running"] is False, "the run to stop")
    assert (serve.root / "a.txt").read_text() == "original\n"
    assert sorted(p.name for p in serve.root.iterdir()) == ["a.txt"]  # no temp file left behind
    serve.llm.script(Reply(text="back"))  # the session is free for the next turn
    session_id = serve.sessions()[0]["session_id"]
    _, events = serve.chat("again", session_id=session_id)
    assert "".join(e.get("content", "") for e in events) == "back"


def route_by_task(body: dict[str, Any]) -> Reply:
    """The scripted model for two chats at once: task A writes a.txt, task B b.txt."""
    name = "a.txt" if "task A" in body["messages"][1]["content"] else "b.txt"
    if body["messages"][-1]["role"] == "tool":
        return Reply(text=f"{name} written")
    return Reply(tool_calls=[call("write_file", file_path=name, content=f"{name}\n")])


def chat_in_thread(serve: Any, text: str) -> tuple[list[dict[str, Any]], threading.Event, threading.Thread]:
    """A streamed chat read by a thread: its events so far, set once it asks for an approval."""
    events: list[dict[str, Any]] = []
    asked = threading.Event()

    def read() -> None:
        body = {"messages": [{"role": "user", "content": text}]}
        with serve.client() as client, client.stream("POST", "/api/chat", json=body) as response:
            for event in sse_events(response.iter_lines()):
                events.append(event)
                if event.get("type") == "approval_required":
                    asked.set()

    thread = threading.Thread(target=read)
    thread.start()
    return events, asked, thread


def test_several_chats_run_at_once_on_separate_sessions(make_serve):
    serve = make_serve(mode="ask")
    serve.llm.responder = route_by_task
    events_a, asked_a, thread = chat_in_thread(serve, "task A")
    assert asked_a.wait(30)
    # A waits for its approval; B runs from start to end meanwhile, in its own session
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "task B"}]}) as response:
        lines = response.iter_lines()
        events_b = read_until(lines, "approval_required")
        assert [s["running"] for s in serve.sessions()] == [True, True]
        client.post(f"/api/approvals/{events_b[-1]['id']}", json={"decision": "allow_once"})
        events_b += list(sse_events(lines))
    assert (serve.root / "b.txt").exists() and not (serve.root / "a.txt").exists()
    assert "b.txt written" in "".join(e.get("content", "") for e in events_b)
    with serve.client() as client:
        client.post(f"/api/approvals/{events_a[-1]['id']}", json={"decision": "allow_all"})
    thread.join(30)
    assert events_a[-1] == {"done": True} and (serve.root / "a.txt").read_text() == "a.txt\n"
    assert events_a[0]["session_id"] != events_b[0]["session_id"]
    assert [(s["session_id"], s["running"]) for s in serve.sessions()] == [
        (events_a[0]["session_id"], False), (events_b[0]["session_id"], False)]


def test_a_busy_session_refuses_a_second_turn(make_serve):
    serve = make_serve(mode="ask")
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="x.txt", content="x\n")]), Reply(text="ok"))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        lines = response.iter_lines()
        asked = read_until(lines, "approval_required")
        session_id = asked[0]["session_id"]
        busy = client.post("/api/chat", json={**CHAT, "session_id": session_id})
        assert busy.status_code == 409 and "done event" in busy.json()["error"]
        client.post(f"/api/approvals/{asked[-1]['id']}", json={"decision": "allow_once"})
        assert list(sse_events(lines))[-1] == {"done": True}


def test_a_silent_stream_gets_keep_alive_comments(make_serve, monkeypatch):
    from agent.frontends.serve import app as serve_app

    monkeypatch.setattr(serve_app, "KEEPALIVE", 0.05)
    serve = make_serve(mode="ask")
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="k.txt", content="k\n")]), Reply(text="ok"))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        lines = response.iter_lines()
        asked = read_until(lines, "approval_required")[-1]
        assert next(line for line in lines if line) == ": keep-alive"  # while the approval waits
        client.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
        assert list(sse_events(lines))[-1] == {"done": True}
