"""The command line: `run --profile/--max-tokens/--max-cost`, `coder-tui profiles`, `coder-tui mcp`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import TEST_KEY, cli, cli_env
from tests.fakellm import FakeLLM, Reply, call
from tests.profiles.conftest import EVERYTHING, requested_tools


def run(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), env=cli_env(home), capture_output=True, text=True, timeout=90, cwd=cwd)


def model_args(llm: FakeLLM) -> list[str]:
    return ["--model", llm.model, "--api-base", llm.url, "--api-key", TEST_KEY]


def test_run_with_a_profile_and_a_token_budget(fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    fake_llm.script(*[Reply(tool_calls=[call("read_file", file_path="a.txt")], usage=(700, 10))] * 3)
    done = run(isolated_home, "run", "review a.txt", "--workspace", str(tmp_path), "--profile", "reviewer",
               "--max-tokens", "1000", "--json", *model_args(fake_llm))
    assert done.returncode == 1, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "complete" and events[-1]["completion_reason"] == "budget"
    assert "1,420 tokens used of 1,000" in events[-1]["final_response"]
    assert requested_tools(fake_llm.requests[0]) >= {"git", "read_file"}
    assert "write_file" not in requested_tools(fake_llm.requests[0])


def test_readable_run_says_what_was_spent_and_bad_flags_are_usage_errors(
        fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    fake_llm.script(Reply(tool_calls=[call("list_dir", path="")], usage=(5000, 10)))
    done = run(isolated_home, "run", "go", "--workspace", str(tmp_path), "--max-tokens", "100",
               *model_args(fake_llm))
    assert done.returncode == 1 and "the token budget is spent (5,010 tokens used of 100)" in done.stderr
    done = run(isolated_home, "run", "go", "--workspace", str(tmp_path), "--profile", "nope", *model_args(fake_llm))
    assert done.returncode == 2 and "coder-tui: error: no profile 'nope'; known profiles:" in done.stderr
    done = run(isolated_home, "run", "go", "--max-cost", "free")
    assert done.returncode == 2 and "expected an amount in USD, got 'free'" in done.stderr


def test_profiles_command_lists_and_validates(tmp_path: Path, isolated_home: Path) -> None:
    folder = tmp_path / ".coder-tui" / "profiles"
    folder.mkdir(parents=True)
    (folder / "tests.toml").write_text('description = "writes tests"\ntools = ["read", "edit", "exec"]\n')
    user = isolated_home / "config" / "coder-tui" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('profile = "tests"\n')  # a folder's own file may not choose the profile (its tools, its mode)
    (tmp_path / ".coder-tui.toml").write_text('profile = "reviewer"\n')
    done = run(isolated_home, "profiles", "--workspace", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "* tests" in done.stdout and "  reviewer" in done.stdout and "stream · tools: none" in done.stdout
    assert "ignored tools = ['exec'] in " in done.stderr and "profile = 'reviewer'" in done.stderr
    (folder / "broken.toml").write_text("max_steps = -1\n")
    done = run(isolated_home, "profiles", "--workspace", str(tmp_path))  # untrusted: skipped, said
    assert done.returncode == 0 and f"the whole profile in {folder / 'broken.toml'}: field `max_steps`" in done.stderr


def test_mcp_command_lists_servers_state_and_tools(tmp_path: Path, isolated_home: Path) -> None:
    config = isolated_home / "config" / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[mcp_servers.everything]\ncommand = "node"\nargs = ["{EVERYTHING}", "stdio"]\n'
                      'read_only_tools = ["echo"]\n'
                      '[mcp_servers.broken]\ncommand = "no-such-server-xyz"\n'
                      '[mcp_servers.off]\nurl = "http://127.0.0.1:9/mcp"\nenabled = false\n')
    (tmp_path / ".coder-tui.toml").write_text('[mcp_servers.repo]\ncommand = "touch"\nargs = ["pwned"]\n')
    done = run(isolated_home, "mcp", "--workspace", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "everything  running" in done.stdout and "mcp__everything__echo  [read-only]" in done.stdout
    assert "mcp__everything__get-sum  [asks first; the server calls it read-only: list it in read_only_tools" \
        in done.stdout  # the server's own hint is shown, not believed
    assert "broken  failed: cannot start it" in done.stdout and "off  disabled" in done.stdout
    assert "MCP server repo ignored (the folder is not trusted; `coder-tui trust DIR` trusts it)" in done.stderr
    assert not (tmp_path / "pwned").exists()
