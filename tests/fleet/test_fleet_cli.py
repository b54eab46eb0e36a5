"""`coder-tui fleet` refusing what it cannot do, in one line (in-process: no broker needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import main


def fleet(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["fleet", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_without_a_broker_it_says_how_to_configure_one(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODER_TUI_FLEET_BROKER", raising=False)
    code, said = fleet(capsys, "status")
    assert code == 2 and "no fleet broker is configured" in said and "CODER_TUI_FLEET_BROKER=redis://" in said
    monkeypatch.setenv("CODER_TUI_FLEET_BROKER", "amqp://127.0.0.1:5672//")
    code, said = fleet(capsys, "worker")
    assert code == 2 and "must be a Redis URL" in said


def test_an_unreachable_broker_is_one_line_without_its_password(capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_TUI_FLEET_BROKER", "redis://:hunter2-fleet-secret@127.0.0.1:9/0")
    code, said = fleet(capsys, "status")
    assert code == 2 and said.startswith("coder-tui: error: cannot reach the fleet broker at "
                                         "redis://:***@127.0.0.1:9/0")
    assert "hunter2" not in said and "Traceback" not in said


def test_limits_that_would_run_a_job_twice_are_refused(capsys: pytest.CaptureFixture[str], isolated_home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_TUI_FLEET_BROKER", "redis://127.0.0.1:9/0")
    config = isolated_home / "config" / "coder-tui"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[fleet]\njob_timeout = 600\nvisibility_timeout = 300\n")
    code, said = fleet(capsys, "status")
    assert code == 2 and "visibility_timeout (300 s) must be longer than job_timeout (600 s)" in said


def test_bad_input_to_run_is_refused_before_anything_is_queued(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_TUI_FLEET_BROKER", "redis://127.0.0.1:9/0")
    listing = tmp_path / "repos.txt"
    listing.write_text("octo/one\n\n# a comment\nnot a repository\n")
    code, said = fleet(capsys, "run", "bump", "--repos", str(listing))
    assert code == 2 and f"--repos {listing}, line 4: 'not a repository' is not a repository" in said
    code, said = fleet(capsys, "run", "--repos", str(listing))
    assert code == 2 and "PROMPT is required" in said
    code, said = fleet(capsys, "run", "bump", "--repos", str(tmp_path / "missing.txt"))
    assert code == 2 and "no such file" in said
    with pytest.raises(SystemExit):
        main(["fleet", "run", "bump", "--repos", str(listing), "--pr", "--no-publish"])
