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
