"""One three-tool-call task against strict servers of four APIs, with an MCP server whose tool names
and schemas no provider takes as they are (tests/mcp_dotted.py).

Each server validates what its real API validates and answers with its real error
(tests/strict_openai.py for Chat Completions, tests/fake_responses.py for OpenAI Responses, which
litellm's bridge uses for `openai/gpt-5-codex`, tests/fake_gemini.py for Gemini generateContent,
tests/fake_ollama.py for Ollama /api/chat); a request any of them refuses fails the task.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.fake_gemini import FakeGemini
from tests.fake_ollama import FakeOllama
from tests.fake_responses import FakeResponses
from tests.fakellm import FakeLLM, Reply, ScriptedServer, call
from tests.mcp_dotted import LONG

SERVERS: dict[str, type[ScriptedServer]] = {"openai": FakeLLM, "responses": FakeResponses, "gemini": FakeGemini,
                                            "ollama": FakeOllama}
VALID = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


@pytest.fixture(params=list(SERVERS))
def fake_llm(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """Overrides the OpenAI server of tests/conftest.py: `make_session` talks to this one."""
    with SERVERS[request.param]() as server:
        yield server


def offered(body: dict[str, Any]) -> dict[str, str]:
    """The tools a request offers, name -> description, in any of the four wire formats."""
    functions: list[dict[str, Any]] = []
    for tool in body.get("tools") or []:
        if "function" in tool:  # Chat Completions, Ollama
            functions.append(tool["function"])
        elif "name" in tool:  # Responses
            functions.append(tool)
        functions += tool.get("function_declarations") or tool.get("functionDeclarations") or []  # Gemini
    return {f["name"]: f.get("description", "") for f in functions}


def three_calls() -> Callable[[dict[str, Any]], Reply]:
    """The long dotted MCP tool, then `notes.add`, then read_file, then the answer: found by the
    names the request offers, as a model would."""
    replies: list[Reply] = []

    def respond(body: dict[str, Any]) -> Reply:
        if not replies:
            names = offered(body)
            long_name = next(n for n, d in names.items() if d == "Read a text file of the workspace.")
            notes = next(n for n, d in names.items() if d == "Add a note.")
            replies.extend([Reply(tool_calls=[call(long_name, path="a.txt", options={"mode": "full"})]),
                            Reply(text="Noting it.", tool_calls=[call(notes, text="hello", tags=["x"])]),
                            Reply(tool_calls=[call("read_file", file_path="a.txt")]),
                            Reply(text="All three done.")])
        return replies.pop(0)

    return respond


async def test_a_three_tool_task_with_a_dotted_mcp_server(make_session: Any, fake_llm: ScriptedServer) -> None:
    fake_llm.responder = three_calls()
    dotted = {"command": sys.executable, "args": [str(ROOT / "tests" / "mcp_dotted.py")]}  # a Python process: `slow`
    h = make_session(mode="allow", files={"a.txt": "alpha\n"}, mcp_servers={"dotted": dotted})
    complete = await h.run("use the tools")
    assert fake_llm.rejected == []
    assert (complete.completion_reason, complete.final_response) == ("answered", "All three done.")
    names = offered(fake_llm.requests[0])
    assert all(VALID.match(n) for n in names), names
    assert {"mcp__dotted__notes_add", "read_file"} <= set(names)
    assert len([n for n in names if n.startswith("mcp__dotted__notes_add")]) == 2  # the clash kept apart
    # The calls reached the MCP server under its own names, with the arguments the model sent.
    last = json.dumps(fake_llm.requests[-1])
    assert f'{LONG} {{\\"options\\": {{\\"mode\\": \\"full\\"}}, \\"path\\": \\"a.txt\\"}}' in last
    assert 'notes.add {\\"tags\\": [\\"x\\"], \\"text\\": \\"hello\\"}' in last
    assert "alpha" in last
    assert len(fake_llm.requests) == 4
