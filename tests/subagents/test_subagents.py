"""Subagents through the real loop: a parent's `agent` calls start child sessions on the scripted
model server (loopback HTTP); children run in parallel, ask through the parent's approval queue,
stop with it, spend from its budget and never lose each other's edits."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from agent.approval import Decision, QueueApprover
from agent.session.record import SessionStore
from tests.fakellm import FakeLLM, Reply, call
from tests.subagents.common import ByAsker


def agent_calls(*tasks: str, **extra: Any) -> Reply:
    return Reply(tool_calls=[call("agent", task=task, **extra) for task in tasks])


async def test_three_children_started_in_one_step_run_in_parallel(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.responder = ByAsker({
        "parent": [agent_calls("alpha look", "beta look", "gamma look"), Reply(text="all three reported")],
        "alpha": [Reply(text="alpha report", delay=0.3)],
        "beta": [Reply(text="beta report", delay=0.3)],
        "gamma": [Reply(text="gamma report", delay=0.3)],
    })
    h = make_harness(mode="allow")
    complete = await h.run("split the work")
    assert complete.success and complete.final_response == "all three reported"
    finished = h.of("subagent_finished")
    assert len(finished) == 3 and all(f.ok for f in finished)
    # every child's interval overlaps every other's: they ran at once, not one after another
    for a in finished:
        for b in finished:
            assert a.started < b.ended and b.started < a.ended
    # each child's report is its call's result, in the parent's conversation
    results = [m["content"] for m in h.session.messages if m["role"] == "tool"]
    assert sorted(results) == ["alpha report", "beta report", "gamma report"]
    started = h.of("subagent_started")
    assert {s.parent_id for s in started} == {h.session.session_id}
    assert {s.call_id for s in started} == {f.call_id for f in finished}


async def test_children_are_sessions_recorded_under_their_parent(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.responder = ByAsker({"parent": [agent_calls("alpha look"), Reply(text="done")],
                                  "alpha": [Reply(text="alpha report")]})
    h = make_harness(mode="allow")
    await h.run("delegate")
    child_id = h.of("subagent_started")[0].child_id
    store = SessionStore()
    writer, data = store.reopen(store.resolve(child_id))
    writer.close()
    assert data.meta["parent_id"] == h.session.session_id and data.meta["agent"] == "coder"
    assert any(m["role"] == "assistant" and m.get("content") == "alpha report" for m in data.messages)
    # `last` is the parent, never a child
    assert store.resolve("last", workspace=h.session.workspace.label).stem == h.session.session_id


async def test_a_child_approval_names_the_child_and_is_answered_once(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.responder = ByAsker({
        "parent": [agent_calls("alpha write"), Reply(text="done")],
        "alpha": [Reply(tool_calls=[call("write_file", file_path="a.txt", content="hi\n")]), Reply(text="wrote it")],
    })
    approver = QueueApprover()
    h = make_harness(mode="ask", approver=approver)
    turn = asyncio.create_task(h.run("delegate"))
    while not h.of("approval_required"):
        await asyncio.sleep(0.01)
    asked = h.of("approval_required")[0]
    child_id = h.of("subagent_started")[0].child_id
    assert asked.child_id == child_id and asked.parent_id == h.session.session_id
    assert asked.asker is not None and "alpha write" in asked.asker and asked.asker.startswith("coder #1")
    assert [u.status for u in h.of("subagent_update")][-1] == "waiting"
    assert h.session.answer(asked.approval_id, Decision("allow_once"))
    assert not h.session.answer(asked.approval_id, Decision("allow_once"))  # once only
    complete = await turn
    assert complete.success and h.read("a.txt") == "hi\n"
    assert len(h.of("approval_required")) == 1 and len(h.of("approval_resolved")) == 1


async def test_a_stop_ends_every_child(fake_llm: FakeLLM, make_harness: Any) -> None:
    hold = threading.Event()  # never set: the children wait on the model until stopped
    fake_llm.responder = ByAsker({
        "parent": [agent_calls("alpha wait", "beta wait")],
        "alpha": [Reply(text="never", hold=hold)], "beta": [Reply(text="never", hold=hold)],
    })
    h = make_harness(mode="allow")
    turn = asyncio.create_task(h.run("delegate"))
    while len(h.of("subagent_started")) < 2:
        await asyncio.sleep(0.01)
    await fake_llm.until_asked(3)
    assert h.session.stop()
    complete = await asyncio.wait_for(turn, 10)
    assert complete.completion_reason == "stopped"
    finished = h.of("subagent_finished")
    assert len(finished) == 2 and {f.reason for f in finished} == {"stopped"}
    assert not h.session.ctx.extras["subagents"].live
    hold.set()  # the server's held replies end (the clients are gone)


async def test_the_parents_cost_cap_stops_children_that_would_exceed_it(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.responder = ByAsker({
        "parent": [Reply(tool_calls=[call("agent", task="alpha spend")], usage=(100, 10)),
                   Reply(text="never asked")],
        "alpha": [Reply(tool_calls=[call("list_dir")], usage=(2000, 10)), Reply(text="never asked")],
    })
    h = make_harness(mode="allow")
    h.session.config.max_tokens = 1500
    complete = await h.run("delegate")
    finished = h.of("subagent_finished")[0]
    assert not finished.ok and finished.reason == "budget"
    assert fake_llm.responder.asked == {"parent": 1, "alpha": 1}  # neither asked past the cap
    assert complete.completion_reason == "budget"


async def test_two_children_patching_one_file_never_lose_an_edit(fake_llm: FakeLLM, make_harness: Any) -> None:
    alpha_patched = threading.Event()

    def patch(old: str, new: str) -> Reply:
        return Reply(tool_calls=[call("patch_file", file_path="f.txt", patches=[{"old_text": old, "new_text": new}])])

    read = Reply(tool_calls=[call("read_file", file_path="f.txt")])
    script = ByAsker({
        "parent": [agent_calls("alpha edit", "beta edit"), Reply(text="done")],
        # both read the file; alpha patches it; then beta's whole-file write from its old view is
        # refused as stale, and beta reads again and patches the current text
        "alpha": [read, patch("one", "ONE"), Reply(text="alpha done")],
        "beta": [read, Reply(tool_calls=[call("write_file", file_path="f.txt", content="one\nTWO\n")],
                             hold=alpha_patched),
                 read, patch("two", "TWO"), Reply(text="beta done")],
    })

    def respond(body: dict[str, Any]) -> Reply:
        reply = script(body)
        if script.asked.get("alpha") == 3:  # alpha asks again once its patch is made
            alpha_patched.set()
        return reply

    fake_llm.responder = respond
    h = make_harness(mode="allow", files={"f.txt": "one\ntwo\n"})
    complete = await h.run("delegate")
    assert complete.success, complete.final_response
    assert h.read("f.txt") == "ONE\nTWO\n"
    beta = next(s.child_id for s in h.of("subagent_started") if s.task.startswith("beta"))
    store = SessionStore()
    writer, data = store.reopen(store.resolve(beta))
    writer.close()
    failed = [e for e in data.events if e.get("type") == "tool_result" and not e["ok"]]
    assert len(failed) == 1 and "changed since you last read it" in failed[0]["error"]


async def test_two_views_of_one_folder_writing_one_base_at_once_keep_one_and_refuse_the_other(tmp_path: Path) -> None:
    from agent.diffing import FileChange
    from agent.workspaces.base import ConflictError
    from agent.workspaces.local import LocalWorkspace

    (tmp_path / "f.txt").write_text("base\n")
    views = [LocalWorkspace(tmp_path) for _ in range(2)]
    for attempt in range(40):  # the check and the write are one step under the file's lock
        base = (tmp_path / "f.txt").read_text()
        results = await asyncio.gather(*(v.apply([FileChange("f.txt", base, f"{attempt}-{n}\n")]) for n, v in
                                         enumerate(views)), return_exceptions=True)
        refused = [r for r in results if isinstance(r, ConflictError)]
        assert len(refused) == 1, results


TESTER = "---\nname: tester\ndescription: Reads and reports\ntools: read\n---\nOnly read; report what you saw.\n"


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


async def test_untrusted_project_agent_definitions_are_ignored_with_a_warning(fake_llm: FakeLLM,
                                                                              make_harness: Any) -> None:
    fake_llm.responder = ByAsker({"parent": [Reply(tool_calls=[call("agent", task="alpha look", agent="tester")]),
                                             Reply(text="done")]})
    h = make_harness(mode="allow", files={".coder-tui/agents/tester.md": TESTER})
    await h.run("delegate")
    assert any("ignored the agent definitions in .coder-tui/agents (1 file(s))" in w.message
               and "not trusted" in w.message for w in h.of("warning"))
    assert "no agent 'tester'" in h.last_tool_message() and not h.of("subagent_started")


async def test_a_trusted_project_agent_runs_with_its_tools_and_instructions(fake_llm: FakeLLM,
                                                                            make_harness: Any) -> None:
    fake_llm.responder = ByAsker({"parent": [Reply(tool_calls=[call("agent", task="alpha look", agent="tester")]),
                                             Reply(text="done")],
                                  "alpha": [Reply(text="saw it")]})
    h = make_harness(mode="allow", files={".coder-tui/agents/tester.md": TESTER})
    h.session.config.workspace_trusted = True
    await h.run("delegate")
    child = next(b for b in fake_llm.requests if "Task: alpha" in str(b["messages"]))
    assert "Only read; report what you saw." in str(child["messages"])
    assert "read_file" in tool_names(child) and not tool_names(child) & {"write_file", "bash_exec", "agent"}
    assert h.of("subagent_finished")[0].ok


async def test_a_child_never_has_more_than_its_parent(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.responder = ByAsker({"parent": [Reply(tool_calls=[call("agent", task="alpha change")]), Reply(text="ok")],
                                  "alpha": [Reply(text="could only read")]})
    h = make_harness(mode="plan")
    await h.run("delegate")
    started = h.of("subagent_started")[0]
    assert started.mode == "plan"
    parent = tool_names(fake_llm.requests[0])
    child = tool_names(next(b for b in fake_llm.requests if "Task: alpha" in str(b["messages"])))
    assert child and child <= parent - {"agent"} and "write_file" not in child


def test_sessions_lists_each_child_under_its_parent_with_its_task(fake_llm: FakeLLM, tmp_path: Path,
                                                                  isolated_home: Path) -> None:
    import subprocess

    from tests.conftest import cli, cli_env, write_files

    ws = write_files(tmp_path / "ws", {"a.txt": "1\n"})
    fake_llm.responder = ByAsker({"parent": [agent_calls("alpha look", "beta look"), Reply(text="done")],
                                  "alpha": [Reply(text="a")], "beta": [Reply(text="b")]})
    ran = subprocess.run(cli("run", "delegate", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
                             "--api-key", "sk-test-tree", "--mode", "allow", "--json"),
                         env=cli_env(isolated_home), capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    started = [json.loads(line) for line in lines if '"subagent_started"' in line]
    parent = json.loads(lines[0])["session_id"]
    assert len(started) == 2 and {s["parent_id"] for s in started} == {parent}
    listed = subprocess.run(cli("sessions"), env=cli_env(isolated_home), capture_output=True, text=True,
                            timeout=60).stdout.splitlines()
    assert listed[0].startswith(parent) and listed[0].endswith("delegate")
    children = listed[1:3]
    assert all(line.startswith("  └ ") for line in children)
    assert sorted(line.rsplit("  ", 1)[1] for line in children) == ["coder: alpha look", "coder: beta look"]


async def test_the_model_cannot_choose_a_childs_model(fake_llm: FakeLLM, make_harness: Any) -> None:
    """Which model (so which provider gets the key) is the user's choice: an agent file's, or the parent's."""
    fake_llm.responder = ByAsker({"parent": [Reply(tool_calls=[call("agent", task="alpha x", model="other/model")]),
                                             Reply(text="ok")]})
    h = make_harness(mode="allow")
    await h.run("delegate")
    assert not h.of("subagent_started") and "model" in h.last_tool_message()
    assert "model" not in json.dumps(fake_llm.requests[0]["tools"][[t["function"]["name"] for t in
                                                                  fake_llm.requests[0]["tools"]].index("agent")]
                                     ["function"]["parameters"]["properties"])


async def test_undo_in_the_parent_covers_a_childs_edits(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.responder = ByAsker({
        "parent": [agent_calls("alpha edit"), Reply(text="done")],
        "alpha": [Reply(tool_calls=[call("write_file", file_path="f.txt", content="child's\n")]), Reply(text="ok")],
    })
    h = make_harness(mode="allow", files={"f.txt": "mine\n"})
    await h.run("delegate")
    assert h.read("f.txt") == "child's\n"
    restored, _ = await h.session.undo()
    assert "before write_file f.txt" in restored.label
    assert h.read("f.txt") == "mine\n"


async def test_a_child_session_is_resumed_as_itself_without_the_agent_tool(fake_llm: FakeLLM, make_harness: Any,
                                                                            tmp_path: Path) -> None:
    fake_llm.responder = ByAsker({"parent": [agent_calls("alpha look"), Reply(text="done")],
                                  "alpha": [Reply(text="alpha report"), Reply(text="more from alpha")]})
    h = make_harness(mode="allow")
    await h.run("delegate")
    child_id = h.of("subagent_started")[0].child_id
    again = make_harness(mode="allow", resume=child_id, root=tmp_path / "ws")
    assert again.session.session_id == child_id and again.session.registry.get("agent") is None
    complete = await again.run("go on")
    assert complete.final_response == "more from alpha"
    assert any(m.get("content") == "alpha report" for m in again.session.messages)  # its own context
