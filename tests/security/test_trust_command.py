"""`coder-tui trust`: trust per folder, remembered with the folder's identity, listed and revoked;
`coder-tui acp --trust` (every folder an editor opens, for good) is refused with the way to trust."""

from __future__ import annotations

import shutil
from pathlib import Path

from agent import paths
from agent.config import load_config
from tests.conftest import run_cli, write_files

FILE = 'api_base = "http://127.0.0.1:9/v1"\nmax_steps = 9\n'


def test_trust_grants_lists_and_revokes(tmp_path: Path, isolated_home: Path) -> None:
    ws = write_files(tmp_path / "proj", {".coder-tui.toml": FILE})
    assert load_config(ws, {}, environ={}).api_base is None
    done = run_cli(isolated_home, "trust", str(ws))
    assert done.returncode == 0 and f"trusted {ws}" in done.stdout, done.stderr
    config = load_config(ws, {}, environ={})
    assert config.workspace_trusted and config.api_base == "http://127.0.0.1:9/v1" and config.ignored == []
    listed = run_cli(isolated_home, "trust", "--list")
    assert listed.returncode == 0 and f"{ws}  trusted" in listed.stdout
    revoked = run_cli(isolated_home, "trust", "--revoke", str(ws))
    assert revoked.returncode == 0 and f"forgot {ws}" in revoked.stdout
    assert load_config(ws, {}, environ={}).api_base is None
    assert str(ws) not in run_cli(isolated_home, "trust", "--list").stdout
    again = run_cli(isolated_home, "trust", "--revoke", str(ws))
    assert again.returncode == 1 and "nothing remembered" in again.stderr
    missing = run_cli(isolated_home, "trust", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "is not a folder" in missing.stderr and "Traceback" not in missing.stderr


def test_help_says_what_trust_gives_and_how_it_is_remembered(isolated_home: Path) -> None:
    text = " ".join(run_cli(isolated_home, "trust", "--help").stdout.split())
    for part in ("--list", "--revoke", "identity", "model", "MCP server", "coder-tui acp", "same path"):
        assert part in text, part
    assert "coder-tui trust [DIR]" in run_cli(isolated_home, "--help").stdout


def test_a_different_folder_at_the_same_path_is_not_trusted(tmp_path: Path, isolated_home: Path) -> None:
    """`rm -rf proj && git clone <other> proj`: ext4 even hands the new folder the old inode number."""
    ws = write_files(tmp_path / "proj", {".coder-tui.toml": FILE})
    assert run_cli(isolated_home, "trust", str(ws)).returncode == 0
    shutil.rmtree(ws)
    write_files(ws, {".coder-tui.toml": FILE})
    config = load_config(ws, {}, environ={})
    assert not config.workspace_trusted and config.api_base is None
    assert any("replaced since" in str(item) for item in config.ignored), config.ignored
    assert "replaced since: not applied" in run_cli(isolated_home, "trust", "--list").stdout


def test_older_path_only_entries_are_confirmed_once_then_revocable(tmp_path: Path, isolated_home: Path) -> None:
    """A path-only entry never recorded what the folder held: what it grants waits for one confirmation
    (issue 34: a trust covers what the user saw when giving it)."""
    ws = write_files(tmp_path / "proj", {".coder-tui.toml": FILE})
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(f'trusted_folders = ["{ws}"]\n')
    config = load_config(ws, {}, environ={})
    assert not config.workspace_trusted and any("confirm it once" in str(item) for item in config.ignored)
    assert "path only" in run_cli(isolated_home, "trust", "--list").stdout
    assert run_cli(isolated_home, "trust", str(ws)).returncode == 0
    assert load_config(ws, {}, environ={}).workspace_trusted
    assert run_cli(isolated_home, "trust", "--revoke", str(ws)).returncode == 0
    assert not load_config(ws, {}, environ={}).workspace_trusted


def test_acp_trust_is_refused_and_says_how_to_trust(isolated_home: Path) -> None:
    done = run_cli(isolated_home, "acp", "--trust")
    assert done.returncode == 2 and "coder-tui trust DIR" in done.stderr and "every folder" in done.stderr
    assert not paths.user_config_file().exists()
    assert "--trust" not in run_cli(isolated_home, "acp", "--help").stdout
