"""`GET /api/sessions/{id}/events`: following a live serve session from a second client (SSE in
the `run --json` shapes), joining late, over a real loopback socket."""

from __future__ import annotations

import httpx

from tests.fakellm import Reply, call
from tests.serve.conftest import sse_events

EDIT = Reply(tool_calls=[call("write_file", file_path="b.txt", content="b\n")])


def test_a_follower_joining_late_gets_the_session_so_far_then_the_live_events(make_serve):
    serve = make_serve(mode="ask")
    serve.llm.script(EDIT, Reply(text="Wrote b.txt."))
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "write b.txt"}]}) as response:
        events = sse_events(response.iter_lines())
        session_id = next(events)["session_id"]
        asked = next(e for e in events if e.get("type") == "approval_required")
        # a second client follows the session while its approval waits
        with serve.client() as follower, follower.stream("GET", f"/api/sessions/{session_id[:17]}/events") as watch:
            assert watch.status_code == 200 and watch.headers["content-type"] == "text/event-stream"
            followed = sse_events(watch.iter_lines())
            replay = []
            for data in followed:
                replay.append(data)
                if data["type"] == "replay_end":
                    break
            assert replay[-1] == {"type": "replay_end", "session_id": session_id, "running": True,
                                  "pending": [asked["id"]]}
            kinds = [data["type"] for data in replay]
            assert kinds[0] == "run_started" and replay[0]["prompt"] == "write b.txt"
            required = next(data for data in replay if data["type"] == "approval_required")
            assert required["approval_id"] == asked["id"] and required["files"][0]["path"] == "b.txt"
            client.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
            live = []
            for data in followed:
                live.append(data)
                if data["type"] == "complete":
                    break
        list(events)
    kinds = [data["type"] for data in live]
    assert kinds[0] == "approval_resolved" and "file_changed" in kinds and kinds[-1] == "complete"
    text = "".join(data["text"] for data in live if data["type"] == "text_delta")
    assert text == "Wrote b.txt."
    # after the turn: a new follower gets the whole turn, its streamed text joined into one event
    with serve.client() as follower, follower.stream("GET", f"/api/sessions/{session_id}/events") as watch:
        replay = []
        for data in sse_events(watch.iter_lines()):
            replay.append(data)
            if data["type"] == "replay_end":
                break
    assert replay[-1]["running"] is False and replay[-1]["pending"] == []
    assert [data["text"] for data in replay if data["type"] == "text_delta"] == ["Wrote b.txt."]
    assert [data["type"] for data in replay].count("run_started") == 1


def test_following_needs_the_token_and_a_live_session(make_serve):
    serve = make_serve()
    with serve.client() as client:
        unknown = client.get("/api/sessions/nope/events")
    with httpx.Client(base_url=serve.url, timeout=30) as anonymous:
        refused = anonymous.get("/api/sessions/nope/events")
    assert unknown.status_code == 404 and "no live session" in unknown.json()["error"]
    assert refused.status_code == 401
