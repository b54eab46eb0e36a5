"""Seed 002's event ids and `Last-Event-ID` on `coder-tui serve` (real loopback sockets, httpx):
a streaming client whose connection drops re-sends its request with `Last-Event-ID` and receives
what it missed, then the live rest; its run went on meanwhile and its approval waited for a client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakellm import Reply, call

CHAT = {"messages": [{"role": "user", "content": "write it"}]}


def id_frames(lines: Iterator[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(id, data) of each SSE frame; every frame of a turn must carry its id."""
    event_id = None
    for line in lines:
        if line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("data: "):
            assert event_id is not None, f"a frame without an id: {line}"
            yield event_id, json.loads(line[6:])
            event_id = None


def test_a_dropped_client_reconnects_with_last_event_id_and_gets_what_it_missed_then_the_rest(make_serve):
    serve = make_serve(mode="ask", files={"a.txt": "before\n"}, timeout=300)
    serve.llm.script(Reply(text="Writing.", tool_calls=[call("write_file", file_path="a.txt", content="after\n")]),
                     Reply(text="All written."))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        frames = id_frames(response.iter_lines())
        first_id, first = next(frames)
        session_id = response.headers["X-Session-Id"]
    assert first == {"type": "session", "session_id": session_id}
    # the connection dropped before the approval was asked: the run goes on and asks it of nobody
    serve.wait_for(lambda: serve.sessions()[0]["pending_approvals"], "the approval to be asked")
    assert serve.sessions()[0]["running"] is True and (serve.root / "a.txt").read_text() == "before\n"

    headers = {"Last-Event-ID": str(first_id), "X-Session-Id": session_id}
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT, headers=headers) as again:
        assert again.status_code == 200
        resumed = id_frames(again.iter_lines())
        seen = []
        for item in resumed:
            seen.append(item)
            if item[1].get("type") == "approval_required":
                break
        client.post(f"/api/approvals/{item[1]['id']}", json={"decision": "allow_once"})
        seen += list(resumed)  # the live rest, to the end of the turn
    ids = [event_id for event_id, _ in seen]
    assert ids == list(range(first_id + 1, first_id + 1 + len(ids)))  # nothing missed, nothing twice
    datas = [data for _, data in seen]
    assert datas[0]["type"] == "classification" and datas[-1] == {"done": True}
    assert "".join(d.get("content", "") for d in datas).endswith("All written.")
    assert (serve.root / "a.txt").read_text() == "after\n"
    assert len(serve.llm.requests) == 2  # the message of the reconnect started no turn

    with serve.client() as client:  # the whole turn received: nothing more (an EventSource stops on 204)
        done = client.post("/api/chat", json=CHAT, headers={**headers, "Last-Event-ID": str(ids[-1])})
    assert done.status_code == 204
    serve.llm.script(Reply(text="next"))
    with serve.client() as client, client.stream("POST", "/api/chat", json={**CHAT, "session_id": session_id}) as r:
        next_ids = [event_id for event_id, _ in id_frames(r.iter_lines())]
    assert next_ids[0] == ids[-1] + 1  # monotonic per session, across turns


def test_a_turn_that_ended_while_nobody_was_connected_is_replayed_whole(make_serve):
    serve = make_serve(files={"a.txt": "x\n"})
    serve.llm.script(Reply(text="Part one, ", chunk_size=4), Reply(text="unused"))
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT) as response:
        first_id, _ = next(id_frames(response.iter_lines()))
        session_id = response.headers["X-Session-Id"]
    serve.wait_for(lambda: serve.sessions()[0]["running"] is False, "the turn to end")
    headers = {"Last-Event-ID": str(first_id), "X-Session-Id": session_id}
    with serve.client() as client, client.stream("POST", "/api/chat", json=CHAT, headers=headers) as again:
        datas = [data for _, data in id_frames(again.iter_lines())]
    assert "".join(d.get("content", "") for d in datas) == "Part one, " and datas[-1] == {"done": True}
    assert len(serve.llm.requests) == 1


def test_a_reconnect_must_name_a_live_session_and_an_id_it_sent(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(text="hi"))
    response, events = serve.chat("hello")
    session_id = events[0]["session_id"]
    with serve.client() as client:
        anonymous = client.post("/api/chat", json=CHAT, headers={"Last-Event-ID": "1"})
        garbled = client.post("/api/chat", json=CHAT, headers={"Last-Event-ID": "one", "X-Session-Id": session_id})
        unknown = client.post("/api/chat", json=CHAT, headers={"Last-Event-ID": "1", "X-Session-Id": "nope"})
        future = client.post("/api/chat", json=CHAT, headers={"Last-Event-ID": "999", "X-Session-Id": session_id})
        collected = client.post("/api/chat", json={**CHAT, "stream": False},
                                headers={"Last-Event-ID": "1", "X-Session-Id": session_id})
    assert anonymous.status_code == 400 and "X-Session-Id" in anonymous.json()["error"]
    assert garbled.status_code == 400 and "'one'" in garbled.json()["error"]
    assert unknown.status_code == 404 and "no live session 'nope'" in unknown.json()["error"]
    assert future.status_code == 409 and "never sent" in future.json()["error"]
    assert collected.status_code == 400 and "stream" in collected.json()["error"]
    assert len(serve.llm.requests) == 1
