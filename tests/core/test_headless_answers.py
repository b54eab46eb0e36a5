"""Headless approvals answered before they are asked (`echo y | coder-tui run ...`), and the exit
code of a run whose edit was denied because nobody could answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli, write_files
from tests.fakellm import FakeLLM, Reply, call


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_files(tmp_path / "ws", {"a.py": "x = 1\ny = 1\n"})


def run(llm: FakeLLM, ws: Path, home: Path, stdin: str | None, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(home, "run", "change x and y", "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
                   "--api-key", "sk-test-early-answers-0000", *extra, stdin=stdin, timeout=90)


def edit(line: int, text: str) -> Reply:
    return Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=line, end_line=line, new_content=text)])


def test_answers_piped_before_the_approvals_are_used_in_order(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    # Both answers are in the pipe (and stdin is closed) long before the first approval is asked.
    fake_llm.script(edit(1, "x = 2"), edit(2, "y = 2"), Reply(text="Done."))
    done = run(fake_llm, ws, isolated_home, "y\nn not y\n")
    assert done.returncode == 0, done.stderr
    assert (ws / "a.py").read_text() == "x = 2\ny = 1\n"
    assert "allow once" in done.stdout and "deny: not y" in done.stdout
    assert "ignored stdin line" not in done.stderr
    denied = [m for m in fake_llm.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Their feedback: not y" in denied


def test_json_decision_without_an_id_answers_the_next_approval(fake_llm: FakeLLM, ws: Path,
                                                              isolated_home: Path) -> None:
    fake_llm.script(edit(1, "x = 3"), Reply(text="Done."))
    done = run(fake_llm, ws, isolated_home, '{"type": "decision", "decision": "allow_once"}\n', "--json")
    assert done.returncode == 0, done.stderr
    assert (ws / "a.py").read_text() == "x = 3\ny = 1\n"
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["decision"] for e in events if e["type"] == "approval_resolved"] == ["allow_once"]


@pytest.mark.parametrize("json_mode", [False, True])
def test_edit_denied_for_want_of_an_answer_exits_3(fake_llm: FakeLLM, ws: Path, isolated_home: Path,
                                                   json_mode: bool) -> None:
    fake_llm.script(edit(1, "x = 2"), Reply(text="I could not change it."))
    done = run(fake_llm, ws, isolated_home, None, *(["--json"] if json_mode else []))
    assert done.returncode == 3, done.stderr
    assert (ws / "a.py").read_text() == "x = 1\ny = 1\n"
    message = "1 approval denied because stdin closed before an answer came"
    if json_mode:
        error, ending = [json.loads(line) for line in done.stdout.splitlines()[-2:]]
        assert error["type"] == "error" and message in error["message"] and not error["recoverable"]
        assert ending["type"] == "complete" and not ending["success"] and ending["completion_reason"] == "denied"
    else:
        assert message in done.stderr and "use --mode allow" in done.stderr


def test_early_answer_then_closed_stdin_denies_only_the_unanswered(fake_llm: FakeLLM, ws: Path,
                                                                  isolated_home: Path) -> None:
    fake_llm.script(edit(1, "x = 2"), edit(2, "y = 2"), Reply(text="Half done."))
    done = run(fake_llm, ws, isolated_home, "y\n")
    assert done.returncode == 3
    assert (ws / "a.py").read_text() == "x = 2\ny = 1\n"
    assert "1 approval denied because stdin closed" in done.stderr


def test_json_mode_takes_the_shorthand(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    # `echo y | coder-tui run --json` is what the exit-3 message tells the user to do.
    fake_llm.script(edit(1, "x = 4"), Reply(text="Done."))
    done = run(fake_llm, ws, isolated_home, "y\n", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ws / "a.py").read_text() == "x = 4\ny = 1\n"
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["decision"] for e in events if e["type"] == "approval_resolved"] == ["allow_once"]
    assert not [e for e in events if e["type"] == "error"]


def reasoned(line: int, text: str, reason: str) -> Reply:
    return Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=line, end_line=line,
                                  new_content=text, reason=reason)])


def test_readable_run_shows_the_reason_and_an_approved_diff_once(fake_llm: FakeLLM, ws: Path,
                                                                 isolated_home: Path) -> None:
    fake_llm.script(reasoned(1, "x = 5", "x must match the new default"), Reply(text="Done."))
    done = run(fake_llm, ws, isolated_home, "y\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("+x = 5") == 1, done.stdout
    assert "why: x must match the new default" in done.stdout


def test_readable_run_in_allow_mode_shows_the_reason_with_the_diff(fake_llm: FakeLLM, ws: Path,
                                                                   isolated_home: Path) -> None:
    fake_llm.script(reasoned(2, "y = 6", "y follows x"), Reply(text="Done."))
    done = run(fake_llm, ws, isolated_home, None, "--mode", "allow")
    assert done.returncode == 0, done.stderr
    assert "+y = 6\n" in done.stdout and "why: y follows x" in done.stdout


def test_run_takes_the_folder_as_a_positional_dir(fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    fake_llm.script(edit(1, "x = 7"), Reply(text="Done."))
    done = run_cli(isolated_home, "run", "change x", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
                   "--api-key", "sk-test-early-answers-0000", "--mode", "allow", timeout=90)
    assert done.returncode == 0, done.stderr
    assert (ws / "a.py").read_text() == "x = 7\ny = 1\n"
    both = run_cli(isolated_home, "run", "change x", str(ws), "--workspace", str(ws.parent), timeout=90)
    assert both.returncode == 2 and "name different folders" in both.stderr
