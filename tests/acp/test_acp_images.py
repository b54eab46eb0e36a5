"""ACP image content blocks: advertised only for a model that takes images, sent as image parts."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from tests.conftest import write_files
from tests.fakellm import FakeLLM, Reply, images_in
from tests.media.pictures import png


def _vision(home: Path, on: bool) -> None:
    config = home / "config" / "coder-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"vision = {'true' if on else 'false'}\n")


async def _session(client: Any, root: Path) -> tuple[Any, str]:
    init = await client.initialize()
    session = await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    return init, str(session["sessionId"])


async def test_image_blocks_reach_a_model_that_takes_them(acp_client: Any, fake_llm: FakeLLM, isolated_home: Path,
                                                          tmp_path: Path) -> None:
    _vision(isolated_home, True)
    root = write_files(tmp_path / "ws", {"a.txt": "x\n"})
    client = await acp_client()
    init, sid = await _session(client, root)
    assert init["agentCapabilities"]["promptCapabilities"]["image"] is True
    data = base64.b64encode(png(shade=9)).decode()
    fake_llm.script(Reply(text="a square"))
    prompt = [{"type": "text", "text": "what is it?"}, {"type": "image", "data": data, "mimeType": "image/png"}]
    result = await client.request("session/prompt", {"sessionId": sid, "prompt": prompt})
    assert result["stopReason"] == "end_turn"
    assert images_in(fake_llm.requests[-1]) == [f"data:image/png;base64,{data}"]
    assert fake_llm.requests[-1]["messages"][-1]["content"][0] == {"type": "text", "text": "what is it?"}


async def test_image_blocks_are_refused_for_a_model_without_them(acp_client: Any, fake_llm: FakeLLM,
                                                                 isolated_home: Path, tmp_path: Path) -> None:
    _vision(isolated_home, False)
    root = write_files(tmp_path / "ws", {"a.txt": "x\n"})
    client = await acp_client()
    init, sid = await _session(client, root)
    assert init["agentCapabilities"]["promptCapabilities"]["image"] is False
    data = base64.b64encode(png()).decode()
    prompt = [{"type": "text", "text": "look"}, {"type": "image", "data": data, "mimeType": "image/png"}]
    request = client.request_nowait("session/prompt", {"sessionId": sid, "prompt": prompt})
    reply = await client.reply(request)
    assert "openai/fake-model does not accept images" in str(reply), reply
    assert fake_llm.requests == []


async def test_a_block_that_is_not_the_image_it_says_is_refused(acp_client: Any, fake_llm: FakeLLM,
                                                                isolated_home: Path, tmp_path: Path) -> None:
    _vision(isolated_home, True)
    root = write_files(tmp_path / "ws", {"a.txt": "x\n"})
    client = await acp_client()
    _, sid = await _session(client, root)
    prompt = [{"type": "image", "data": base64.b64encode(b"plain text").decode(), "mimeType": "image/png"}]
    reply = await client.reply(client.request_nowait("session/prompt", {"sessionId": sid, "prompt": prompt}))
    assert "image 1 (image/png) is not a png, jpeg, gif or webp image" in str(reply), reply
    assert fake_llm.requests == []
