"""A host serves one set of folders and one configuration (agent/hostplace.py): its socket's name
digests the resolved data and config folders and the keyed environment, so a front end from
another HOME, data folder or key starts or finds its own host and loads its own sessions; the
host's record says what it serves (no secret), and `coder-tui sessions` says which host serves what.
Real host processes on real sockets, the ACP client of tests/interop, the scripted model."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.hostplace import keyed_environment, record_path, running_hosts, socket_path
from tests.acp.conftest import acp_client, no_host  # noqa: F401 - fixtures
from tests.conftest import TEST_KEY, cli, cli_env, run_cli
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import listening_on, wait_listening


def test_the_key_follows_the_folders_and_the_keys_not_the_current_folder(
        isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = socket_path()
    monkeypatch.chdir(tmp_path)
    assert socket_path() == first  # one host serves every workspace
    monkeypatch.setenv("CODER_TUI_HOST", "auto")
    monkeypatch.setenv("CODER_TUI_HOST_IDLE", "5")
    assert socket_path() == first  # what only a front end or the host's lifetime reads
    monkeypatch.setenv("OPENAI_API_KEY", "sk-first-key")
    one_key = socket_path()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-key")
    other_key = socket_path()
    assert len({first, one_key, other_key}) == 3
    assert "sk-first-key" not in json.dumps(keyed_environment()) and "sk-other" not in json.dumps(keyed_environment())
    monkeypatch.delenv("OPENAI_API_KEY")
    assert socket_path() == first
    for name, value in (("XDG_DATA_HOME", str(tmp_path / "data")), ("XDG_CONFIG_HOME", str(tmp_path / "config")),
                        ("CODER_TUI_MODEL", "openai/another"), ("OPENAI_API_BASE", "http://127.0.0.1:9/v1"),
                        ("GITHUB_TOKEN", "ghp_other")):
        with monkeypatch.context() as changed:
            changed.setenv(name, value)
            assert socket_path() != first, name
    (tmp_path / "link").symlink_to(isolated_home / "data")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "link"))
    assert socket_path() == first  # the same folder by another name


def start_other_host(home: Path, runtime: Path, **env: str) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen(cli("host", "--idle", "120"), env=cli_env(home, XDG_RUNTIME_DIR=str(runtime), **env),
                               text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return process, listening_on(wait_listening(process))


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(60)


def test_the_host_records_what_it_serves_without_a_secret(isolated_home: Path, runtime_dir: Path, start_host) -> None:
    host = start_host(OPENAI_API_KEY="sk-recorded-nowhere")
    record = record_path(host.socket)
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
    text = record.read_text()
    assert "sk-recorded-nowhere" not in text and TEST_KEY not in text
    served = json.loads(text)
    assert served["pid"] == host.process.pid
    assert served["data"] == str((isolated_home / "data" / "coder-tui").resolve())
    assert served["config"] == str((isolated_home / "config" / "coder-tui").resolve())
    for name in (host.socket.with_suffix(".log"),):
        assert not name.exists() or "sk-recorded-nowhere" not in name.read_text()
    assert [h.socket for h in running_hosts()] == [host.socket]
    stop(host.process)
    assert not record.exists() and not running_hosts()


async def test_a_front_end_of_another_home_starts_its_own_host_and_loads_its_own_session(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path, tmp_path: Path, acp_client: Any) -> None:
    other_home = tmp_path / "other-home"
    other, other_socket = start_other_host(other_home, runtime_dir)
    try:
        fake_llm.script(Reply(text="Remembered."), Reply(text="Loaded here."))
        done = run_cli(isolated_home, "run", "remember the word teal", "--workspace", str(ws), "--model",
                       fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY, "--mode", "allow",
                       XDG_RUNTIME_DIR=str(runtime_dir))  # CODER_TUI_HOST=off: recorded in this HOME
        assert done.returncode == 0, done.stderr
        listed = run_cli(isolated_home, "sessions", XDG_RUNTIME_DIR=str(runtime_dir))
        assert listed.returncode == 0, listed.stderr
        sid = next(line.split()[0] for line in listed.stdout.splitlines() if "remember the word teal" in line)
        hosts = [line for line in listed.stdout.splitlines() if line.startswith("host pid")]
        assert hosts == [next(h for h in hosts if f"pid {other.pid} (another HOME)" in h)], listed.stdout
        assert str((other_home / "data" / "coder-tui").resolve()) in hosts[0] and "0 live session(s)" in hosts[0]

        editor = await acp_client("--workflow", "direct", runtime=runtime_dir)
        await editor.initialize()
        await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        said = [(u["sessionUpdate"], u.get("content", {}).get("text")) for u in editor.updates(sid)]
        assert ("user_message_chunk", "remember the word teal") in said, said
        answer = await editor.request("session/prompt", {"sessionId": sid,
                                                         "prompt": [{"type": "text", "text": "and now?"}]})
        assert answer["stopReason"] == "end_turn"
        assert "remember the word teal" in json.dumps(fake_llm.requests[-1])  # the loaded conversation went on

        listed = run_cli(isolated_home, "sessions", XDG_RUNTIME_DIR=str(runtime_dir))
        hosts = [line for line in listed.stdout.splitlines() if line.startswith("host pid")]
        ours = [line for line in hosts if "(this environment's)" in line]
        assert len(hosts) == 2 and len(ours) == 1 and "1 live session(s)" in ours[0], listed.stdout
        assert str((isolated_home / "data" / "coder-tui").resolve()) in ours[0]
        assert other.poll() is None and other_socket.exists()  # the other HOME's host was left alone
    finally:
        stop(other)
