"""`coder-tui run` as users run it: a subprocess talking to the scripted model server."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, cli_env, write_files
from tests.fakellm import FakeLLM, Reply, call


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", {"a.py": "def f():\n    return 1\n"})


def run_args(llm: FakeLLM, ws: Path, *extra: str, prompt: str = "make f return 2") -> list[str]:
    return cli("run", prompt, "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
               "--api-key", "sk-test-headless-secret-000", *extra)


EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])


def test_json_mode_prints_only_events_and_exits_0(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Done."))
    done = subprocess.run(run_args(fake_llm, ws, "--mode", "allow", "--json"), env=cli_env(isolated_home),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events][0] == "run_started" and events[-1]["type"] == "complete"
    assert {"tool_call", "tool_result", "file_changed", "checkpoint", "usage"} <= {e["type"] for e in events}
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
    assert "sk-test-headless-secret-000" not in done.stdout + done.stderr


def _read_until(proc: subprocess.Popen[str], kind: str) -> dict[str, Any]:
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event["type"] == kind:
            return event
    raise AssertionError(f"no {kind} event")


def test_ask_mode_takes_decisions_on_stdin(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Done."))
    proc = subprocess.Popen(run_args(fake_llm, ws, "--json"), env=cli_env(isolated_home), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    approval = _read_until(proc, "approval_required")
    assert approval["kind"] == "edit" and "+    return 2" in approval["files"][0]["diff"]
    assert (ws / "a.py").read_text().endswith("return 1\n")  # nothing written before the decision
    proc.stdin.write("this is not json\n")
    proc.stdin.write('{"type": "decision", "approval_id": "nope", "decision": "allow_once"}\n')
    proc.stdin.write(json.dumps({"type": "decision", "approval_id": approval["approval_id"],
                                 "decision": "allow_once"}) + "\n")
    proc.stdin.flush()
    errors = [_read_until(proc, "error"), _read_until(proc, "error")]
    assert "expected a JSON decision object or y / a / n" in errors[0]["message"]
    assert "no pending approval 'nope'" in errors[1]["message"]
    assert _read_until(proc, "approval_resolved")["decision"] == "allow_once"
    proc.stdin.close()
    assert proc.wait(60) == 0
    assert (ws / "a.py").read_text().endswith("return 2\n")


def test_closed_stdin_denies_with_a_reason(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Could not edit."))
    done = subprocess.run(run_args(fake_llm, ws, "--json"), env=cli_env(isolated_home), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    resolved = [json.loads(x) for x in done.stdout.splitlines() if '"approval_resolved"' in x][0]
    assert resolved["decision"] == "deny" and "stdin is closed" in resolved["feedback"]
    assert done.returncode == 3 and (ws / "a.py").read_text().endswith("return 1\n")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events].count("complete") == 1
    error, ending = events[-2:]  # the verdict's reason, then one ending that agrees with exit code 3
    assert error["type"] == "error" and "1 approval denied because stdin closed" in error["message"]
    assert ending["type"] == "complete" and ending["success"] is False and ending["completion_reason"] == "denied"
    assert ending["final_response"] == "Could not edit."


def test_readable_mode_says_denied_not_answered_when_stdin_closed_on_an_approval(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Could not edit."))
    done = subprocess.run(run_args(fake_llm, ws), env=cli_env(isolated_home), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    error = done.stderr.index("error: 1 approval denied because stdin closed")
    assert error < done.stderr.index("✗ denied · 2 steps") and "answered ·" not in done.stderr


def test_seed_format_ends_once_and_honestly_when_stdin_closed_on_an_approval(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Could not edit."))
    done = subprocess.run(run_args(fake_llm, ws, "--json-format", "seed"), env=cli_env(isolated_home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events].count("complete") == 1 and "error" not in {e["type"] for e in events}
    ending = events[-1]  # one ending: the run did not do what it was asked, and says why
    assert ending["type"] == "complete" and ending["success"] is False
    assert "1 approval denied because stdin closed" in ending["error"] and ending["completion_reason"] == "denied"
    assert ending["final_response"] == "Could not edit."


def test_readable_mode_streams_text_tools_diffs_and_a_summary(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(Reply(text="Editing now.", tool_calls=EDIT.tool_calls), Reply(text="All done."))
    done = subprocess.run(run_args(fake_llm, ws, "--mode", "allow"), env=cli_env(isolated_home),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "Editing now.\n→ replace_lines a.py\n" in done.stdout
    assert "-    return 1\n+    return 2\n" in done.stdout and "All done." in done.stdout
    assert "✓ answered · 2 steps ·" in done.stderr and "prompt +" in done.stderr


@pytest.mark.parametrize("args, message", [
    ([], "no model configured: pass --model, set CODER_TUI_MODEL"),
    (["--workspace", "/definitely/not/here"], "--workspace: workspace folder /definitely/not/here does not exist"),
    (["--resume", "no-such-session"], "--resume: no session 'no-such-session'"),
    (["--mode", "yolo"], "argument --mode: invalid choice: 'yolo'"),
    (["--max-steps", "0"], "argument --max-steps: must be at least 1"),
])
def test_usage_errors_exit_2_with_one_line(ws: Path, isolated_home: Path, args: list[str], message: str) -> None:
    base = ["run", "hi", "--workspace", str(ws)] + (["--model", "openai/x"] if args else [])
    done = subprocess.run(cli(*base, *args), env=cli_env(isolated_home),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_bad_config_file_names_the_file_and_key(ws: Path, isolated_home: Path) -> None:
    (ws / ".coder-tui.toml").write_text('model = "openai/x"\nmax_step = 3\n')
    done = subprocess.run(cli("run", "hi", "--workspace", str(ws), "--trust"), env=cli_env(isolated_home),
                          capture_output=True, text=True, timeout=60)  # a folder you trust (else: skipped, said)
    assert done.returncode == 2 and ".coder-tui.toml: key `max_step`: Extra inputs are not permitted" in done.stderr


def test_provider_failure_exits_1(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(Reply(status=401, error_message="bad key"))
    done = subprocess.run(run_args(fake_llm, ws), env=cli_env(isolated_home), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "authentication failed" in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_the_run_cleanly(fake_llm: FakeLLM, ws: Path, isolated_home: Path, sig: int) -> None:
    fake_llm.script(Reply(text="slow " * 2000, chunk_size=5, chunk_delay=0.01))
    proc = subprocess.Popen(run_args(fake_llm, ws, "--json"), env=cli_env(isolated_home), text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _read_until(proc, "text_delta")
    started = time.monotonic()
    proc.send_signal(sig)  # SIGTERM too: it ended the run unrecorded with exit 143
    complete = _read_until(proc, "complete")
    assert proc.wait(30) == 1 and time.monotonic() - started < 5
    assert complete["completion_reason"] == "stopped"
    session_file = next((isolated_home / "data" / "coder-tui" / "sessions").glob("*.jsonl"))
    assert '"completion_reason": "stopped"' in session_file.read_text()


def test_resume_by_id_continues_in_the_sessions_folder(fake_llm: FakeLLM, ws: Path, isolated_home: Path,
                                                      tmp_path: Path) -> None:
    fake_llm.script(Reply(text="first"), Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="second"))
    env = cli_env(isolated_home)
    first = subprocess.run(run_args(fake_llm, ws, "--json"), env=env, capture_output=True, text=True, timeout=60)
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = cli("run", "and now?", "--resume", session_id, "--model", fake_llm.model, "--api-base", fake_llm.url,
               "--api-key", "sk-test-x", "--json")
    second = subprocess.run(args, env=env, cwd=elsewhere, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0, second.stderr
    events = [json.loads(line) for line in second.stdout.splitlines()]
    assert events[0]["session_id"] == session_id and events[0]["workspace"] == str(ws)
    assert next(e for e in events if e["type"] == "tool_result")["ok"]
    assert [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"] == [
        "make f return 2", "and now?"]


def test_json_format_seed_prints_seed_003s_shapes(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(Reply(text="Editing.", tool_calls=EDIT.tool_calls), Reply(text="Done."))
    done = subprocess.run(run_args(fake_llm, ws, "--mode", "allow", "--json-format", "seed"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert {e["type"] for e in events} == {"text_chunk", "agent_step", "complete"}
    steps = [e for e in events if e["type"] == "agent_step"]
    assert steps[0]["tool_calls"][0]["name"] == "replace_lines" and steps[0]["tool_results"][0]["success"]
    assert steps[-1]["is_complete"] and steps[-1]["response_text"] == "Done."
    assert events[-1] == {"type": "complete", "success": True, "iterations": 2, "final_response": "Done.",
                          "completion_reason": events[-1]["completion_reason"]}
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
