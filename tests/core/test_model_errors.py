"""Model errors say what happened: the kind, the model or the address, never the key.

Every case goes through litellm's real adapters against scripted servers on loopback (or a port
nothing listens on); configuration errors end `coder-tui run` with exit code 2.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.llm import LLM, LLMError
from tests.conftest import cli, cli_env
from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fakellm import FakeLLM, Reply

KEY = "sk-ant-errors-0123456789abcdefSECRETKEY"


def closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def failure(model: LLM) -> tuple[LLMError, list[str]]:
    """The error of one request, and the reasons given for each retry before it."""
    retries: list[str] = []
    with pytest.raises(LLMError) as caught:
        await model.complete([{"role": "user", "content": "hi"}], [], lambda text: None,
                             lambda why, attempt, delay: retries.append(why))
    assert KEY not in str(caught.value) and all(KEY not in why for why in retries)
    return caught.value, retries


def fast(model: str, api_base: str | None, api_key: str | None = KEY, var: str | None = None) -> LLM:
    return LLM(model, api_base, api_key, timeout=5, max_retries=1, retry_base_delay=0.01, key_variable=var)


async def test_a_missing_key_is_named_with_the_variable_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    error, retries = await failure(fast("openai/gpt-4.1", None, None, "OPENAI_API_KEY"))
    assert (error.kind, error.configuration, retries) == ("no_key", True, [])
    assert str(error).startswith("no API key for openai/gpt-4.1: set OPENAI_API_KEY or CODER_TUI_API_KEY")
    assert "server error" not in str(error)
    error, _ = await failure(fast("anthropic/claude-sonnet-4-5", None, None, "ANTHROPIC_API_KEY"))
    assert error.kind == "no_key" and "ANTHROPIC_API_KEY" in str(error)


async def test_an_openai_compatible_server_at_an_api_base_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # A local server (llama.cpp, vLLM, LM Studio) takes no key; the OpenAI client refused to send without one.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeLLM(Reply(text="hello")) as server:
        reply = await fast("openai/local-model", server.url, None, "OPENAI_API_KEY").complete(
            [{"role": "user", "content": "hi"}], [], lambda text: None, lambda *a: None)
        assert reply.text == "hello" and len(server.requests) == 1
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")  # a key the user has is still sent
        server.script(Reply(text="again"))
        await fast("openai/local-model", server.url, None, "OPENAI_API_KEY").complete(
            [{"role": "user", "content": "hi"}], [], lambda text: None, lambda *a: None)
        assert server.headers[-1].get("Authorization") == "Bearer sk-from-the-environment"


@pytest.mark.parametrize("model", ["openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "ollama_chat/qwen2.5-coder"])
async def test_a_refused_connection_names_the_address(model: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    error, retries = await failure(fast(model, url))
    # Nothing listens there: retrying only makes the user wait (it was five tries over 16 s).
    assert error.kind == "refused" and not error.configuration and retries == []
    assert str(error).startswith(f"cannot connect to {url}: connection refused (is the server running there?")
    assert "--api-base URL" in str(error) and "/setup" in str(error) and "server error" not in str(error)


def test_a_default_address_is_named_when_none_was_given() -> None:
    from agent.llm.errors import where

    assert where("anthropic/claude-sonnet-4-5", None) == "https://api.anthropic.com"
    assert where("ollama_chat/qwen2.5-coder", None) == "http://localhost:11434"
    assert where("openai/gpt-4.1", "http://proxy:4000") == "http://proxy:4000"


@pytest.mark.parametrize("server,message", [
    (FakeLLM, "The model `gpt-9` does not exist"),
    (FakeAnthropic, "model: claude-9"),
    (FakeOllama, "model 'qwen9' not found, try pulling it first"),
])
async def test_an_unknown_model_is_a_configuration_error(server: Any, message: str) -> None:
    with server(Reply(status=404, error_message=message)) as fake:
        error, retries = await failure(fast(fake.model, fake.url))
    assert (error.kind, error.configuration, retries) == ("unknown_model", True, [])
    assert str(error).startswith(f"model {fake.model} was not found at {fake.url}: {message}")


async def test_an_unknown_provider_is_a_configuration_error() -> None:
    from agent.llm import configuration_problem

    error, _ = await failure(fast("foo/bar", None))
    assert (error.kind, error.configuration) == ("unknown_provider", True)
    assert "litellm does not know the provider of model 'foo/bar'" in str(error)
    assert await configuration_problem("foo/bar") == str(error)
    assert await configuration_problem("anthropic/claude-sonnet-4-5") is None


@pytest.mark.parametrize("server", [FakeLLM, FakeAnthropic])
async def test_rate_limits_and_server_errors_name_the_kind_and_status(server: Any) -> None:
    with server(Reply(status=429, error_message="slow down", headers={"Retry-After": "0"}),
                Reply(status=500, error_message="boom"), Reply(status=503, error_message="busy")) as fake:
        error, retries = await failure(LLM(fake.model, fake.url, KEY, timeout=5, max_retries=2,
                                           retry_base_delay=0.01))
    assert retries[0].startswith("rate limited by ") and ": slow down" in retries[0]
    assert retries[0].endswith("; waiting the 0 s it asks for")
    assert retries[1].startswith(f"server error 500 from {fake.url}: boom")
    assert str(error).startswith(f"server error 503 from {fake.url}: busy")
    assert f"{fake.model} at {fake.url}; gave up after 3 attempts" in str(error)


async def test_anthropic_overloaded_says_so() -> None:
    with FakeAnthropic(Reply(status=529, error_message="Overloaded")) as fake:
        error, retries = await failure(LLM(fake.model, fake.url, KEY, timeout=5, max_retries=0))
    assert str(error) == (f"Anthropic is overloaded (overloaded_error) ({fake.model} at {fake.url}; gave up after "
                          "1 attempts): it usually passes within minutes; send the message again later, or switch "
                          "model (--model, /model, `fallback_models`)")


async def test_a_rejected_key_is_an_authentication_error_without_the_key() -> None:
    with FakeAnthropic(Reply(status=401, error_message=f"invalid x-api-key {KEY}")) as fake:
        error, retries = await failure(fast(fake.model, fake.url, var="ANTHROPIC_API_KEY"))
    assert (error.kind, error.configuration, retries) == ("auth", False, [])
    assert str(error).startswith(f"authentication failed for {fake.model} at {fake.url}: Anthropic rejected the "
                                 "API key (invalid x-api-key")
    assert str(error).endswith("; set ANTHROPIC_API_KEY or CODER_TUI_API_KEY, or pass --api-key")


# -- `coder-tui run`: configuration errors exit 2 ---------------------------------------------
def run(home: Path, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli("run", "hi", "--workspace", str(ws), "--json", *args), env=cli_env(home),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_headless_unknown_provider_exits_2_before_the_run(tmp_path: Path, isolated_home: Path) -> None:
    done = run(isolated_home, tmp_path, "--model", "foo/bar", "--api-key", KEY)
    assert done.returncode == 2, done.stderr
    assert "litellm does not know the provider of model 'foo/bar'" in done.stderr
    assert "the model is set by: command line" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr and KEY not in done.stderr


def test_headless_unknown_model_exits_2_with_an_error_event(tmp_path: Path, isolated_home: Path) -> None:
    with FakeAnthropic(Reply(status=404, error_message="model: claude-nope")) as fake:
        done = run(isolated_home, tmp_path, "--model", "anthropic/claude-nope", "--api-base", fake.url,
                   "--api-key", KEY)
    assert done.returncode == 2, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    error = next(e for e in events if e["type"] == "error")
    assert error["configuration"] is True
    assert error["message"].startswith(f"model anthropic/claude-nope was not found at {fake.url}")
    assert KEY not in done.stdout + done.stderr


def test_headless_refused_connection_exits_1_naming_the_address(tmp_path: Path, isolated_home: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"  # the default max_retries: a refused connection is not retried
    done = run(isolated_home, tmp_path, "--model", "ollama_chat/qwen2.5-coder", "--api-base", url)
    assert done.returncode == 1, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e for e in events if e["type"] == "retrying"] == []
    error = next(e for e in events if e["type"] == "error")
    assert error["message"].startswith(f"cannot connect to {url}: connection refused")
    assert "--api-base URL" in error["message"] and "/setup" in error["message"]
    assert error["configuration"] is False


@pytest.mark.parametrize("where", ["flag", "environment", "file"])
def test_an_api_base_without_a_scheme_is_a_usage_error(tmp_path: Path, isolated_home: Path, where: str) -> None:
    args = ["--model", "openai/gpt-4.1", "--api-key", KEY]
    env = cli_env(isolated_home)
    if where == "flag":
        args += ["--api-base", "127.0.0.1:9"]
    elif where == "environment":
        env["CODER_TUI_API_BASE"] = "127.0.0.1:9"
    else:
        (tmp_path / ".coder-tui.toml").write_text('api_base = "127.0.0.1:9"\n')
        args.append("--trust")
    done = subprocess.run(cli("run", "hi", "--workspace", str(tmp_path), "--json", *args), env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stdout + done.stderr
    named = {"flag": "--api-base", "environment": "CODER_TUI_API_BASE", "file": "`api_base` in "}[where]
    assert named in done.stderr and "'127.0.0.1:9' is not an http(s) address" in done.stderr
    assert "write it as http://127.0.0.1:9" in done.stderr and done.stdout == "" and "Traceback" not in done.stderr


async def test_a_key_of_no_known_shape_is_masked_when_the_provider_quotes_it() -> None:
    key = "plainkey-4f1c9a7e2b"  # nothing marks this as a key but having been given as one
    with FakeLLM(Reply(status=401, error_message=f"Incorrect API key provided: {key}")) as fake:
        with pytest.raises(LLMError) as caught:
            await LLM(fake.model, fake.url, key, max_retries=0).complete(
                [{"role": "user", "content": "hi"}], [], lambda text: None, lambda *a: None)
    assert key not in str(caught.value) and "authentication failed" in str(caught.value)
