"""`coder-tui run` with the structured workflow, as users run it: a subprocess and the scripted model."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, cli_env
from tests.fakellm import FakeLLM, Reply
from tests.planning.common import plan_reply, user_text, write


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def run_args(llm: FakeLLM, ws: Path, *extra: str, prompt: str | None = "build it in steps") -> list[str]:
    return cli("run", *([prompt] if prompt is not None else []), "--workspace", str(ws), "--model", llm.model,
               "--api-base", llm.url, "--api-key", "sk-test-plan-secret-000", *extra)


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_json_mode_prints_the_plan_events_with_their_wire_fields(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(plan_reply("Make a", "Make b", "Final report"), write("a.txt", "a\n"), Reply(text="a made"),
                    Reply(text="b made"), Reply(text="all made"), Reply(text="The report."))
    done = subprocess.run(run_args(fake_llm, ws, "--workflow", "structured", "--mode", "allow", "--json"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    by_type = {e["type"]: e for e in events}
    assert by_type["classification"] == {"type": "classification", "task_type": "new_task"}
    assert by_type["plan_created"]["plan"]["steps"][0] == {
        "id": "1", "title": "Make a", "description": "do make a", "status": "pending"}
    assert set(by_type["plan_created"]["plan"]) == {"refined_goal", "steps"}
    assert by_type["step_start"] == {"type": "step_start", "step_id": "3", "title": "Final report"}
    actions = [e for e in events if e["type"] == "agent_action"]
    assert actions == [{"type": "agent_action", "step_id": "1", "tool": "write_file", "status": s}
                       for s in ("running", "success")]
    completes = [e for e in events if e["type"] == "step_complete"]
    assert completes[0] == {"type": "step_complete", "step_id": "1", "status": "done", "summary": "a made"}
    assert events[-1]["type"] == "complete" and events[-1]["final_response"] == "The report."
    assert (ws / "a.txt").read_text() == "a\n"


def test_readable_mode_prints_the_plan_and_step_lines(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(plan_reply("Make a", "Make b", goal="Two files"), Reply(text="a made"), Reply(text="b made"),
                    Reply(text="Report text."))
    done = subprocess.run(run_args(fake_llm, ws, "--workflow", "structured", "--mode", "allow"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "plan: Two files\n  ○ 1. Make a\n  ○ 2. Make b\n" in done.stdout
    assert "▶ step 1: Make a\n✓ step 1 done: a made\n▶ step 2: Make b\n✓ step 2 done: b made\n" in done.stdout
    assert done.stdout.rstrip().endswith("Report text.")


def test_ask_mode_reviews_the_plan_on_stdin_and_runs_the_edited_steps(fake_llm: FakeLLM, ws: Path,
                                                                       isolated_home: Path) -> None:
    fake_llm.script(plan_reply("Old one", "Old two"), Reply(text="new done"), Reply(text="Report."))
    proc = subprocess.Popen(run_args(fake_llm, ws, "--workflow", "structured", "--json"), env=cli_env(isolated_home),
                            text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["type"] == "plan_decision_required":
            break
    proc.stdin.write('{"type": "plan_decision", "decision": "retry"}\n')  # not an answer to a review
    proc.stdin.write(json.dumps({"type": "plan_decision", "decision": "edit",
                                 "steps": [{"title": "Only new", "description": "the edited step"}]}) + "\n")
    proc.stdin.close()
    rest = events_of(proc.stdout.read())
    assert proc.wait(60) == 0, proc.stderr.read() if proc.stderr else ""
    errors = [e["message"] for e in rest if e["type"] == "error"]
    assert errors == ["ignored stdin line: 'retry' does not answer a review (approve, edit, feedback, stop)"]
    assert [e["title"] for e in rest if e["type"] == "step_start"] == ["Only new"]
    assert "Your step (1 of 1): Only new\nthe edited step" in user_text(fake_llm.requests[1])


def test_closed_stdin_leaves_the_plan_unreviewed_and_exits_3(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(plan_reply("One", "Two"))
    done = subprocess.run(run_args(fake_llm, ws, "--workflow", "structured", "--json"), env=cli_env(isolated_home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)
    assert done.returncode == 3 and len(fake_llm.requests) == 1
    error, ending = events_of(done.stdout)[-2:]  # why, then a `complete` that agrees with exit code 3
    assert "stdin closed before anyone reviewed it" in error["message"]
    assert ending["type"] == "complete" and not ending["success"] and ending["completion_reason"] == "denied"


def test_a_killed_run_resumes_at_the_first_unfinished_step(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(plan_reply("One", "Two", "Three"), write("one.txt", "1\n"), Reply(text="one done"),
                    Reply(text="never finished", stall_after=0))
    proc = subprocess.Popen(run_args(fake_llm, ws, "--workflow", "structured", "--mode", "allow", "--json"),
                            env=cli_env(isolated_home), text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event["type"] == "step_start" and event["step_id"] == "2":
            break
    deadline = time.monotonic() + 60
    while len(fake_llm.requests) < 4 and time.monotonic() < deadline:  # step 2's request is in flight
        time.sleep(0.02)
    assert fake_llm.remaining == 0
    proc.kill()
    proc.wait(30)
    fake_llm.script(Reply(text="two done"), Reply(text="three done"), Reply(text="Resumed report."))
    done = subprocess.run(run_args(fake_llm, ws, "--resume", "last", "--mode", "allow", "--json", prompt=None),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    assert [e["step_id"] for e in events if e["type"] == "step_start"] == ["2", "3"]
    resumed = user_text(fake_llm.requests[4])
    assert "Your step (2 of 3): Two" in resumed and "- One (done): one done" in resumed
    assert events[-1]["final_response"] == "Resumed report." and (ws / "one.txt").read_text() == "1\n"
    again = subprocess.run(run_args(fake_llm, ws, "--resume", "last", "--json", prompt=None),
                           env=cli_env(isolated_home), capture_output=True, text=True, timeout=90)
    assert again.returncode == 2 and "the resumed session has no unfinished plan" in again.stderr


def test_undoing_a_step_reopens_it_for_resume(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(plan_reply("Make a", "Make b"), write("a.txt", "a\n"), Reply(text="a made"),
                    write("b.txt", "b\n"), Reply(text="b made"), Reply(text="Report."))
    done = subprocess.run(run_args(fake_llm, ws, "--workflow", "structured", "--mode", "allow", "--json"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    session_id = events_of(done.stdout)[0]["session_id"]
    undo = subprocess.run(cli("undo", "--workspace", str(ws)), env=cli_env(isolated_home), capture_output=True,
                          text=True, timeout=240)
    assert undo.returncode == 0, undo.stderr
    assert "plan step 2: Make b" in undo.stdout and f"session {session_id}: its plan continues" in undo.stdout
    assert not (ws / "b.txt").exists() and (ws / "a.txt").exists()
    fake_llm.script(write("b.txt", "b\n"), Reply(text="b made again"), Reply(text="Report again."))
    again = subprocess.run(run_args(fake_llm, ws, "--resume", session_id, "--mode", "allow", "--json", prompt=None),
                           env=cli_env(isolated_home), capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr
    assert [e["step_id"] for e in events_of(again.stdout) if e["type"] == "step_start"] == ["2"]
    assert (ws / "b.txt").read_text() == "b\n"
