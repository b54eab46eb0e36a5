"""One live session, several clients: fan-out, late join, one approval queue, queued prompts, stop,
a client that leaves. Clients speak the host's protocol over its real socket."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from pathlib import Path

from agent.host.client import HostClient, HostRefused
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import next_of

EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2, new_content="    return 2")])


def session_lines(home: Path, session_id: str) -> list[dict]:
    path = home / "data" / "coder-tui" / "sessions" / f"{session_id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_prompt_runs_in_the_host_and_streams_its_events(fake_llm: FakeLLM, ws: Path, start_host,
                                                                 isolated_home: Path) -> None:
    host = start_host()
    fake_llm.script(Reply(text="Hello from the host."))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="tester", options=host.options(fake_llm, ws))
        await next_of(client, "replay_end", pending=[], running=False)
        ticket = (await client.request("prompt", text="say hello"))["ticket"]
        seen: list[dict] = []
        done = await next_of(client, "turn_done", seen=seen, ticket=ticket)
    finally:
        await client.close()
    assert done["success"] is True and done["by"] == "tester"
    kinds = [line["type"] for line in seen]
    assert kinds.index("turn_started") < kinds.index("run_started") < kinds.index("complete") < kinds.index("turn_done")
    text = "".join(line["text"] for line in seen if line["type"] == "text_delta")
    assert text == "Hello from the host."
    # the host wrote the session file: the turn is recorded once
    recorded = session_lines(isolated_home, opened["session_id"])
    assert [m["data"]["content"] for m in recorded if m.get("kind") == "message" and m["data"]["role"] == "user"] \
        == ["say hello"]
    assert host.process.poll() is None


async def test_a_late_joiner_sees_the_session_so_far_and_either_client_answers_the_approval(
        fake_llm: FakeLLM, ws: Path, start_host) -> None:
    host = start_host()
    fake_llm.script(EDIT, Reply(text="Done."))
    first = await HostClient.connect(host.socket)
    second = await HostClient.connect(host.socket)
    try:
        opened = await first.request("open", session="new", client="first", options=host.options(fake_llm, ws))
        await next_of(first, "replay_end")
        await first.request("prompt", text="make f return 2")
        asked = await next_of(first, "approval_required")
        # the late joiner: the transcript so far (the pending approval in it), then the live stream
        await second.request("open", session=opened["session_id"], client="second", options={})
        replayed: list[dict] = []
        end = await next_of(second, "replay_end", seen=replayed)
        assert end["pending"] == [asked["approval_id"]] and end["running"] is True and end["clients"] == ["first"]
        assert [line["type"] for line in replayed][:2] == ["turn_started", "run_started"]
        assert any(line["type"] == "approval_required" for line in replayed)
        await next_of(first, "client_joined", client="second")
        assert (ws / "a.py").read_text().endswith("return 1\n")
        # the second answers first; the first sees it resolved, and by whom; its own answer is refused
        await second.request("approve", approval_id=asked["approval_id"], decision="allow_once")
        resolved = await next_of(first, "approval_resolved", approval_id=asked["approval_id"])
        assert resolved["decision"] == "allow_once"
        answered = await next_of(first, "approval_answered")
        assert answered["by"] == "second"
        try:
            await first.request("approve", approval_id=asked["approval_id"], decision="deny")
            raise AssertionError("a second answer was taken")
        except HostRefused as exc:
            assert asked["approval_id"] in str(exc)
        for client in (first, second):
            await next_of(client, "turn_done", success=True)
    finally:
        await first.close()
        await second.close()
    assert (ws / "a.py").read_text().endswith("return 2\n")


async def test_a_prompt_sent_during_a_run_waits_for_it(fake_llm: FakeLLM, ws: Path, start_host,
                                                        isolated_home: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="first answer", hold=release), Reply(text="second answer"))
    first = await HostClient.connect(host.socket)
    second = await HostClient.connect(host.socket)
    try:
        opened = await first.request("open", session="new", client="first", options=host.options(fake_llm, ws))
        await second.request("open", session=opened["session_id"], client="second", options={})
        one = (await first.request("prompt", text="one"))["ticket"]
        await next_of(second, "step_started")  # the first turn waits on the model
        queued = await second.request("prompt", text="two")
        assert queued["ahead"] == 1
        release.set()
        seen: list[dict] = []
        await next_of(first, "turn_done", seen=seen, ticket=queued["ticket"])
    finally:
        await first.close()
        await second.close()
    order = [(line["type"], line.get("ticket")) for line in seen
             if line["type"] in ("turn_started", "turn_done", "prompt_queued")]
    two = queued["ticket"]
    assert order == [("turn_started", one), ("prompt_queued", two), ("turn_done", one), ("turn_started", two),
                     ("turn_done", two)]
    runs = [line for line in seen if line["type"] in ("run_started", "complete")]
    assert [line["type"] for line in runs] == ["run_started", "complete", "run_started", "complete"]
    recorded = session_lines(isolated_home, opened["session_id"])
    messages = [(m["data"]["role"], m["data"]["content"]) for m in recorded if m.get("kind") == "message"]
    assert messages == [("user", "one"), ("assistant", "first answer"), ("user", "two"), ("assistant", "second answer")]


async def test_stop_from_another_client_stops_the_run_and_a_client_that_leaves_does_not(
        fake_llm: FakeLLM, ws: Path, start_host) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="slow", hold=release), Reply(text="answered after its client left"))
    first = await HostClient.connect(host.socket)
    second = await HostClient.connect(host.socket)
    try:
        opened = await first.request("open", session="new", client="first", options=host.options(fake_llm, ws))
        await second.request("open", session=opened["session_id"], client="second", options={})
        await first.request("prompt", text="one")
        await next_of(second, "step_started")
        assert (await second.request("stop"))["stopped"] is True
        done = await next_of(first, "turn_done")
        assert done["completion_reason"] == "stopped"
        release.set()
        # the first client sends a prompt and dies; the run goes on and the second sees it end
        await first.request("prompt", text="two")
        await first.close()
        await next_of(second, "client_left", client="first")
        done = await next_of(second, "turn_done")
        assert done["success"] is True and done["by"] == "first"
    finally:
        await first.close()
        await second.close()


async def test_the_host_folder_and_socket_are_private(start_host, runtime_dir: Path) -> None:
    host = start_host()
    assert stat.S_IMODE(os.stat(host.socket.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(host.socket).st_mode) == 0o600
    listing = await _list(host.socket)
    assert listing == []


async def _list(path: Path) -> list:
    client = await HostClient.connect(path)
    try:
        return (await client.request("list"))["sessions"]
    finally:
        await client.close()


async def test_bad_requests_get_one_line_errors(start_host) -> None:
    host = start_host()
    client = await HostClient.connect(host.socket)
    try:
        for kind, fields, expected in (("prompt", {"text": "x"}, "open a session first"),
                                       ("open", {"session": "nope"}, "nope"),
                                       ("approve", {"decision": "maybe"}, "decision")):
            try:
                await client.request(kind, **fields)
                raise AssertionError(f"{kind} was accepted")
            except HostRefused as exc:
                assert expected in str(exc) and "\n" not in str(exc)
    finally:
        await client.close()


async def test_a_host_stopped_with_sigterm_ends_its_runs_cleanly_and_tells_its_clients(
        fake_llm: FakeLLM, ws: Path, start_host, isolated_home: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="never finished", hold=release))
    client = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="watcher", options=host.options(fake_llm, ws))
        await client.request("prompt", text="a long task")
        await next_of(client, "step_started")
        host.process.terminate()
        seen: list[dict] = []
        await next_of(client, "host_closing", seen=seen)
        done = await next_of(client, "turn_done", seen=seen)
        assert done["completion_reason"] == "stopped"
        assert host.process.wait(60) == 0
    finally:
        release.set()
        await client.close()
    recorded = session_lines(isolated_home, opened["session_id"])
    events = [line["data"]["type"] for line in recorded if line.get("kind") == "event"]
    assert events[-1] == "complete" and recorded[-1]["data"]["completion_reason"] == "stopped"
    assert not host.socket.exists()
