"""Lines that are not one JSON-RPC object, sent on the stdin of a real `coder-tui acp` process: each
gets its JSON-RPC error and the agent goes on answering (issue 20: `[]` ended the process, a deeply
nested request was never answered)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent.frontends.acp.gate import problem
from tests.conftest import TEST_KEY, cli, cli_env
from tests.fakellm import FakeLLM

DEEP = 100_000
HOSTILE: list[tuple[bytes, int, Any]] = [  # (line, error code, the id the answer carries)
    (b"[]", -32600, None),
    (b'[{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}]', -32600, None),
    (b"42", -32600, None),
    (b'"initialize"', -32600, None),
    (b"null", -32600, None),
    (b"{not json", -32700, None),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": ' + b"[" * DEEP + b"]" * DEEP + b"}",
     -32700, 3),
    (b'{"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"a": ' + b"[" * 200 + b"]" * 200 + b"}}",
     -32600, 4),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": ' + b"{" * DEEP, -32700, 5),
    (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 6, "method": 12}', -32600, 6),
    (b"\xff\xfe{}", -32700, None),
]


@pytest.mark.parametrize("line,code,request_id", HOSTILE, ids=range(len(HOSTILE)))
def test_each_hostile_line_has_its_answer(line: bytes, code: int, request_id: Any) -> None:
    answer = problem(line)
    assert answer is not None and answer["error"]["code"] == code and answer["id"] == request_id


def test_well_formed_messages_pass() -> None:
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
                    {"jsonrpc": "2.0", "id": "x", "result": {}}, {"jsonrpc": "2.0", "method": "session/cancel"}):
        assert problem(json.dumps(message).encode()) is None


async def test_a_real_acp_process_answers_every_hostile_line_and_goes_on(isolated_home: Path,
                                                                        fake_llm: FakeLLM) -> None:
    proc = await asyncio.create_subprocess_exec(
        *cli("acp", "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY),
        env=cli_env(isolated_home), cwd=str(isolated_home), limit=16 * 1024 * 1024,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        answers: list[dict[str, Any]] = []
        for number, (line, code, request_id) in enumerate(HOSTILE):
            proc.stdin.write(line + b"\n")
            initialize = {"jsonrpc": "2.0", "id": 1000 + number, "method": "initialize",
                          "params": {"protocolVersion": 1, "clientCapabilities": {}}}
            proc.stdin.write(json.dumps(initialize).encode() + b"\n")  # and the agent still answers
            await proc.stdin.drain()
            error = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
            assert error.get("error", {}).get("code") == code and error["id"] == request_id, (number, error)
            answers.append(json.loads(await asyncio.wait_for(proc.stdout.readline(), 60)))
        assert [a["id"] for a in answers] == [1000 + n for n in range(len(HOSTILE))]
        assert all(a["result"]["agentInfo"]["name"] == "coder-tui" for a in answers)
        assert proc.returncode is None
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 60)
        stderr = (await proc.stderr.read()).decode(errors="replace") if proc.stderr else ""
    assert "Traceback" not in stderr, stderr
