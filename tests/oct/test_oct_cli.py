"""`coder-tui room` as users run it: a subprocess joining a room on the test server."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from typing import Any

import pytest

from tests.conftest import ROOT, cli_env
from tests.fakellm import Reply, call
from tests.oct.server import ServerConfig

KEY = "sk-test-room-secret-0001"
DOC = "ws/main.py"


async def start(home, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui.cli", "room", *args, cwd=str(ROOT), env=cli_env(home),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


def model_args(llm) -> list[str]:
    return ["--model", llm.model, "--api-base", llm.url, "--api-key", KEY]


async def read_until(proc: asyncio.subprocess.Process, seen: list[dict[str, Any]], kind: str,
                     timeout: float = 60.0, **match: Any) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        if not line:
            raise AssertionError(f"no {kind} event before exit; seen {[e['type'] for e in seen]}")
        event = json.loads(line)
        seen.append(event)
        if event["type"] == kind and all(event.get(k) == v for k, v in match.items()):
            return event


async def test_json_events_answer_a_prompt_and_leave_on_ctrl_c(oct_server, node_host, fake_llm, isolated_home):
    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    node_host.send(cmd="open", path=DOC)
    fake_llm.script(
        Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1, new_content="a = 2")]),
        Reply(text="Set a to 2."),
    )
    proc = await start(isolated_home, room, "--server", oct_server.url, "--mode", "allow", "--json",
                       *model_args(fake_llm))
    seen: list[dict[str, Any]] = []
    await read_until(proc, seen, "room_state", followed=DOC)  # joined, and the document arrived
    node_host.send(cmd="type", path=DOC, at="end", text="# @agent set a to 2\n")
    trigger = await read_until(proc, seen, "trigger")
    assert (trigger["prompt"], trigger["path"], trigger["line"]) == ("set a to 2", DOC, 2)
    await read_until(proc, seen, "complete")
    assert await node_host.wait_text(DOC, equals="a = 2\n# @agent set a to 2\n")
    proc.send_signal(signal.SIGINT)
    try:
        code = await asyncio.wait_for(proc.wait(), 30)
    except asyncio.TimeoutError:
        proc.kill()
        raise AssertionError((await proc.stderr.read()).decode()[-3000:])
    rest = (await proc.stdout.read()).decode()
    stderr = (await proc.stderr.read()).decode()
    assert code == 0, stderr
    seen += [json.loads(line) for line in rest.splitlines()]
    phases = list(dict.fromkeys(e["phase"] for e in seen if e["type"] == "room_state"))
    assert phases == ["connecting", "logging_in", "waiting_for_host", "joined"]
    assert {"trigger", "tool_call", "file_changed", "complete"} <= {e["type"] for e in seen}
    assert (await node_host.expect("peer_left"))["peer"]["name"] == "agent"  # left with room/leave
    assert KEY not in json.dumps(seen) + stderr
    recorded = "".join(p.read_text() for p in (isolated_home / "data").rglob("*") if p.is_file())
    assert "set a to 2" in recorded  # the session file recorded the run...
    for token in [*oct_server.users, *oct_server.claims]:  # ...but no login or room token anywhere
        assert token not in json.dumps(seen) + stderr + recorded


async def test_sigterm_leaves_the_room_as_ctrl_c_does(oct_server, node_host, fake_llm, isolated_home):
    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    node_host.send(cmd="open", path=DOC)
    proc = await start(isolated_home, room, "--server", oct_server.url, "--json", *model_args(fake_llm))
    await read_until(proc, [], "room_state", followed=DOC)
    proc.send_signal(signal.SIGTERM)  # it exited 143 without telling the host
    try:
        code = await asyncio.wait_for(proc.wait(), 30)
    except asyncio.TimeoutError:
        proc.kill()
        raise AssertionError((await proc.stderr.read()).decode()[-3000:])
    assert code == 0, (await proc.stderr.read()).decode()[-3000:]
    assert (await node_host.expect("peer_left"))["peer"]["name"] == "agent"


@pytest.mark.parametrize("case, expected", [
    ("rejected", "Join request has been rejected"),
    ("unknown", "Room not found"),
    ("unreachable", "cannot reach the OCT server"),
])
async def test_failures_to_join_exit_1_with_a_clear_message(case, expected, oct_server, node_host, fake_llm,
                                                           isolated_home, unused_tcp_port):
    server, room = oct_server.url, "no-such-room"
    if case == "rejected":
        room = await node_host.create(oct_server.url, admit=False)
    if case == "unreachable":
        server = f"http://127.0.0.1:{unused_tcp_port}/"
    proc = await start(isolated_home, room, "--server", server, *model_args(fake_llm))
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1
    assert expected in err.decode()
    assert "Traceback" not in err.decode()


@pytest.mark.parametrize("server_config", [ServerConfig(version="0.4.2")])
async def test_incompatible_server_exits_1(oct_server, fake_llm, isolated_home):
    proc = await start(isolated_home, "room", "--server", oct_server.url, *model_args(fake_llm))
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1
    assert "incompatible protocol versions: this client speaks 0.3.1, the server 0.4.2" in err.decode()


async def test_readable_log_until_the_host_closes_the_room(oct_server, node_host, fake_llm, isolated_home):
    room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
    proc = await start(isolated_home, room, "--server", oct_server.url, *model_args(fake_llm))
    await node_host.expect("peer_joined", timeout=60)
    node_host.send(cmd="close")
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode()
    assert proc.returncode == 0, text
    assert "room · waiting for host" in text and "room · joined" in text
    assert "room · closed: the host closed the room" in text


async def test_missing_model_is_a_usage_error(isolated_home):
    proc = await start(isolated_home, "room")
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert "model" in err.decode().lower()


@pytest.mark.parametrize("args", [["room", ""], ["room", "  "], ["--room", ""]])
def test_an_empty_room_id_is_a_usage_error_without_a_traceback(args: list[str], isolated_home) -> None:
    from tests.conftest import run_cli

    done = run_cli(isolated_home, *args, "--model", "openai/x", "--api-base", "http://127.0.0.1:9")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "the room id is empty: give the id the host shared" in done.stderr
