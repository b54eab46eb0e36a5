"""`connect` decides "the host, or this process" in one place: a model the built-in clients serve
runs here (no host started: nothing slow to import), a litellm model in the host, and what needs
this process (images, a GitHub or room target, a fork) here; CODER_TUI_HOST=off keeps it here."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from agent.client.commands import Prompt
from agent.client.connect import choose, connect
from agent.client.hosted import HostedHandle
from agent.client.local import LocalHandle
from agent.config import Config
from agent.session.ports import SessionOptions
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply


def config_of(model: str, api_base: str | None = None) -> Config:
    return Config(model=model, api_base=api_base, api_key=SecretStr(TEST_KEY), workflow="direct")  # type: ignore[arg-type]


@pytest.mark.parametrize("model, options, where", [
    ("openai/gpt-4.1", {}, "local"),
    ("anthropic/claude-sonnet-4-5", {}, "local"),
    ("bedrock/anthropic.claude-v2", {}, "host"),
    ("bedrock/anthropic.claude-v2", {"images": ["a.png"]}, "local"),
    ("bedrock/anthropic.claude-v2", {"github": "o/r"}, "local"),
    ("bedrock/anthropic.claude-v2", {"fork": "abc"}, "local"),
])
def test_choose(model: str, options: dict, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODER_TUI_HOST", raising=False)  # the tests' default is off
    choice = choose(SessionOptions.model_validate(options), config_of(model))
    assert choice.where == where, choice.why


def test_the_host_setting_off_keeps_every_session_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_TUI_HOST", "off")
    assert choose(SessionOptions(), config_of("bedrock/anthropic.claude-v2")).where == "local"
    assert choose(SessionOptions(), config_of("openai/gpt-4.1"), host="off").where == "local"


async def test_a_built_in_model_runs_here_and_starts_no_host(fake_llm: FakeLLM, ws: Path, runtime_dir: Path) -> None:
    fake_llm.script(Reply(text="Here."))
    options = SessionOptions(workspace=str(ws), model=fake_llm.model, api_base=fake_llm.url, api_key=TEST_KEY)
    handle = await connect(options, config_of(fake_llm.model, fake_llm.url), name="run")
    try:
        assert isinstance(handle, LocalHandle)
        reply = await handle.submit(Prompt("hello"))
    finally:
        await handle.close()
    assert reply.ok and reply.data["success"] is True
    assert list(runtime_dir.rglob("*.sock")) == []  # no host was started for it


async def test_asked_for_the_host_it_opens_the_session_there(fake_llm: FakeLLM, ws: Path, start_host) -> None:
    host = start_host()
    fake_llm.script(Reply(text="There."))
    options = SessionOptions(workspace=str(ws), model=fake_llm.model, api_base=fake_llm.url, api_key=TEST_KEY,
                             workflow="direct")
    handle = await connect(options, config_of(fake_llm.model, fake_llm.url), name="run", host="always")
    try:
        assert isinstance(handle, HostedHandle)
        reply = await handle.submit(Prompt("hello"))
        from agent.client.hosted import live_sessions

        listed = await live_sessions(host.socket)
    finally:
        await handle.close()
    assert reply.ok and reply.data["success"] is True and reply.data["by"] == "run"
    assert [row["session_id"] for row in listed or []] == [handle.session_id]
