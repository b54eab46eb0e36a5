"""The host's gaps closed: a client that stops reading is dropped (bounded memory, the others go
on), stop drops the prompts queued behind the run, `run --attach --mode` applies to a live session,
`coder-tui sessions | head -1` ends quietly. Real host process, real socket, the scripted model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path

from agent.host.client import HostClient
from tests.conftest import cli, cli_env, run_cli
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import next_of
from tests.host.test_host_cli import attach_args, events
from tests.host.test_host_fanout import EDIT, session_lines

LIMIT = 512 * 1024


async def test_a_client_that_never_reads_is_dropped_and_the_others_go_on(fake_llm: FakeLLM, ws: Path,
                                                                          start_host) -> None:
    host = start_host(CODER_TUI_HOST_OUTBOX=str(LIMIT))
    # far more than the socket's buffers and the outbox limit together (never the same chunk twice), at a
    # pace a reading client keeps up with on a busy machine
    long_text = "".join(f"{number:08d} " for number in range(180_000))
    fake_llm.script(Reply(text=long_text, chunk_size=4096, chunk_delay=0.02))
    reader = await HostClient.connect(host.socket)
    try:
        opened = await reader.request("open", session="new", client="reader", options=host.options(fake_llm, ws))
        await next_of(reader, "replay_end")
        # a client that joins and then never reads a byte
        _, stuck = await asyncio.open_unix_connection(str(host.socket))
        stuck.write((json.dumps({"type": "open", "id": 1, "session": opened["session_id"], "client": "stuck"})
                     + "\n").encode())
        await stuck.drain()
        await next_of(reader, "client_joined", client="stuck")
        ticket = (await reader.request("prompt", text="talk a lot"))["ticket"]
        seen: list[dict] = []
        await next_of(reader, "client_left", seen=seen, client="stuck")
        if not any(line["type"] == "turn_done" for line in seen):
            await next_of(reader, "turn_done", seen=seen, ticket=ticket)
        stuck.close()
    finally:
        await reader.close()
    text = "".join(line["text"] for line in seen if line["type"] == "text_delta")
    assert text == long_text  # the reading client got the whole turn
    host.process.terminate()
    assert host.process.wait(60) == 0
    log = host.process.stderr.read() if host.process.stderr else ""
    dropped = [line for line in log.splitlines() if "dropped stuck" in line]
    assert len(dropped) == 1 and f"{LIMIT:,} bytes" in dropped[0], log


async def test_stop_ends_the_run_and_drops_the_prompts_queued_behind_it(fake_llm: FakeLLM, ws: Path, start_host,
                                                                       isolated_home: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release), Reply(text="never asked for"))
    first = await HostClient.connect(host.socket)
    second = await HostClient.connect(host.socket)
    try:
        opened = await first.request("open", session="new", client="first", options=host.options(fake_llm, ws))
        await second.request("open", session=opened["session_id"], client="second", options={})
        one = (await first.request("prompt", text="one"))["ticket"]
        await next_of(first, "step_started")
        two = (await second.request("prompt", text="two"))["ticket"]
        three = (await first.request("prompt", text="three"))["ticket"]
        stopped = await second.request("stop")
        assert stopped["stopped"] is True and stopped["dropped"] == [two, three]
        seen: list[dict] = []
        dropped = await next_of(first, "prompts_dropped", seen=seen)
        assert dropped["by"] == "second" and dropped["tickets"] == [two, three]
        assert [p["prompt"] for p in dropped["prompts"]] == ["two", "three"]
        done = await next_of(first, "turn_done", seen=seen, ticket=one)
        assert done["completion_reason"] == "stopped"
        release.set()
        # the next prompt is the next turn: nothing dropped runs first
        four = (await first.request("prompt", text="four"))["ticket"]
        started = await next_of(first, "turn_started", seen=seen)
        assert started["ticket"] == four
        await next_of(first, "turn_done", ticket=four)
    finally:
        release.set()
        await first.close()
        await second.close()
    recorded = session_lines(isolated_home, opened["session_id"])
    prompts = [m["data"]["content"] for m in recorded if m.get("kind") == "message" and m["data"]["role"] == "user"]
    assert prompts == ["one", "four"]


async def test_run_attach_whose_queued_prompt_is_dropped_says_so_and_exits_1(fake_llm: FakeLLM, ws: Path,
                                                                            start_host, isolated_home: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="terminal", options=host.options(fake_llm, ws))
        await client.request("prompt", text="one")
        await next_of(client, "step_started")
        attached = subprocess.Popen(cli(*attach_args(fake_llm, ws, opened["session_id"], "two")), text=True,
                                    env=cli_env(isolated_home, XDG_RUNTIME_DIR=str(host.socket.parent.parent)),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        await next_of(client, "prompt_queued", timeout=120)
        await client.request("stop")
        out, err = await asyncio.to_thread(attached.communicate, timeout=60)
    finally:
        release.set()
        await client.close()
    assert attached.returncode == 1, err
    said = [line for line in err.splitlines() if "dropped" in line]
    assert len(said) == 1 and "terminal stopped the run" in said[0] and "Traceback" not in err


async def test_run_attach_mode_applies_to_a_live_session(fake_llm: FakeLLM, ws: Path, start_host,
                                                         isolated_home: Path) -> None:
    host = start_host()
    fake_llm.script(EDIT, Reply(text="Done."))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="terminal", options=host.options(fake_llm, ws))
        assert opened["mode"] == "ask"
        done = await asyncio.to_thread(
            run_cli, isolated_home, *attach_args(fake_llm, ws, opened["session_id"], "make f return 2", "--mode",
                                                 "allow", "--json"),
            XDG_RUNTIME_DIR=str(host.socket.parent.parent))
        changed = await next_of(client, "mode_changed")
    finally:
        await client.close()
    assert done.returncode == 0, done.stderr
    assert changed["mode"] == "allow" and changed["by"].startswith("run --attach")
    kinds = [line["type"] for line in events(done.stdout)]
    assert "approval_required" not in kinds and "file_changed" in kinds
    assert (ws / "a.py").read_text().endswith("return 2\n")


def test_sessions_piped_into_head_ends_without_a_traceback(isolated_home: Path, runtime_dir: Path) -> None:
    from agent.session.record import SessionStore

    for number in range(200):  # far more than a pipe holds: the listing is still writing when head leaves
        writer = SessionStore().create({"workspace": f"/ws/{'deep/' * 200}{number}"})
        writer.message({"role": "user", "content": f"prompt {number}"})
        writer.close()
    command = " ".join(f"'{part}'" for part in cli("sessions", "--limit", "500")) + " | head -1"
    done = subprocess.run(["bash", "-c", command], env=cli_env(isolated_home, XDG_RUNTIME_DIR=str(runtime_dir)),
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1 and "/ws/deep/" in done.stdout
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


async def test_a_client_that_never_reads_many_small_lines_is_dropped_by_their_count(fake_llm: FakeLLM, ws: Path,
                                                                                      start_host) -> None:
    lines = 2000
    host = start_host(CODER_TUI_HOST_OUTBOX_LINES=str(lines))  # the byte limit (16 MB) is never reached
    small = "".join(f"{number:07d} " for number in range(30_000))  # 30,000 deltas of 8 characters
    fake_llm.script(Reply(text=small, chunk_size=8))
    reader = await HostClient.connect(host.socket)
    try:
        opened = await reader.request("open", session="new", client="reader", options=host.options(fake_llm, ws))
        await next_of(reader, "replay_end")
        _, stuck = await asyncio.open_unix_connection(str(host.socket))
        stuck.write((json.dumps({"type": "open", "id": 1, "session": opened["session_id"], "client": "stuck"})
                     + "\n").encode())
        await stuck.drain()
        await next_of(reader, "client_joined", client="stuck")
        ticket = (await reader.request("prompt", text="talk in small pieces"))["ticket"]
        seen: list[dict] = []
        await next_of(reader, "client_left", seen=seen, client="stuck")
        if not any(line["type"] == "turn_done" for line in seen):
            await next_of(reader, "turn_done", seen=seen, ticket=ticket)
        stuck.close()
    finally:
        await reader.close()
    assert "".join(line["text"] for line in seen if line["type"] == "text_delta") == small  # the reader got it all
    host.process.terminate()
    assert host.process.wait(60) == 0
    log = host.process.stderr.read() if host.process.stderr else ""
    dropped = [line for line in log.splitlines() if "dropped stuck" in line]
    assert len(dropped) == 1 and f"{lines:,} lines unread" in dropped[0], log
