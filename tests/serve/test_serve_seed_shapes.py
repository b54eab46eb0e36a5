"""Seed 002's classification in every turn, and seed 003's event shapes (`?events=seed`) on `serve`."""

from __future__ import annotations

import pytest

from agent.planning.seedtypes import seed_task_type
from tests.fakellm import Reply, call
from tests.serve.conftest import sse_events


@pytest.mark.parametrize(("text", "kind"), [
    ("refactor this function", "refactor"), ("rename calc to calculate_sum", "refactor"),
    ("fix the crash in parse()", "fix"), ("the tests fail since yesterday", "fix"),
    ("explain this error", "explain"), ("what does f return", "explain"),
    ("add a --verbose flag", "add_feature"), ("implement caching for the map", "add_feature"),
    ("is this thread-safe?", "question"), ("hello", "other")])
def test_seed_task_types_by_rule(text, kind):
    assert seed_task_type(text) == kind


def test_every_turn_starts_with_seed_002s_classification(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(text="It is."), Reply(text="Done."))
    _, first = serve.chat("is this thread-safe?")
    assert first[1] == {"type": "classification", "task_type": "question"}  # right after the session
    _, second = serve.chat("fix the race", session_id=first[0]["session_id"])
    assert second[1] == {"type": "classification", "task_type": "fix"}
    with serve.client() as client:
        body = client.post("/api/chat", json={"messages": [{"role": "user", "content": "refactor it"}],
                                              "stream": False}).json()
    assert body["task_type"] == "refactor"


def test_seed_003_shapes_carry_a_whole_turn_with_an_approval(make_serve):
    serve = make_serve(mode="ask", files={"a.txt": "old\n"})
    serve.llm.script(Reply(text="Writing it.", tool_calls=[call("write_file", file_path="a.txt", content="new\n")]),
                     Reply(text="Done."))
    seen: list[dict] = []
    with serve.client() as client, client.stream("POST", "/api/chat?events=seed", json={
            "messages": [{"role": "user", "content": "write a.txt"}]}) as response:
        for event in sse_events(response.iter_lines()):
            seen.append(event)
            if event.get("type") == "approval_required":
                with serve.client() as answer:
                    assert answer.post(f"/api/approvals/{event['approval_id']}",
                                       json={"decision": "allow_once"}).status_code == 200
            if event.get("done"):
                break
    kinds = [e.get("type") for e in seen]
    assert "diff" not in kinds and "tool_call" not in kinds  # ours are not mixed in
    [approval] = [e for e in seen if e.get("type") == "approval_required"]
    assert approval == {"type": "approval_required", "approval_id": approval["approval_id"],
                        "tool_name": "write_file",
                        "tool_parameters": {"file_path": "a.txt", "content": "new\n", "reason": ""}}
    steps = [e for e in seen if e.get("type") == "agent_step"]
    assert [s["iteration"] for s in steps] == [1, 2]
    assert steps[0]["thought"] == steps[0]["response_text"] == "Writing it." and not steps[0]["is_complete"]
    assert steps[0]["tool_calls"][0]["name"] == "write_file"
    assert steps[0]["tool_results"][0]["name"] == "write_file" and steps[0]["tool_results"][0]["success"]
    assert steps[1] == {"type": "agent_step", "iteration": 2, "thought": "", "tool_calls": [], "tool_results": [],
                        "response_text": "Done.", "is_complete": True}
    chunks = "".join(e["content"] for e in seen if e.get("type") == "text_chunk")
    assert chunks == "Writing it.Done."
    complete = next(e for e in seen if e.get("type") == "complete")
    assert complete["success"] and complete["final_response"] == "Done." and complete["iterations"] == 2
    assert kinds.index("complete") > kinds.index("agent_step") and seen[-1] == {"done": True}
    assert (serve.root / "a.txt").read_text() == "new\n"


def test_an_unknown_event_shape_is_refused(make_serve):
    serve = make_serve()
    with serve.client() as client:
        response = client.post("/api/chat?events=theirs", json={"messages": [{"role": "user", "content": "x"}]})
        body_refused = client.post("/api/chat", json={"messages": [{"role": "user", "content": "x"}],
                                                      "events": "theirs"})
    assert response.status_code == 400 and "events='theirs'" in response.json()["error"]
    assert body_refused.status_code == 400 and "events" in body_refused.json()["error"]


def test_a_client_over_its_turn_limit_gets_429_with_retry_after(make_serve):
    serve = make_serve(rate_limit=2)
    serve.llm.script(Reply(text="one"), Reply(text="two"))
    assert serve.chat("one")[0].status_code == 200 and serve.chat("two")[0].status_code == 200
    with serve.client() as client:
        refused = client.post("/api/chat", json={"messages": [{"role": "user", "content": "three"}]})
        assert client.get("/api/sessions").status_code == 200  # only turns are counted
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "at most 2 turns a minute" in refused.json()["error"]
    assert serve.llm.remaining == 0 and len(serve.llm.requests) == 2  # the third never reached the model


def test_the_turn_window_slides():
    from agent.frontends.serve.limits import TurnLimit

    now = [100.0]
    limit = TurnLimit(2, clock=lambda: now[0])
    assert limit.wait("a") == 0 and limit.wait("a") == 0
    now[0] = 130.2
    assert limit.wait("a") == 30 and limit.wait("b") == 0  # another client has its own window
    now[0] = 160.0
    assert limit.wait("a") == 0  # the first turn left the window
