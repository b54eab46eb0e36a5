"""Shell commands in the bubblewrap sandbox: workspace writable, the rest read-only, private /tmp,
own /proc, no network unless approved for that command or configured; `auto` falls back once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from agent.approval import Decision
from agent.tools import sandbox
from tests.fakellm import FakeLLM, Reply, call

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None or sandbox.probe("/") is not None,
                                 reason="bubblewrap is not usable here (.ci/run installs it)")
CONNECT = "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5); print('connected')\""


async def _shell(h: Any, *commands: str, **extra: Any) -> list[str]:
    """Run each command with bash_exec through the loop; the tool results, in order."""
    h.script(*(Reply(tool_calls=[call("bash_exec", command=c, **extra)]) for c in commands), Reply(text="done"))
    await h.run()
    return [m["content"] for m in h.session.messages if m["role"] == "tool"][-len(commands):]


@needs_bwrap
async def test_only_the_workspace_is_writable_and_tmp_is_private(make_harness: Any, tmp_path: Path) -> None:
    h = make_harness()
    sandbox.configure(h.session)
    beside = tmp_path / "beside.txt"  # /tmp inside is a private tmpfs: this lands there, not here
    elsewhere = Path("/var/tmp") / f"coder-tui-sbx-{tmp_path.name}"  # read-only inside
    out = await _shell(h, "echo made > inside.txt && cat inside.txt",
                       f"echo x > {beside} && cat {beside}; echo x > {elsewhere}",
                       f"ls /proc | grep -c '^[0-9]'; test -e /proc/{os.getpid()}/environ && echo seen || echo unseen")
    assert "made" in out[0] and (h.root / "inside.txt").read_text() == "made\n"
    assert "Read-only file system" in out[1] and not elsewhere.exists()
    assert "x" in out[1] and not beside.exists()
    processes, agent = out[2].split("stdout ---\n")[1].split()[:2]
    assert int(processes) < 10 and agent == "unseen"  # its own /proc: a few processes, not ours


@needs_bwrap
async def test_network_only_when_allowed_for_that_command(make_harness: Any, fake_llm: FakeLLM) -> None:
    h = make_harness(mode="ask", decisions=[Decision("allow_once"), Decision("allow_once"), Decision("allow_once")])
    sandbox.configure(h.session)
    fetch = CONNECT.format(port=urlsplit(fake_llm.url).port)
    denied = await _shell(h, fetch)  # network not asked for: none
    assert "exit code: 1" in denied[0] and "connected" not in denied[0]
    asked = await _shell(h, fetch, network=True)  # asked for, and the user allowed it
    assert "exit code: 0" in asked[0] and "connected" in asked[0]
    approvals = [e for e in h.events if e.type == "approval_required"]
    assert "asks for network access" in approvals[-1].summary


@needs_bwrap
async def test_allowing_the_tool_for_the_session_does_not_grant_the_network(make_harness: Any,
                                                                           fake_llm: FakeLLM) -> None:
    h = make_harness(mode="ask", decisions=[Decision("allow_all"), Decision("deny"), Decision("allow_once")])
    sandbox.configure(h.session)
    fetch = CONNECT.format(port=urlsplit(fake_llm.url).port)
    session_allowed = await _shell(h, fetch, network=True)  # "for this session, without network": runs without it
    assert "ran without network access" in session_allowed[0] and "connected" not in session_allowed[0]
    first = await _shell(h, "echo first")  # allowed for the session
    asked = await _shell(h, fetch, network=True)  # asks again, because it wants the network: denied
    plain = await _shell(h, "echo third")  # runs without asking
    once = await _shell(h, fetch, network=True)  # asks again; allowed once: the network for it
    assert "first" in first[0] and "denied" in asked[0] and "third" in plain[0] and "connected" in once[0]
    approvals = [e for e in h.events if e.type == "approval_required"]
    assert len(approvals) == 3 and all("asks for network access" in a.summary for a in approvals)


@needs_bwrap
async def test_allow_mode_never_grants_network_unless_configured(make_harness: Any, fake_llm: FakeLLM) -> None:
    h = make_harness(mode="allow")
    policy = sandbox.configure(h.session)
    fetch = CONNECT.format(port=urlsplit(fake_llm.url).port)
    out = await _shell(h, fetch, network=True)
    assert "ran without network access" in out[0] and "connected" not in out[0]
    policy.network = True  # sandbox_network = true in config.toml
    out = await _shell(h, fetch)
    assert "connected" in out[0]


@needs_bwrap
async def test_persistent_shells_are_sandboxed(make_harness: Any, tmp_path: Path) -> None:
    h = make_harness()
    sandbox.configure(h.session)
    elsewhere = Path("/var/tmp") / f"coder-tui-sbx-{tmp_path.name}"
    h.script(Reply(tool_calls=[call("shell_open")]),
             Reply(tool_calls=[call("shell_exec", session_id="sh1",
                                    command=f"echo a > kept.txt; echo b > {elsewhere}")]),
             Reply(text="done"))
    await h.run()
    result = [m["content"] for m in h.session.messages if m["role"] == "tool"][-1]
    assert (h.root / "kept.txt").exists() and not elsewhere.exists() and "Read-only" in result


async def test_auto_says_once_when_bubblewrap_is_missing(make_harness: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"  # git and bash, but no bwrap
    bin_dir.mkdir()
    for program in ("git", "bash"):
        (bin_dir / program).symlink_to(shutil.which(program) or f"/usr/bin/{program}")
    monkeypatch.setenv("PATH", str(bin_dir))
    sandbox._bwrap_path.cache_clear()
    sandbox.probe.cache_clear()
    try:
        h = make_harness()
        sandbox.configure(h.session)
        out = await _shell(h, "/bin/echo one", "/bin/echo two")
        assert "one" in out[0] and "two" in out[1]
        warnings = [e.message for e in h.events if e.type == "warning"]
        assert len(warnings) == 1 and "without a sandbox" in warnings[0] and "apt-get install bubblewrap" in warnings[0]
        assert "~/.ssh" in warnings[0] and ".git hooks" in warnings[0]  # what is then not protected
        h.session.config.sandbox = "bwrap"
        sandbox.configure(h.session)
        out = await _shell(h, "/bin/echo three")
        assert out[0].startswith("Error:") and "bwrap" in out[0] and "three" not in out[0]
    finally:
        sandbox._bwrap_path.cache_clear()
        sandbox.probe.cache_clear()


async def test_off_runs_commands_as_before(make_harness: Any, tmp_path: Path) -> None:
    h = make_harness()
    h.session.config.sandbox = "off"
    sandbox.configure(h.session)
    out = await _shell(h, f"echo x > {tmp_path}/outside.txt && echo ok")
    assert "ok" in out[0] and (tmp_path / "outside.txt").exists()


@needs_bwrap
def test_headless_approval_shows_and_grants_the_network(tmp_path: Path, isolated_home: Path) -> None:
    import subprocess

    from tests.conftest import cli, cli_env

    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeLLM() as llm:
        connect = CONNECT.format(port=urlsplit(llm.url).port)
        llm.script(Reply(tool_calls=[call("bash_exec", command=connect, network=True)]), Reply(text="done"))
        done = subprocess.run(cli("run", "fetch", "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
                                  "--api-key", "sk-test-x"), env=cli_env(isolated_home), input="y\n",
                              capture_output=True, text=True, timeout=90)
        result = [m for m in llm.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert done.returncode == 0, done.stderr
    assert "asks for network access" in done.stderr and "connected" in result
    assert "[a] always for bash_exec (never the network: commands that need it ask)" in done.stderr


@needs_bwrap
async def test_git_reads_in_a_clone_worktree_but_a_git_file_opens_nothing_else(make_harness: Any, tmp_path: Path) -> None:
    import subprocess

    from agent import paths

    clone = paths.cache_dir() / "github" / "example.com" / "o" / "r"
    clone.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(clone)], check=True)
    subprocess.run([*git, "-C", str(clone), "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    worktree = tmp_path / "wt"
    subprocess.run([*git, "-C", str(clone), "worktree", "add", "-q", "-b", "work", str(worktree)], check=True)
    h = make_harness(root=worktree)
    sandbox.configure(h.session)
    out = await _shell(h, "git log --oneline | wc -l", "echo a > a.txt && git add a.txt")
    assert out[0].rstrip().endswith("1"), out[0]  # history is readable inside the sandbox
    assert "Read-only file system" in out[1] and (worktree / "a.txt").exists()  # its git folders are not writable
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    secret_dir = tmp_path / "secrets"
    secret_dir.mkdir()
    (hostile / ".git").write_text(f"gitdir: {secret_dir}\n")
    assert sandbox._clone_git_dirs(hostile) == [] and sandbox._clone_git_dirs(worktree)
