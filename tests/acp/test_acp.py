"""`coder-tui acp` as an editor sees it: the official TypeScript SDK as the client, the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import write_files
from tests.fakellm import FakeLLM, Reply, call


def text_of(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["content"]["type"] == "text")


async def open_session(client: Any, root: Path, fs: bool = True) -> str:
    await client.initialize(fs=fs)
    result = await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    return str(result["sessionId"])


async def test_initialize_advertises_what_works(acp_client: Any) -> None:
    client = await acp_client()
    result = await client.initialize()
    caps = result["agentCapabilities"]
    assert result["protocolVersion"] == 1
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"]["embeddedContext"] is True
    assert caps["promptCapabilities"]["image"] is False
    assert result["agentInfo"]["name"] == "coder-tui"


async def test_new_session_advertises_modes_and_streams_a_prompt(acp_client: Any, fake_llm: FakeLLM,
                                                                tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"notes.md": "# Notes\n"})
    client = await acp_client("--mode", "ask")
    session = await client.initialize() and await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    sid = session["sessionId"]
    assert session["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in session["modes"]["availableModes"]] == ["ask", "allow", "plan"]
    fake_llm.script(Reply(text="Hello from the scripted model, in several chunks.", chunk_size=8))
    prompt = [{"type": "text", "text": "Summarise this"},
              {"type": "resource", "resource": {"uri": f"file://{root}/spec.txt", "text": "THE-SPEC-TEXT",
                                                "mimeType": "text/plain"}},
              {"type": "resource_link", "uri": f"file://{root}/notes.md", "name": "notes.md"}]
    result = await client.request("session/prompt", {"sessionId": sid, "prompt": prompt})
    assert result["stopReason"] == "end_turn"
    chunks = client.updates(sid, "agent_message_chunk")
    assert len(chunks) > 3
    assert text_of(chunks) == "Hello from the scripted model, in several chunks."
    user = fake_llm.requests[-1]["messages"][-1]["content"]
    assert user.startswith("Summarise this\n@notes.md")
    assert '<file path="spec.txt">\nTHE-SPEC-TEXT\n</file>' in user
    assert '<file path="notes.md">\n# Notes\n\n</file>' in user
