"""Sessions with a chosen profile and config, on the scripted model; MCP servers from tests/interop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.conftest import ROOT, TEST_KEY, Harness, open_harness
from tests.fakellm import FakeLLM

NODE_MODULES = ROOT / "tests" / "interop" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = NODE_MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM = NODE_MODULES / "server-filesystem" / "dist" / "index.js"


def requested_tools(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


@pytest.fixture
async def make_session(fake_llm: FakeLLM, tmp_path: Path) -> Any:
    """make(mode=..., files=..., decisions=..., resume=..., **config fields) -> Harness."""
    from agent.approval import ScriptedApprover
    from agent.config import Config, McpServerSettings

    created: list[Harness] = []

    def make(mode: str = "allow", files: dict[str, str] | None = None, decisions: list[Any] | None = None,
             resume: str | None = None, root: Path | None = None, **fields: Any) -> Harness:
        servers = {name: McpServerSettings.model_validate(s) for name, s in fields.pop("mcp_servers", {}).items()}
        config = Config(model=fields.pop("model", fake_llm.model), api_base=fake_llm.url,
                        api_key=SecretStr(TEST_KEY), mode=mode, timeout=10.0, max_retries=1,  # type: ignore[arg-type]
                        retry_base_delay=0.01, mcp_servers=servers, **fields)
        harness = open_harness(fake_llm, root or tmp_path / "ws", files, config, ScriptedApprover(decisions or []),
                               resume)
        created.append(harness)
        return harness

    yield make
    for harness in created:
        await harness.session.close()
