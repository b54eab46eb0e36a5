"""`coder-tui serve` applies the same permission rules and hooks as the app and `run` (the session
is assembled in one place): over a real socket, a denied command does not run, a hook blocks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from agent.config import Config
from agent.permissions.settings import HookSettings, PermissionSettings
from tests.conftest import TEST_KEY, write_files
from tests.fakellm import FakeLLM, Reply, call
from tests.serve.conftest import Serve, ServeThread


def test_serve_applies_the_rules_and_hooks(fake_llm: FakeLLM, tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"keep.txt": "k"})
    config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode="allow",
                    timeout=20.0, max_retries=0, retry_base_delay=0.01,
                    permissions=PermissionSettings(deny=["bash_exec(rm:*)"]),
                    hooks=HookSettings.model_validate({"pre_tool_use": [
                        {"match": "write_file", "command": "echo 'no new files today' >&2; exit 2"}]}))
    thread = ServeThread(root, config, 1 << 20, 64).start()
    try:
        serve = Serve(fake_llm, root, thread.url)
        fake_llm.script(Reply(tool_calls=[call("bash_exec", command="rm keep.txt"),
                                          call("write_file", file_path="new.txt", content="x")]),
                        Reply(text="understood"))
        response, events = serve.chat("clean up")
        assert response.status_code == 200 and events[-1] == {"done": True}
    finally:
        thread.stop()
    assert (root / "keep.txt").exists() and not (root / "new.txt").exists()
    told = json.dumps(fake_llm.requests[-1]["messages"])
    assert "denied by your permission rule bash_exec(rm:*)" in told and "no new files today" in told
