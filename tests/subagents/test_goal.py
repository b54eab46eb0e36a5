"""A goal: rounds of work until a check command passes (real shell checks in the workspace), and
`coder-tui run --until` as users run it (a subprocess on the scripted model server)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agent.subagents.goal import pursue
from tests.conftest import cli, cli_env, write_files
from tests.fakellm import FakeLLM, Reply, call


async def test_the_goal_stops_when_the_check_passes(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.script(Reply(text="I think it is done."),  # round 1: nothing made, the check fails
                    Reply(tool_calls=[call("write_file", file_path="done.txt", content="ok\n")]),
                    Reply(text="Made done.txt."))  # round 2: the check passes
    h = make_harness(mode="allow")
    complete = await pursue(h.session, "make done.txt", "test -f done.txt || { echo 'done.txt is missing'; exit 3; }", 5)
    assert complete.success
    rounds = h.of("goal_round")
    assert [(r.round, r.passed, r.exit_code) for r in rounds] == [(1, False, 3), (2, True, 0)]
    # the failed check's output reached the model as the next round's prompt
    second = fake_llm.requests[1]["messages"][-1]["content"]
    assert "done.txt is missing" in second and "exited with 3" in second


async def test_the_goal_stops_at_the_round_limit(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.script(Reply(text="tried"), Reply(text="tried again"), Reply(text="and again"), Reply(text="never"))
    h = make_harness(mode="allow")
    complete = await pursue(h.session, "fix it", "echo still broken; exit 1", 3)
    assert not complete.success and "still fails after 3 round(s)" in complete.final_response
    assert [r.round for r in h.of("goal_round")] == [1, 2, 3]
    assert len(fake_llm.requests) == 3


def test_run_until_prints_the_rounds_and_exits_0_when_the_check_passes(fake_llm: FakeLLM, tmp_path: Path,
                                                                     isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {"a.txt": "one\n"})
    fake_llm.script(Reply(text="nothing yet"), Reply(tool_calls=[call("write_file", file_path="b.txt", content="x\n")]),
                    Reply(text="made b.txt"))
    done = subprocess.run(cli("run", "make b.txt", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
                              "--api-key", "sk-test-goal", "--mode", "allow", "--json", "--until", "test -f b.txt",
                              "--max-rounds", "4"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(e["round"], e["passed"]) for e in events if e["type"] == "goal_round"] == [(1, False), (2, True)]


def test_run_until_exits_1_at_the_round_limit(fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {"a.txt": "one\n"})
    fake_llm.script(Reply(text="no"), Reply(text="no"))
    done = subprocess.run(cli("run", "make b.txt", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url,
                              "--api-key", "sk-test-goal", "--mode", "allow", "--until", "test -f b.txt",
                              "--max-rounds", "2"),
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "goal round 2/2" in done.stderr and "still fails after 2 round(s)" in done.stdout + done.stderr


async def test_a_goal_halted_while_its_check_runs_starts_no_next_round(fake_llm: FakeLLM, make_harness: Any) -> None:
    fake_llm.script(Reply(text="tried"), Reply(text="never asked"))
    h = make_harness(mode="allow")
    halted: list[bool] = []

    async def check_then_stop(command: str, cwd: str | None) -> tuple[int, str]:
        halted.append(True)  # the user pressed Esc while the check ran
        return 1, "still failing"

    complete = await pursue(h.session, "fix it", "false", 5, checker=check_then_stop, halted=lambda: bool(halted))
    assert complete.final_response == "tried" and len(fake_llm.requests) == 1
    assert [r.round for r in h.of("goal_round")] == [1]
