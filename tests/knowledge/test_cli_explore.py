"""`coder-tui map` and `coder-tui explore` as subprocesses against the scripted model."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import TEST_KEY, cli, cli_env, run_cli
from tests.knowledge.conftest import FILES, write_repo

WAIT = 60.0


def model_args(server: Any, model: str | None = None) -> list[str]:
    return ["--model", model or server.model, "--api-base", server.url, "--api-key", TEST_KEY]


def events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_map_json_says_the_plan_first_and_a_second_run_asks_nothing(
        tmp_path: Path, isolated_home: Path, summary_llm: Any) -> None:
    root = write_repo(tmp_path / "repo")
    done = run_cli(isolated_home, "map", str(root), "--json", *model_args(summary_llm))
    assert done.returncode == 0, done.stderr
    found = events(done.stdout)
    assert found[0]["type"] == "map_plan" and found[0]["summaries"] == len(FILES)
    assert "file(s) to summarise" in found[0]["text"] and found[0]["estimated_cost"] is None
    assert found[-1]["type"] == "map_done" and found[-1]["summarised"] == len(FILES)
    assert any(e["type"] == "map_progress" for e in found)
    again = run_cli(isolated_home, "map", str(root), *model_args(summary_llm))
    assert again.returncode == 0 and len(summary_llm.requests) == len(FILES)
    assert f"Mapped {len(FILES)} file(s): 0 new, 0 changed, 0 removed" in again.stdout
    assert "0 file(s) to summarise" in again.stderr


def test_map_max_cost_stops_cleanly_and_the_next_run_continues(
        tmp_path: Path, isolated_home: Path, summary_llm: Any) -> None:
    root = write_repo(tmp_path / "repo")
    priced = model_args(summary_llm, "openai/gpt-4o-mini")  # litellm knows its price
    first = run_cli(isolated_home, "map", str(root), "--max-cost", "0.0001", *priced)
    assert first.returncode == 1
    assert "roughly $" in first.stderr and "Stopped: --max-cost $0.0001 reached" in first.stdout
    spent = len(summary_llm.requests)
    assert 1 <= spent < len(FILES)
    rest = run_cli(isolated_home, "map", str(root), *priced)
    assert rest.returncode == 0 and len(summary_llm.requests) == len(FILES)


def test_map_max_cost_with_an_unpriced_model_summarises_nothing(
        tmp_path: Path, isolated_home: Path, summary_llm: Any) -> None:
    root = write_repo(tmp_path / "repo")
    done = run_cli(isolated_home, "map", str(root), "--max-cost", "1", *model_args(summary_llm))
    assert done.returncode == 1 and "no price is known for openai/fake-model" in done.stdout
    assert summary_llm.requests == []


def test_map_usage_errors_exit_2(tmp_path: Path, isolated_home: Path) -> None:
    missing = run_cli(isolated_home, "map", str(tmp_path / "nope"), "--no-summaries")
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    no_model = run_cli(isolated_home, "map", str(tmp_path))
    assert no_model.returncode == 2 and "no model configured" in no_model.stderr


def _wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_explore_killed_mid_step_resumes_without_repeats(
        tmp_path: Path, isolated_home: Path, summary_llm: Any, summariser: Any) -> None:
    root = write_repo(tmp_path / "repo")
    summariser.block_at = 4
    args = ["explore", str(root), "--interval", "0", "--until-done", "--json", *model_args(summary_llm)]
    process = subprocess.Popen(cli(*args), env=cli_env(isolated_home), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(summariser.blocked.is_set, "the fourth summary request")
        process.send_signal(signal.SIGKILL)
        process.wait(WAIT)
    finally:
        if process.poll() is None:
            process.kill()
        summariser.release.set()
    before = dict(summariser.counts)
    assert sum(before.values()) == 4
    second = run_cli(isolated_home, *args)
    assert second.returncode == 0, second.stderr
    final = events(second.stdout)[-1]
    assert final["type"] == "explore_done" and final["reason"] == "everything is current"
    assert final["summarised"] == len(FILES) and final["pending"] == 0
    # finished summaries were never asked again; only the one in flight at the kill was
    assert summariser.counts[summariser.blocked_path] == 2
    assert all(count == 1 for path, count in summariser.counts.items() if path != summariser.blocked_path)
    assert set(summariser.counts) == set(FILES)
    steps = [e for e in events(second.stdout) if e["type"] == "explore_step"]
    assert [s["path"] for s in steps if s["kind"] == "folder"] == []  # folders were done before the kill


def test_explore_refuses_a_second_explorer_on_the_same_repository(
        tmp_path: Path, isolated_home: Path, summary_llm: Any, summariser: Any) -> None:
    root = write_repo(tmp_path / "repo")
    summariser.block_at = 1
    args = ["explore", str(root), "--interval", "0", *model_args(summary_llm)]
    process = subprocess.Popen(cli(*args), env=cli_env(isolated_home), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(summariser.blocked.is_set, "the first summary request")
        other = run_cli(isolated_home, *args)
        assert other.returncode == 2 and "another explore" in other.stderr
        process.send_signal(signal.SIGINT)
        summariser.release.set()
        out, err = process.communicate(timeout=WAIT)
        assert process.returncode == 0, err
        assert "stopping after the current step" in err and "Exploration stopped" in out
    finally:
        summariser.release.set()
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)
