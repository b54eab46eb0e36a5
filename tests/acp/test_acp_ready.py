"""`coder-tui acp` answers the editor before litellm has loaded (issue 22: ready within 0.5 s).

No timing: litellm's import is held in the agent process (tests/import_gate.py); `initialize`
and `session/new` must be answered meanwhile, and a prompt sent then is answered once it loads.
Plain JSON-RPC lines over the process's pipes, as an editor sends them.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.conftest import TEST_KEY, cli_env
from tests.fakellm import FakeLLM, Reply
from tests.import_gate import gate_env


class Agent:
    def __init__(self, home: Path, llm: FakeLLM, env: dict[str, str]) -> None:
        # a cold interpreter (not the tests' warm zygote): its litellm must not be loaded yet
        self.proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "acp", "--model", llm.model, "--api-base",
                                      llm.url, "--api-key", TEST_KEY, "--mode", "allow"], env=cli_env(home, **env),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        return self.wait(lambda m: m.get("id") == request_id)

    def wait(self, wanted: Any, timeout: float = 120) -> dict[str, Any]:
        while True:
            try:
                message = self.lines.get(timeout=timeout)
            except queue.Empty:
                self.proc.kill()
                raise AssertionError(f"no answer within {timeout} s: {self.proc.communicate()[1][-2000:]}") from None
            if wanted(message):
                return message


def test_acp_answers_initialize_and_new_session_while_litellm_is_still_loading(
        isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    gate, hook = tmp_path / "gate", tmp_path / "hook"
    (tmp_path / "ws").mkdir()
    agent = Agent(isolated_home, fake_llm, gate_env(hook, gate))
    try:
        assert agent.request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})["result"]
        session = agent.request(2, "session/new", {"cwd": str(tmp_path / "ws"), "mcpServers": []})["result"]
        assert not gate.exists()  # both answered while litellm's import could not have finished
        fake_llm.script(Reply(text="hello after loading"))
        assert agent.proc.stdin is not None
        agent.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}}) + "\n")
        agent.proc.stdin.flush()
        gate.touch()
        text = agent.wait(lambda m: m.get("method") == "session/update"
                          and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk")
        assert "hello" in text["params"]["update"]["content"]["text"]
        assert agent.wait(lambda m: m.get("id") == 3)["result"]["stopReason"] == "end_turn"
    finally:
        agent.proc.terminate()
        agent.proc.communicate(timeout=60)


def test_the_sdk_models_are_built_without_attribute_docstrings_and_ours_keep_theirs(tmp_path: Path) -> None:
    """agent/frontends/acp/sdk.py: the SDK's import skips reading its source for docstrings
    (a third of it); the change is the SDK's alone and over once it is imported."""
    code = ("import agent.frontends.acp\n"
            "from acp.schema import InitializeRequest\n"
            "from pydantic import BaseModel, ConfigDict\n"
            "class Ours(BaseModel):\n"
            "    model_config = ConfigDict(use_attribute_docstrings=True)\n"
            "    x: int = 0\n"
            "    '''the x'''\n"
            "print(InitializeRequest.model_fields['protocol_version'].description, Ours.model_fields['x'].description)\n")
    from tests.conftest import ROOT

    (tmp_path / "probe.py").write_text(code)  # pydantic reads docstrings from the source file
    out = subprocess.run([sys.executable, str(tmp_path / "probe.py")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split(maxsplit=1) == ["None", "the x\n"]
