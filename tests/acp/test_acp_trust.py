"""ACP sessions follow the user's trust per folder (`coder-tui trust DIR`), never the editor's:
what an untrusted folder's files asked for is said in the session, once, at its first prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp.test_acp import open_session, text_of
from tests.conftest import run_cli, write_files
from tests.fakellm import FakeLLM, Reply

PROFILE = 'tools = ["read", "exec"]\n'


async def test_untrusted_folders_files_are_named_and_trusted_ones_apply(acp_client: Any, fake_llm: FakeLLM,
                                                                         tmp_path: Path, isolated_home: Path) -> None:
    wild = write_files(tmp_path / "wild", {".coder-tui.toml": 'mode = "allow"\n',
                                          ".coder-tui/profiles/coder.toml": PROFILE})
    mine = write_files(tmp_path / "mine", {".coder-tui.toml": 'mode = "allow"\n'})
    assert run_cli(isolated_home, "trust", str(mine)).returncode == 0
    client = await acp_client()
    sid = await open_session(client, wild)
    fake_llm.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    for _ in range(2):
        await client.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
    said = text_of(client.updates(sid, "agent_message_chunk"))
    assert said.count("ignored mode = 'allow'") == 1 and said.count("ignored tools = ['exec']") == 1, said
    assert "coder-tui trust DIR" in said
    assert "bash_exec" not in {t["function"]["name"] for t in fake_llm.requests[0]["tools"]}
    trusted = await client.request("session/new", {"cwd": str(mine), "mcpServers": []})
    assert trusted["modes"]["currentModeId"] == "allow"
