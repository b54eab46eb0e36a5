"""Subagents over `coder-tui serve`: the SSE stream carries each child's start, progress and end,
with the child's id and its parent's (the session the client holds)."""

from __future__ import annotations

from tests.fakellm import Reply, call
from tests.subagents.common import ByAsker


def test_the_stream_carries_each_childs_events_with_its_ids(make_serve):
    serve = make_serve(files={"a.py": "x = 1\n"})
    serve.llm.responder = ByAsker({
        "parent": [Reply(tool_calls=[call("agent", task="alpha read a.py"), call("agent", task="beta read a.py")]),
                   Reply(text="Both read it.")],
        "alpha": [Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="x is 1")],
        "beta": [Reply(text="it sets x")],
    })
    response, events = serve.chat("delegate the reading")
    assert response.status_code == 200
    parent = response.headers["X-Session-Id"]
    started = [e for e in events if e.get("type") == "subagent_started"]
    finished = [e for e in events if e.get("type") == "subagent_finished"]
    assert len(started) == 2 and {e["parent_id"] for e in started + finished} == {parent}
    assert {e["child_id"] for e in started} == {e["child_id"] for e in finished}
    assert sorted(e["report"] for e in finished) == ["it sets x", "x is 1"]
    updates = [e for e in events if e.get("type") == "subagent_update" and e.get("tool") == "read_file"]
    assert updates and updates[0]["detail"] == "a.py" and updates[0]["parent_id"] == parent


def test_a_childs_approval_names_it_and_is_answered_over_http(make_serve):
    from tests.serve.conftest import sse_events

    serve = make_serve(mode="ask")
    serve.llm.responder = ByAsker({
        "parent": [Reply(tool_calls=[call("agent", task="alpha write c.txt")]), Reply(text="Done.")],
        "alpha": [Reply(tool_calls=[call("write_file", file_path="c.txt", content="c\n")]), Reply(text="wrote c.txt")],
    })
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "delegate"}]}) as response:
        events = sse_events(response.iter_lines())
        session_id = next(events)["session_id"]
        asked = next(e for e in events if e.get("type") == "approval_required")
        assert asked["parent_id"] == session_id and asked["child_id"] != session_id
        assert asked["asker"] == "coder #1: alpha write c.txt" and asked["tool"] == "write_file"
        answered = client.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
        again = client.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
        rest = list(events)
    assert answered.status_code == 200 and again.status_code != 200
    assert (serve.root / "c.txt").read_text() == "c\n"
    assert [e["report"] for e in rest if e.get("type") == "subagent_finished"] == ["wrote c.txt"]
