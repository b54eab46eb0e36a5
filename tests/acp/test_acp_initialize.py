"""`coder-tui acp` answers `initialize` before it imports the ACP SDK (issue 22: ready within 0.5 s;
agent/frontends/acp_initialize.py). No timing: the SDK's import is held in the agent process until
the test lets it go; `initialize` must be answered meanwhile, in the bytes the SDK would send."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.acp.test_acp_ready import Agent
from tests.conftest import ROOT, TEST_KEY
from tests.fakellm import FakeLLM

HOLD_SDK = '''
import importlib.machinery, os, sys, time

class _Gate:
    def find_spec(self, name, path=None, target=None):
        if name == "acp":
            while not os.path.exists(os.environ["CODER_TUI_TEST_SDK_GATE"]):
                time.sleep(0.02)
        return None

sys.meta_path.insert(0, _Gate())
'''


def test_initialize_is_answered_before_the_sdk_is_imported_and_the_sdk_takes_the_rest(
        isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    hook, gate = tmp_path / "hook", tmp_path / "gate"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOLD_SDK)
    (tmp_path / "ws").mkdir()
    agent = Agent(isolated_home, fake_llm, {"PYTHONPATH": f"{hook}:{ROOT}", "CODER_TUI_TEST_SDK_GATE": str(gate)})
    try:
        answer = agent.request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True}}})
        assert not gate.exists()  # answered while the SDK's import could not have happened
        assert answer["result"]["agentCapabilities"]["loadSession"] is True
        gate.touch()
        session = agent.request(2, "session/new", {"cwd": str(tmp_path / "ws"), "mcpServers": []})
        assert session["result"]["sessionId"]
    finally:
        agent.proc.terminate()
        agent.proc.communicate(timeout=60)


@pytest.mark.parametrize("params", [
    {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}},
    {"protocolVersion": 3, "clientCapabilities": {}},
    {"protocolVersion": 0, "clientInfo": {"name": "zed", "version": "1.0"}},
])
def test_the_early_answer_is_the_sdks(params: dict[str, Any]) -> None:
    import acp

    from agent.frontends.acp import AcpAgent
    from agent.frontends.acp_initialize import PROTOCOL_VERSION, response
    from acp.schema import InitializeRequest

    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    options = SimpleNamespace(model="openai/gpt-4.1", api_base=None)
    request = InitializeRequest.model_validate(params)
    agent = AcpAgent(options)
    result = asyncio.run(agent.initialize(request.protocol_version, request.client_capabilities,
                                          request.client_info))
    sdk = result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    image = sdk["agentCapabilities"]["promptCapabilities"]["image"]
    assert response({"id": 7, "params": params}, image) == {"jsonrpc": "2.0", "id": 7, "result": sdk}


def test_a_first_line_that_is_not_initialize_is_left_to_the_sdk(isolated_home: Path, fake_llm: FakeLLM) -> None:
    agent = Agent(isolated_home, fake_llm, {})
    try:
        assert agent.proc.stdin is not None
        agent.proc.stdin.write("[]\n")  # the gate's answer (agent/frontends/acp/gate.py), not ours
        agent.proc.stdin.flush()
        assert agent.wait(lambda m: "error" in m)["error"]["code"] == -32600
        assert agent.request(1, "initialize", {"protocolVersion": 1})["result"]["protocolVersion"] == 1
    finally:
        agent.proc.terminate()
        agent.proc.communicate(timeout=60)


def test_acp_still_answers_initialize_when_stdin_holds_more_than_one_line(
        isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
             {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path / "ws"),
                                                                             "mcpServers": []}}]
    from tests.conftest import cli_env

    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "acp", "--model", fake_llm.model, "--api-base",
                             fake_llm.url, "--api-key", TEST_KEY], env=cli_env(isolated_home), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))  # one write: read together
    proc.stdin.flush()
    try:
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert [a["id"] for a in answers] == [1, 2] and all("result" in a for a in answers)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
