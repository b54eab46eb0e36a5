"""A model request borrowed from the warm session host (agent/llm_borrow.py, agent/host/lending.py).

The borrowing process is a fresh interpreter that never loads litellm itself (as the app, `run`
or `acp` are in their first seconds); the host is `coder-tui host` in its own process; the model
is the scripted server, reached by the host through litellm's real request path.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent.llm_wire import ambient_env, code_stamp
from tests.conftest import ROOT, TEST_KEY
from tests.fakellm import Reply, call
from tests.host.conftest import HostProcess

pytestmark = pytest.mark.slow

CLIENT = """
import asyncio, json, sys
from agent.llm import LLM, LLMError

async def main(model, url, key):
    llm = LLM(model, api_base=url, api_key=key, max_retries=0, borrow=True)
    streamed = []
    try:
        reply = await llm.complete([{"role": "user", "content": "hello"}], TOOLS, streamed.append,
                                   lambda why, attempt, delay: None)
    except LLMError as exc:
        result = {"error": str(exc), "kind": exc.kind}
    else:
        result = {"text": reply.text, "calls": [[c.name, c.arguments] for c in reply.tool_calls],
                  "tokens": [reply.prompt_tokens, reply.completion_tokens], "finish": reply.finish_reason}
    result.update(streamed=streamed, litellm="litellm" in sys.modules)
    print(json.dumps(result))

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
asyncio.run(main(*sys.argv[1:]))
"""


SESSION = """
import asyncio, json, sys
from pathlib import Path
from pydantic import SecretStr
from agent.approval import ScriptedApprover
from agent.config import Config
from agent.llm import configuration_problem
from agent.session.core import AgentSession
from agent.session.record import SessionStore
from agent.workspaces.local import LocalWorkspace

async def main(model, url, key, ws):
    events = []
    config = Config(model=model, api_base=url, api_key=SecretStr(key), mode="allow")
    session = AgentSession.open(config, LocalWorkspace(ws), ScriptedApprover([]), events.append,
                                store=SessionStore(Path(ws) / ".sessions"))
    unknown = await configuration_problem("nosuchprovider/model")
    done = await session.run("what does a.py hold?")
    window = await session.agent.context_window("anthropic/claude-sonnet-4-5")
    print(json.dumps({"kinds": [e.type for e in events], "success": done.success, "final": done.final_response, "unknown": unknown,
                      "window": window, "litellm": "litellm" in sys.modules}))

asyncio.run(main(*sys.argv[1:]))
"""


def ask(host: HostProcess, request: dict[str, Any]) -> dict[str, Any]:
    """The host's first answer to one request line on a new connection."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(60)
        conn.connect(str(host.socket))
        conn.sendall((json.dumps({"id": 1, **request}) + "\n").encode())
        return json.loads(conn.makefile("rb").readline())


def probe(host: HostProcess, env: dict[str, str] | None = None, code: str | None = None) -> dict[str, Any]:
    return ask(host, {"type": "model", "probe": True, "env": ambient_env(env or host.env),
                      "code": code_stamp() if code is None else code})


def wait_warm(host: HostProcess) -> None:
    """Until the host's model library is loaded (it loads as the host starts)."""
    deadline = time.monotonic() + 120
    while (answer := probe(host))["ok"] is False:
        assert "still loading" in answer["error"], answer
        assert time.monotonic() < deadline, "the host did not load its model library in 120 s"
        time.sleep(0.2)


def borrow(host: HostProcess, llm: Any, **env: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", CLIENT, llm.model, llm.url, TEST_KEY], cwd=ROOT,
                          env={**host.env, "CODER_TUI_HOST": "auto", **env}, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def lent(host: HostProcess) -> int:
    return ask(host, {"type": "list"})["lent"]


@pytest.fixture
def warm_host(start_host: Any) -> HostProcess:
    host = start_host()
    wait_warm(host)
    return host


def test_a_process_still_loading_its_model_library_has_the_host_make_its_request(warm_host, fake_llm):
    fake_llm.script(Reply(text="Hello from the warm host, in several pieces.", chunk_size=8),
                    Reply(tool_calls=[call("read_file", path="a.py")]))
    first = borrow(warm_host, fake_llm)
    assert first["text"] == "Hello from the warm host, in several pieces."
    assert len(first["streamed"]) > 1 and "".join(first["streamed"]) == first["text"]  # streamed as it came
    assert first["finish"] == "stop" and first["tokens"][0] > 0
    assert first["litellm"] is False  # this process never imported the model library
    second = borrow(warm_host, fake_llm)
    assert second["calls"] == [["read_file", '{"path": "a.py"}']] and second["litellm"] is False
    assert lent(warm_host) == 2
    sent = fake_llm.requests[0]
    assert sent["model"] == "fake-model" and sent["messages"][-1]["content"] == "hello"
    assert [t["function"]["name"] for t in sent["tools"]] == ["read_file"]


def test_a_whole_turn_with_a_tool_call_runs_on_the_hosts_model_library(warm_host, fake_llm, tmp_path: Path):
    """The session's questions to litellm's model table (the provider, the context window, tool
    calling) and its requests are all answered by the host: the turn never waits for an import."""
    (tmp_path / "a.py").write_text("x = 1\n")
    fake_llm.script(Reply(tool_calls=[call("read_file", file_path="a.py")]), Reply(text="It sets x to 1."))
    done = subprocess.run([sys.executable, "-c", SESSION, fake_llm.model, fake_llm.url, TEST_KEY, str(tmp_path)],
                          cwd=ROOT, env={**warm_host.env, "CODER_TUI_HOST": "auto"}, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["success"] and result["final"] == "It sets x to 1." and "tool_result" in result["kinds"], result
    assert result["unknown"] and "nosuchprovider" in result["unknown"]  # litellm's verdict, read in the host
    assert result["window"] == 200_000  # from litellm's model table, read in the host
    assert result["litellm"] is False
    assert lent(warm_host) == 2
    assert "x = 1" in json.dumps(fake_llm.requests[1]["messages"])  # the tool ran here; its result was sent


def test_a_refused_request_is_made_in_the_process_and_a_failure_reads_the_same_either_way(warm_host, fake_llm):
    error = Reply(status=400, error_message="messages: bad shape", error_code="invalid_request_error")
    fake_llm.script(error, error, Reply(text="made here"))
    borrowed = borrow(warm_host, fake_llm)
    assert borrowed["litellm"] is False
    here = borrow(warm_host, fake_llm, CODER_TUI_HOST="off")
    assert here["litellm"] is True
    assert borrowed["error"] == here["error"] and borrowed["kind"] == here["kind"]
    assert "bad shape" in borrowed["error"]
    other = borrow(warm_host, fake_llm, LITELLM_LOG="DEBUG")  # the library would behave otherwise there
    assert other["text"] == "made here" and other["litellm"] is True
    assert lent(warm_host) == 0  # the failure was not a lent reply; the other environment was refused


def test_the_host_says_why_it_will_not_lend(warm_host):
    other_code = probe(warm_host, code="0" * 32)
    assert other_code["ok"] is False and "other code" in other_code["error"]
    env = {**warm_host.env, "OPENAI_API_KEY": "sk-another-key-0123456789", "HTTPS_PROXY": "http://127.0.0.1:9"}
    other_env = probe(warm_host, env=env)
    assert other_env["ok"] is False
    assert "HTTPS_PROXY" in other_env["error"] and "OPENAI_API_KEY" in other_env["error"]
    assert "sk-another" not in other_env["error"] and "127.0.0.1" not in other_env["error"]  # names, never values
    assert probe(warm_host)["ok"] is True


def test_a_session_borrows_unless_its_config_says_host_off(tmp_path: Path):
    from pydantic import SecretStr

    from agent.approval import ScriptedApprover
    from agent.config import Config
    from agent.session.core import AgentSession
    from agent.session.record import SessionStore
    from agent.workspaces.local import LocalWorkspace

    def llm_of(host: str) -> Any:
        config = Config(model="openai/fake-model", api_key=SecretStr(TEST_KEY), host=host)
        session = AgentSession.open(config, LocalWorkspace(str(tmp_path)), ScriptedApprover([]), lambda _e: None,
                                    store=SessionStore(tmp_path / f"sessions-{host}"))
        return session.llm()

    assert llm_of("auto").borrow is True
    assert llm_of("off").borrow is False


def test_run_no_host_borrows_nothing(warm_host, fake_llm, tmp_path: Path):
    fake_llm.script(Reply(text="made in the run's own process"))
    # a cold interpreter (not a fork of the tests' warm one): its model library is still loading
    # when it asks the model, as a user's `run` is
    done = subprocess.run([sys.executable, "-m", "tui.cli", "run", "say hi", "--no-host", "--model", fake_llm.model,
                           "--api-base", fake_llm.url, "--api-key", TEST_KEY, "--mode", "allow",
                           "--workspace", str(tmp_path)],
                          env={**warm_host.env, "CODER_TUI_HOST": "auto"}, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    assert "made in the run's own process" in done.stdout
    assert lent(warm_host) == 0


FACTS = """
import asyncio, json, socket, sys, time
from agent.hostplace import socket_path
from agent.llm import configuration_problem
from agent.modelfacts import ask_early, lent_facts

def answered():
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(60)
        conn.connect(str(socket_path()))
        conn.sendall(b'{"type": "list", "id": 1}\\n')
        return json.loads(conn.makefile("rb").readline())["facts"]

async def main(early_model, model):
    ask_early(early_model)
    deadline = time.monotonic() + 120
    while answered() < 1:  # busy here: the event loop gets no turn until the host has answered
        assert time.monotonic() < deadline, "the early question never reached the host"
        time.sleep(0.05)
    early = await lent_facts(early_model)
    together = await asyncio.gather(lent_facts(model), lent_facts(model), configuration_problem(model))
    print(json.dumps({"early": early.window, "windows": [together[0].window, together[1].window],
                      "problem": together[2], "answered": answered(), "litellm": "litellm" in sys.modules}))

asyncio.run(main(*sys.argv[1:]))
"""


def test_model_facts_are_asked_early_and_once_however_many_ask_at_once(warm_host):
    """The app asks a warm host for its model's facts as soon as it has read its config, on a
    thread: the question reaches the host while the interpreter is still busy opening the session
    (its event loop has no turn). Callers that ask at once (the session's window, the app's model
    check) share one question."""
    done = subprocess.run([sys.executable, "-c", FACTS, "anthropic/claude-sonnet-4-5", "openai/gpt-4o"], cwd=ROOT,
                          env={**warm_host.env, "CODER_TUI_HOST": "auto"}, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["early"] == 200_000  # litellm's table, read in the host, not asked twice
    assert result["windows"] == [128_000, 128_000] and result["problem"] is None
    assert result["answered"] == 2  # one question per model
    assert result["litellm"] is False
