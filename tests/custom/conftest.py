"""A trusted session harness (the shared `make_harness` opens folders untrusted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.conftest import TEST_KEY, open_harness


@pytest.fixture
async def trusted_harness(fake_llm: Any, tmp_path: Path) -> Any:
    from agent.approval import ScriptedApprover
    from agent.config import Config

    created: list[Any] = []

    def make(files: dict[str, str] | None = None, trusted: bool = True, mode: str = "allow",
             root: Path | None = None) -> Any:
        config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode=mode,
                        timeout=10.0, max_retries=2, retry_base_delay=0.01,  # type: ignore[arg-type]
                        workspace_trusted=trusted)
        harness = open_harness(fake_llm, root or tmp_path / "ws", files, config, ScriptedApprover([]))
        created.append(harness)
        return harness

    yield make
    for harness in created:
        await harness.session.close()


from tests.acp.conftest import acp_client, no_host  # noqa: E402,F401 - the ACP and serve fixtures, for the commands' front ends
from tests.serve.conftest import make_serve  # noqa: E402,F401
