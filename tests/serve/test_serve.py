"""`coder-tui serve` over a real loopback socket with httpx: seed 002's events, `stream: false`,
apply=client, session continuation, the plan events, and the structured workflow's events."""

from __future__ import annotations

from tests.fakellm import Reply, call
from tests.planning.common import plan_reply, write
from tests.serve.conftest import sse_events

DIFF_KEYS = {"type", "file", "diff", "line_start", "line_end", "reason"}


def patch(path: str, old: str, new: str, reason: str | None = None) -> Reply:
    extra = {"reason": reason} if reason is not None else {}
    return Reply(tool_calls=[call("patch_file", file_path=path, patches=[{"old_text": old, "new_text": new}],
                                  **extra)])


def test_a_streamed_turn_speaks_seed_002(make_serve):
    serve = make_serve(files={"utils.py": "def calc(x, y):\n    return x + y\n"})
    serve.llm.script(Reply(text="I'll rename it for readability:",
                           tool_calls=patch("utils.py", "def calc(", "def calculate_sum(",
                                            reason="A name that says what it does").tool_calls),
                     Reply(text="The function now has a better name."))
    response, events = serve.chat("refactor this function", context={"current_file": {
        "path": "utils.py", "language": "python", "selection": "def calc(x, y):\n    return x + y"}})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert events[0] == {"type": "session", "session_id": response.headers["X-Session-Id"]}
    assert events[-1] == {"done": True}
    text = "".join(e["content"] for e in events if "content" in e)
    assert text == "I'll rename it for readability:\n\nThe function now has a better name."  # turns set apart
    [diff] = [e for e in events if e.get("type") == "diff"]
    assert set(diff) == DIFF_KEYS
    assert diff["file"] == "utils.py" and diff["line_start"] == diff["line_end"] == 1
    assert diff["reason"] == "A name that says what it does"
    assert "-def calc(x, y):\n+def calculate_sum(x, y):" in diff["diff"]
    assert (serve.root / "utils.py").read_text().startswith("def calculate_sum(")
    # the text came before the diff, the diff before the closing text: the order of the turn
    order = [("diff" if e.get("type") == "diff" else "content") for e in events if "content" in e or "diff" in e]
    assert order.index("diff") > 0 and order[-1] == "content"
    prompt = serve.llm.requests[0]["messages"][-1]["content"]
    assert "Current file: utils.py (python)" in prompt and "def calc(x, y):" in prompt


def test_a_diff_without_a_stated_reason_says_what_the_tool_did(make_serve):
    serve = make_serve(files={"a.txt": "one\ntwo\n"})
    serve.llm.script(Reply(tool_calls=[call("replace_lines", file_path="a.txt", start_line=2, end_line=2,
                                            new_content="TWO")]), Reply(text="ok"))
    _, events = serve.chat("fix line 2")
    [diff] = [e for e in events if e.get("type") == "diff"]
    assert diff["reason"] == "replace lines 2-2" and diff["line_start"] == 2


def test_stream_false_answers_one_json_object(make_serve):
    serve = make_serve(files={"a.py": "x = 1\n"})
    serve.llm.script(patch("a.py", "x = 1", "x = 2", reason="bump"), Reply(text="Bumped x."))
    with serve.client() as client:
        response = client.post("/api/chat", json={"messages": [{"role": "user", "content": "bump x"}],
                                                  "stream": False})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["content"] == "Bumped x." and body["errors"] == []
    assert body["session_id"] == response.headers["X-Session-Id"]
    assert body["success"] is True and body["completion_reason"] == "answered"
    [diff] = body["diffs"]
    assert set(diff) == DIFF_KEYS and diff["reason"] == "bump" and diff["file"] == "a.py"


def test_apply_client_edits_the_editors_buffers_and_writes_nothing(make_serve):
    serve = make_serve(files={"app.py": "print('saved on disk')\n"})
    buffer = "print('unsaved buffer')\n"
    serve.llm.script(
        Reply(tool_calls=[call("read_file", file_path="app.py")]),
        Reply(tool_calls=[call("patch_file", file_path="app.py", reason="louder",
                               patches=[{"old_text": "unsaved buffer", "new_text": "UNSAVED BUFFER"}]),
                          call("write_file", file_path="new/helper.py", content="X = 1\n")]),
        Reply(text="Edited."))
    _, events = serve.chat("shout", apply="client", context={"current_file": {"path": "app.py", "content": buffer}})
    assert serve.llm.requests[1]["messages"][-1]["content"].count("unsaved buffer") == 1  # read from the overlay
    diffs = {e["file"]: e for e in events if e.get("type") == "diff"}
    assert set(diffs) == {"app.py", "new/helper.py"}
    assert "-print('unsaved buffer')\n+print('UNSAVED BUFFER')" in diffs["app.py"]["diff"]
    assert diffs["app.py"]["reason"] == "louder"
    assert (serve.root / "app.py").read_text() == "print('saved on disk')\n"
    assert not (serve.root / "new").exists()
    assert events[-1] == {"done": True}
    # shell tools are not offered: a command would not see the overlay
    offered = {t["function"]["name"] for t in serve.llm.requests[0]["tools"]}
    assert "write_file" in offered and "run_command" not in offered


def test_a_conversation_continues_with_its_session_id(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(text="Hello Ada."), Reply(text="You are Ada."), Reply(text="Still Ada."))
    first, events = serve.chat("my name is Ada")
    session_id = events[0]["session_id"]
    with serve.client() as client:
        second = client.post("/api/chat", headers={"X-Session-Id": session_id}, json={
            "messages": [{"role": "user", "content": "what is my name?"}], "stream": False})
        third = client.post("/api/chat", json={"messages": [{"role": "user", "content": "and now?"}],
                                               "session_id": session_id, "stream": False})
    assert second.json()["session_id"] == third.json()["session_id"] == session_id
    sent = [m["content"] for m in serve.llm.requests[2]["messages"] if m["role"] in ("user", "assistant")]
    assert sent == ["my name is Ada", "Hello Ada.", "what is my name?", "You are Ada.", "and now?"]
    [listed] = serve.sessions()
    assert listed["session_id"] == session_id and listed["running"] is False and listed["prompt"] == "and now?"


def test_a_new_session_takes_the_earlier_messages_of_the_request(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(text="Bob."))
    serve.chat("and my name?", messages=[{"role": "user", "content": "I am Bob"},
                                          {"role": "assistant", "content": "Hi Bob"},
                                          {"role": "user", "content": "and my name?"}])
    sent = [(m["role"], m["content"]) for m in serve.llm.requests[0]["messages"][1:]]
    assert sent == [("user", "I am Bob"), ("assistant", "Hi Bob"), ("user", "and my name?")]


def test_a_resumed_session_keeps_its_record_and_not_the_requests_earlier_messages(make_serve):
    """Earlier messages in the body are for a new session only: a recorded one resumed has its own."""
    serve = make_serve(max_live=1)
    serve.llm.script(Reply(text="Hi Bob."), Reply(text="other"), Reply(text="Bob."))
    _, events = serve.chat("I am Bob")
    serve.chat("another session")  # max_live=1: the first is closed, and resumed from its record below
    serve.chat("and my name?", session_id=events[0]["session_id"],
               messages=[{"role": "user", "content": "I am Alice"}, {"role": "assistant", "content": "Hi Alice"},
                         {"role": "user", "content": "and my name?"}])
    sent = [(m["role"], m["content"]) for m in serve.llm.requests[2]["messages"][1:]]
    assert sent == [("user", "I am Bob"), ("assistant", "Hi Bob."), ("user", "and my name?")], sent


def test_unknown_session_and_apply_switch_are_refused(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(text="hi"))
    _, events = serve.chat("hello")
    with serve.client() as client:
        unknown = client.post("/api/chat", json={"messages": [{"role": "user", "content": "x"}],
                                                 "session_id": "nope-123"})
        switch = client.post("/api/chat", json={"messages": [{"role": "user", "content": "x"}],
                                                "session_id": events[0]["session_id"], "apply": "client"})
    assert unknown.status_code == 404 and "nope-123" in unknown.json()["error"]
    assert switch.status_code == 400 and "apply" in switch.json()["error"]


def test_the_model_failing_ends_with_an_error_then_done(make_serve):
    serve = make_serve()
    serve.llm.script(Reply(status=400, error_message="bad request from the model server"))
    _, events = serve.chat("hello")
    assert any("error" in e for e in events)
    assert events[-1] == {"done": True}


def test_the_structured_workflow_events_are_forwarded(make_serve):
    serve = make_serve(workflow="structured")
    serve.llm.script(plan_reply("Write the file", goal="Create b.txt"), write("b.txt", "hi\n"),
                     Reply(text="Wrote b.txt."), Reply(text="# Report\nAll done."))
    _, events = serve.chat("create b.txt with hi")
    typed = [e for e in events if e.get("type") in
             {"classification", "plan_created", "step_start", "agent_action", "step_complete"}]
    # seed 002's task type first in every turn; the router's verdict adds ours as `intent`
    assert typed[:2] == [{"type": "classification", "task_type": "add_feature"},
                         {"type": "classification", "task_type": "add_feature", "intent": "new_task"}]
    plan = typed[2]
    assert plan["type"] == "plan_created" and plan["plan"]["refined_goal"] == "Create b.txt"
    assert plan["plan"]["steps"][0] == {"id": "1", "title": "Write the file", "description": "do write the file",
                                        "status": "pending"}
    assert {"type": "step_start", "step_id": "1", "title": "Write the file"} in typed
    actions = [e for e in typed if e["type"] == "agent_action"]
    assert actions and set(actions[0]) == {"type", "step_id", "tool", "status"}
    assert {"type": "agent_action", "step_id": "1", "tool": "write_file", "status": "success"} in actions
    [done] = [e for e in typed if e["type"] == "step_complete"]
    assert done == {"type": "step_complete", "step_id": "1", "status": "done", "summary": "Wrote b.txt."}
    assert any(e.get("type") == "diff" and e["file"] == "b.txt" for e in events)
    assert "All done." in "".join(e["content"] for e in events if "content" in e)
    assert events[-1] == {"done": True}


def test_ask_mode_plan_review_is_answered_over_http(make_serve):
    serve = make_serve(mode="ask", workflow="structured")
    serve.llm.script(plan_reply("Write the file", goal="Create c.txt"), write("c.txt", "c\n"),
                     Reply(text="Wrote c.txt."), Reply(text="Report: done."))
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "create c.txt"}]}) as response:
        events = sse_events(response.iter_lines())
        session_id = next(events)["session_id"]
        review = next(e for e in events if e.get("type") == "plan_decision_required")
        assert review["kind"] == "review" and review["plan"]["refined_goal"] == "Create c.txt"
        wrong = client.post(f"/api/sessions/{session_id}/plan", json={"decision": "skip"})
        assert wrong.status_code == 400 and "does not answer a review" in wrong.json()["error"]
        ok = client.post(f"/api/sessions/{session_id}/plan", json={"decision": "approve"})
        assert ok.json() == {"session_id": session_id, "decision": "approve"}
        asked = next(e for e in events if e.get("type") == "approval_required")
        client.post(f"/api/approvals/{asked['id']}", json={"decision": "allow_once"})
        rest = list(events)
    assert (serve.root / "c.txt").read_text() == "c\n"
    assert any(e.get("type") == "step_complete" and e["status"] == "done" for e in rest)
    assert rest[-1] == {"done": True}
    with serve.client() as client:
        idle = client.post(f"/api/sessions/{session_id}/plan", json={"decision": "approve"})
        unknown = client.post("/api/sessions/nope/plan", json={"decision": "approve"})
    assert idle.status_code == 409 and unknown.status_code == 404


def test_a_seed_only_client_is_told_in_content_how_to_answer_a_plan_review(make_serve):
    # A client built from seed 002 shows content only: the review must say what waits and how to answer.
    serve = make_serve(mode="ask", workflow="structured")
    serve.llm.script(plan_reply("Write the file", goal="Create d.txt"), write("d.txt", "d\n"),
                     Reply(text="Wrote d.txt."), Reply(text="Report: done."))
    shown: list[str] = []
    with serve.client() as client, client.stream("POST", "/api/chat", json={
            "messages": [{"role": "user", "content": "create d.txt"}]}) as response:
        for event in sse_events(response.iter_lines()):
            if event.get("type") == "plan_decision_required":  # its content line came first
                assert any("/plan with" in t for t in shown), shown
            text = event.get("content", "")
            shown.append(text)
            with serve.client() as answer:
                if "/plan with" in text:
                    address = text.split("POST ")[1].split(" with")[0]
                    assert answer.post(address, json={"decision": "approve"}).status_code == 200
                elif "POST /api/approvals/" in text:
                    approval_id = text.split("POST /api/approvals/")[1].split()[0]
                    assert answer.post(f"/api/approvals/{approval_id}",
                                       json={"decision": "allow_once"}).status_code == 200
            if event.get("done"):
                break
    review = next(t for t in shown if "/plan with" in t)
    assert review.startswith('[waiting for review of the plan "Create d.txt" (1. Write the file). To answer, POST '
                             "/api/sessions/")
    assert (serve.root / "d.txt").read_text() == "d\n"


def test_apply_client_never_sends_an_edit_under_git(make_serve):
    """A hostile model reply asks the editor to write a git hook and config (issue 20)."""
    serve = make_serve(files={"app.py": "x = 1\n"})
    hostile = [".git/hooks/pre-commit", ".git/config", "sub/.git/hooks/post-checkout", ".GIT/hooks/pre-commit",
               ".git./hooks/pre-commit", "./.git/info/attributes", "a\\.git\\hooks\\pre-push"]
    serve.llm.script(*(Reply(tool_calls=[call("write_file", file_path=p, content="#!/bin/sh\ntouch /tmp/pwned\n")])
                       for p in hostile),
                     Reply(tool_calls=[call("write_file", file_path="ok.txt", content="fine\n")]), Reply(text="done"))
    _, events = serve.chat("set up hooks", apply="client")
    diffs = [e["file"] for e in events if e.get("type") == "diff"]
    assert diffs == ["ok.txt"]
    results = [m["content"] for m in serve.llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert sum("files under .git/ belong to git" in r for r in results) == len(hostile)


def test_the_diff_of_a_crlf_file_applies_with_git_apply(make_serve):
    import subprocess

    serve = make_serve(files={})
    (serve.root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    serve.llm.script(Reply(tool_calls=[call("read_file", file_path="w.txt")]), Reply(tool_calls=[call("replace_lines", file_path="w.txt", start_line=2, end_line=2,
                                            new_content="TWO")]), Reply(text="ok"))
    _, events = serve.chat("shout two")
    [diff] = [e for e in events if e.get("type") == "diff"]
    assert (serve.root / "w.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    assert "-two\r\n+TWO\r\n" in diff["diff"]
    # The file as it was takes the diff (the check runs it backwards on the file as it is now).
    patch = serve.root.parent / "w.patch"
    patch.write_bytes(diff["diff"].encode())
    check = subprocess.run(["git", "apply", "--check", "-R", str(patch)], cwd=serve.root, capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stderr
