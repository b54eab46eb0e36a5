"""`serve` follows a session that is live in the session host: `GET /api/sessions/{id}/events`
streams the host's replay and live lines as SSE (sessions of serve's own folder only)."""

from __future__ import annotations

import threading
from pathlib import Path

from agent.host.client import HostClient
from tests.conftest import write_files
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import next_of
from tests.serve.conftest import make_serve, sse_events  # noqa: F401 - make_serve is a fixture


async def test_serve_follows_a_session_live_in_the_host(fake_llm: FakeLLM, ws: Path, start_host, make_serve,
                                                       tmp_path: Path) -> None:
    host = start_host()
    release = threading.Event()
    fake_llm.script(Reply(text="Hello from the host.", hold=release))
    client = await HostClient.connect(host.socket)
    other = await HostClient.connect(host.socket)
    try:
        opened = await client.request("open", session="new", client="terminal", options=host.options(fake_llm, ws))
        elsewhere = await other.request("open", session="new", client="terminal 2",
                                        options=host.options(fake_llm, write_files(tmp_path / "other", {})))
        ticket = (await client.request("prompt", text="say hello"))["ticket"]
        await next_of(client, "step_started")
        serve = make_serve()
        assert serve.root == ws
        with serve.client() as http:
            refused = http.get(f"/api/sessions/{elsewhere['session_id']}/events")
            with http.stream("GET", f"/api/sessions/{opened['session_id']}/events") as watch:
                assert watch.status_code == 200
                followed = sse_events(watch.iter_lines())
                replay = []
                for data in followed:
                    replay.append(data)
                    if data["type"] == "replay_end":
                        break
                release.set()
                live = []
                for data in followed:
                    live.append(data)
                    if data["type"] == "turn_done":
                        break
    finally:
        release.set()
        await client.close()
        await other.close()
    assert refused.status_code == 404
    assert replay[-1]["running"] is True and replay[-1]["clients"] == ["terminal"]
    assert [data["type"] for data in replay][:2] == ["turn_started", "run_started"]
    assert "".join(data["text"] for data in live if data["type"] == "text_delta") == "Hello from the host."
    assert live[-1] == {"type": "turn_done", "ticket": ticket, "by": "terminal", "success": True,
                        "completion_reason": "answered"}
