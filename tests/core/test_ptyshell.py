"""Seed 003's terminal shell: `shell_open` with `pty: true` (a real pseudo-terminal, its size,
interactive programs, colours) and `shell_send` (keys, named keys, reading the output); a password
prompt is shown and never answered by the model. Through the real loop and the scripted model."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from agent.approval import Decision
from agent.tools import sandbox
from tests.core.test_tools import use
from tests.fakellm import Reply, call

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None or sandbox.probe("/") is not None,
                                 reason="bubblewrap is not usable here (.ci/run installs it)")


async def send_until(h: Any, keys: str, wanted: str, tries: int = 20) -> str:
    """Type keys, then read again (what a model does) until `wanted` shows: the output of all reads."""
    seen = await use(h, "shell_send", session_id="sh1", keys=keys, wait=2)
    for _ in range(tries):
        if wanted in seen:
            return seen
        seen += "\n" + await use(h, "shell_send", session_id="sh1", keys="", wait=2)
    raise AssertionError(f"{wanted!r} never showed: {seen}")


async def test_a_terminal_shell_has_its_size_runs_interactive_programs_and_takes_named_keys(make_harness: Any) -> None:
    h = make_harness()
    opened = await use(h, "shell_open", pty=True, rows=30, cols=100)
    assert opened.startswith("session_id: sh1") and "30x100 terminal" in opened
    out = await send_until(h, "stty size; [ -t 0 ] && echo tty-$((6*7)); ls --color=always /<enter>", "tty-42")
    assert "30 100" in out and "\x1b" not in out  # colours were printed, and removed for the model
    out = await send_until(h, "python3 -q<enter>", ">>>")
    out = await send_until(h, "print(6 * 7<lt>50)<enter>", "True")  # <lt> types '<'
    await send_until(h, "<ctrl-d>echo back-$((1+1))<enter>", "back-2")
    # Ctrl+C once the sleep runs in the foreground (the echo of "sleep 30" came before bash started
    # it: a Ctrl+C then went to bash, and the line typed after it was lost; seen once in a full run)
    await send_until(h, "sh -c 'echo sleeping-$((3*3)); exec sleep 30'<enter>", "sleeping-9")
    out = await send_until(h, "<ctrl-c>echo status-$?<enter>", "status-130")  # Ctrl+C interrupted sleep
    assert "unknown key <f13>" in await use(h, "shell_send", session_id="sh1", keys="<f13>")
    ran = await use(h, "shell_exec", session_id="sh1", command="cd /; [ -t 1 ] && echo tty-out; printf 'a\\tb\\n'; "
                                                            "ls --color=always -d /; (exit 4)")
    assert ran.splitlines() == ["exit code: 4", "tty-out", "a\tb", "/"]  # the terminal's echo and markers left out
    assert await use(h, "shell_close", session_id="sh1") == "shell sh1 closed"


async def test_shell_open_is_a_terminal_by_default_and_shell_exec_runs_commands_in_it(make_harness: Any) -> None:
    """Seed 003's shell sessions are terminals: an interactive program works without pty=true."""
    h = make_harness(files={"sub/f.txt": "x\n"})
    opened = await use(h, "shell_open")
    assert "24x80 terminal" in opened
    await use(h, "shell_exec", session_id="sh1", command="cd sub && export GREETING=hello")
    out = await use(h, "shell_exec", session_id="sh1", command="[ -t 1 ] && echo on-a-tty; echo $GREETING; ls\nfalse")
    assert out.splitlines() == ["exit code: 1", "on-a-tty", "hello", "f.txt"]
    await send_until(h, "python3 -q<enter>", ">>>")  # an interactive program, in the same shell
    await send_until(h, "import os; print(os.getcwd()[-4:])<enter>", "/sub")
    await send_until(h, "<ctrl-d>", "")
    asks = await use(h, "shell_exec", session_id="sh1", command="read -s -p 'Password: ' pw < /dev/tty",
                     timeout=20)  # as sudo asks: on the terminal, whatever stdin is
    assert "password prompt ('Password:')" in asks and "never answers passwords" in asks
    still = await use(h, "shell_exec", session_id="sh1", command="echo still-$((2*3))")
    assert still.splitlines() == ["exit code: 0", "still-6"]
    piped = await use(h, "shell_open", pty=False)  # the shell without a terminal, when asked for
    assert piped.startswith("session_id: sh2") and "x80 terminal" not in piped
    no_tty = await use(h, "shell_exec", session_id="sh2", command="[ -t 1 ] || echo no-tty")
    assert no_tty.splitlines() == ["exit code: 0", "no-tty"]


@pytest.mark.parametrize("how", ["ignored", "blocked"])
async def test_ctrl_c_stops_a_command_though_this_process_has_it_ignored_or_blocked(make_harness: Any,
                                                                                     how: str) -> None:
    """As when `coder-tui ... &` runs from a script (SIGINT ignored) or under a launcher that blocks it:
    the shell's programs inherited it, and Ctrl+C never stopped a command (the suite saw the symptom twice)."""
    h = make_harness()
    if how == "ignored":
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        await use(h, "shell_open", pty=True)
    finally:
        if how == "ignored":
            signal.signal(signal.SIGINT, previous)
        else:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    await send_until(h, "sh -c 'echo sleeping-$((3*3)); exec sleep 30'<enter>", "sleeping-9")
    await send_until(h, "<ctrl-c>echo status-$?<enter>", "status-130", tries=5)
    assert await use(h, "shell_close", session_id="sh1") == "shell sh1 closed"


async def test_a_password_prompt_is_shown_and_never_answered_by_the_model(make_harness: Any) -> None:
    h = make_harness()
    await use(h, "shell_open", pty=True)
    out = await send_until(h, "read -s -p '[sudo] password for me: ' pw; echo got-$pw<enter>", "only the user")
    assert "only the user answers it" in out
    refused = await use(h, "shell_send", session_id="sh1", keys="hunter2<enter>")
    assert "never answers passwords" in refused and "their own terminal" in refused
    await send_until(h, "<ctrl-c>", "")  # cancelling is allowed
    await send_until(h, "echo pw=[$pw]<enter>", "pw=[]")
    # typed in one go after the command that asks: the line after the prompt is not sent either
    out = await use(h, "shell_send", session_id="sh1", keys="read -s -p 'Password: ' pw; echo got-$pw<enter>hunter2<enter>")
    assert "the rest of the keys was not sent" in out
    out = await send_until(h, "<ctrl-c>echo pw=[$pw]<enter>", "pw=[")
    assert "got-hunter2" not in out and "pw=[]" in out


async def test_keys_into_a_terminal_ask_like_commands_in_ask_mode(make_harness: Any) -> None:
    h = make_harness(mode="ask", decisions=[Decision("allow_once"), Decision("deny")])
    h.script(Reply(tool_calls=[call("shell_open", pty=True)]),
             Reply(tool_calls=[call("shell_send", session_id="sh1", keys="touch typed.txt<enter>")]),
             Reply(text="done"))
    await h.run("go")
    assert not (h.root / "typed.txt").exists()
    assert "denied" in h.last_tool_message().lower()


@needs_bwrap
async def test_a_terminal_shell_runs_in_the_sandbox(make_harness: Any, tmp_path: Path) -> None:
    h = make_harness()
    sandbox.configure(h.session)
    elsewhere = Path("/var/tmp") / f"coder-tui-pty-{tmp_path.name}"
    await use(h, "shell_open", pty=True)
    out = await send_until(h, f"echo a > kept.txt; echo b > {elsewhere}; echo done-$((2+3))<enter>", "done-5")
    assert (h.root / "kept.txt").exists() and not elsewhere.exists() and "Read-only" in out
