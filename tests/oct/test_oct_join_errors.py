"""`coder-tui room --json` when joining fails: an `error` event with the real reason, and the room
is not said to be "left" when it was never joined."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.oct.test_oct_cli import model_args, start


@pytest.mark.parametrize("case, reason", [
    ("unknown", "Room not found"),
    ("unreachable", "cannot reach the OCT server"),
])
async def test_json_join_failure_is_an_error_event_with_the_reason(case, reason, oct_server, fake_llm,
                                                                   isolated_home, unused_tcp_port):
    server = oct_server.url if case == "unknown" else f"http://127.0.0.1:{unused_tcp_port}/"
    proc = await start(isolated_home, "no-such-room", "--server", server, "--json", *model_args(fake_llm))
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 1, err.decode()
    events = [json.loads(line) for line in out.decode().splitlines()]
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == 1 and reason in errors[0]["message"] and not errors[0]["recoverable"]
    assert errors[0]["message"].startswith("could not join room no-such-room: ")
    closed = [e for e in events if e["type"] == "room_closed"]
    assert [c["reason"] for c in closed] == [f"could not join: {errors[0]['message'].split(': ', 1)[1]}"]
    assert "left the room" not in out.decode()
    assert err.decode() == ""  # with --json, stdout carries the story and stderr stays quiet


async def test_readable_join_failure_is_not_called_leaving(oct_server, fake_llm, isolated_home):
    proc = await start(isolated_home, "no-such-room", "--server", oct_server.url, *model_args(fake_llm))
    _, err = await asyncio.wait_for(proc.communicate(), 90)
    text = err.decode()
    assert proc.returncode == 1
    assert "room · closed: could not join: Room not found" in text and "left the room" not in text
