"""`serve`'s WebSocket (seed 003): turns, approvals and stops over one socket, through aiohttp's
real WebSocket client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from tests.fakellm import Reply, call
from tests.serve.conftest import TOKEN

WAIT = 60


async def frames_until(ws: aiohttp.ClientWebSocketResponse, stop: Any) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    while True:
        frame = await asyncio.wait_for(ws.receive(), WAIT)
        assert frame.type == aiohttp.WSMsgType.TEXT, frame
        seen.append(json.loads(frame.data))
        if stop(seen[-1]):
            return seen


def done(data: dict[str, Any]) -> bool:
    return data.get("done") is True


async def test_a_turn_with_an_approval_over_the_websocket(make_serve) -> None:
    serve = make_serve(mode="allow", files={"a.txt": "old\n"})
    serve.llm.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="new\n")]), Reply(text="ok"),
                     Reply(text="second"))
    async with aiohttp.ClientSession() as http, http.ws_connect(
            f"{serve.url}/ws", headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        await ws.send_json({"message": "write a.txt", "edit_mode": "ask"})  # seed 003's name for the mode
        before = await frames_until(ws, lambda d: d.get("type") == "approval_required")
        assert before[0]["type"] == "session" and (serve.root / "a.txt").read_text() == "old\n"
        await ws.send_json({"type": "approval", "approval_id": before[-1]["id"], "decision": "allow_once"})
        after = await frames_until(ws, done)
        assert "".join(d.get("content", "") for d in after).endswith("ok")
        assert any(d.get("type") == "diff" and d["file"] == "a.txt" for d in after)
        # the next turn on the same socket continues the session
        await ws.send_json({"message": "and now?"})
        second = await frames_until(ws, done)
        assert second[0] == before[0]
    assert (serve.root / "a.txt").read_text() == "new\n"
    assert serve.llm.requests[-1]["messages"][1]["content"] == "write a.txt"


async def test_the_token_in_the_path_seed_shapes_and_bad_frames(make_serve) -> None:
    serve = make_serve()
    serve.llm.script(Reply(text="hello"))
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"{serve.url}/ws/wrong-token")
        assert refused.value.status == 401
        async with http.ws_connect(f"{serve.url}/ws/{TOKEN}") as ws:
            await ws.send_str("not json")
            assert "one JSON object" in (await frames_until(ws, lambda d: True))[0]["error"]
            await ws.send_json({"message": ""})
            assert "message" in (await frames_until(ws, lambda d: True))[0]["error"]
            await ws.send_json({"message": "hi", "events": "seed"})
            seen = await frames_until(ws, done)
    kinds = [d.get("type") for d in seen[1:-1]]
    # the text may come in more than one chunk (pieces are coalesced by timing)
    kinds = [k for i, k in enumerate(kinds) if not (k == "text_chunk" and i and kinds[i - 1] == "text_chunk")]
    assert kinds == ["text_chunk", "agent_step", "complete"]
    assert "".join(d["content"] for d in seen if d.get("type") == "text_chunk") == "hello"


async def test_stop_from_the_socket_and_a_closed_socket_stops_its_turn(make_serve) -> None:
    serve = make_serve()
    sleep = Reply(tool_calls=[call("bash_exec", command="sleep 60")])
    serve.llm.script(sleep)
    async with aiohttp.ClientSession() as http, http.ws_connect(
            f"{serve.url}/ws", headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        await ws.send_json({"message": "sleep"})
        first = await frames_until(ws, lambda d: d.get("type") == "tool_call")
        await ws.send_json({"type": "stop"})
        seen = await frames_until(ws, done)
    complete = next(d for d in seen if d.get("type") == "complete")
    assert complete["completion_reason"] == "stopped"
    serve.llm.script(sleep)
    async with aiohttp.ClientSession() as http, http.ws_connect(
            f"{serve.url}/ws", headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        await ws.send_json({"message": "sleep again", "session_id": first[0]["session_id"]})
        await frames_until(ws, lambda d: d.get("type") == "tool_call")
        serve.wait_for(lambda: serve.sessions()[0]["running"], "the second turn to run")
    # the socket closed mid-turn: the turn stops as for a client that leaves an SSE stream
    serve.wait_for(lambda: not serve.sessions()[0]["running"], "the turn to stop")
