"""Which path a model takes (agent/llm/routing.py), and that the built-in paths never import litellm.

The routing table is checked as a user reads it (prefix -> protocol, address, key variable); the
choice of litellm for every model (`model_path`, CODER_TUI_MODEL_PATH) is honoured; and a cold
`coder-tui run` on each built-in protocol, in a fresh interpreter, never starts litellm's import
(a meta-path hook in that process writes a file the moment anything asks for `litellm`), while the
same run with the litellm path does: the hook is shown to see it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.llm import LLM
from agent.llm.routing import route
from tests.conftest import ROOT, TEST_KEY, cli_env, write_files
from tests.fake_anthropic import FakeAnthropic
from tests.fake_ollama import FakeOllama
from tests.fake_responses import FakeResponses
from tests.fakellm import FakeLLM, Reply

pytestmark = pytest.mark.cold_cli

WATCH = '''
import atexit, importlib.machinery, os, sys

_ASKED = os.environ["CODER_TUI_TEST_LITELLM_ASKED"]


class _Watched:
    # records the import's start (its module runs), not a mere look-up of where litellm is
    def __init__(self, loader, name):
        self.loader, self.name = loader, name

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        open(_ASKED, "a").write(self.name + "\\n")
        self.loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _Watch:
    def find_spec(self, name, path=None, target=None):
        if name != "litellm":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Watched(spec.loader, name)
        return spec


sys.meta_path.insert(0, _Watch())
atexit.register(lambda: "litellm" in sys.modules and open(_ASKED, "a").write("in sys.modules at exit\\n"))
'''


@pytest.mark.parametrize("model, protocol, base, key", [
    ("openai/gpt-4.1", "chat", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    ("gpt-4.1", "chat", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    ("openai/responses/gpt-4.1", "responses", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    ("openai/gpt-5-codex", "responses", "https://api.openai.com/v1", "OPENAI_API_KEY"),  # its facts: mode responses
    ("anthropic/claude-sonnet-4-5", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    ("claude-sonnet-4-5", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    ("openrouter/anthropic/claude-sonnet-4.5", "chat", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    ("ollama_chat/qwen2.5-coder", "chat", "http://localhost:11434", "OLLAMA_API_KEY"),
    ("groq/llama-3.3-70b-versatile", "chat", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    ("deepseek/deepseek-chat", "chat", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    ("mistral/mistral-large-latest", "chat", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    ("xai/grok-4", "chat", "https://api.x.ai/v1", "XAI_API_KEY"),
    ("together_ai/meta-llama/Llama-3-70b", "chat", "https://api.together.xyz/v1", "TOGETHERAI_API_KEY"),
    ("bedrock/anthropic.claude-3-5-sonnet", "litellm", None, None),
    ("vertex_ai/gemini-2.5-pro", "litellm", None, None),
    ("azure/gpt-4o", "litellm", None, None),
    ("gemini/gemini-2.5-pro", "litellm", None, None),
])
def test_the_routing_table(model: str, protocol: str, base: str | None, key: str | None,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("CODER_TUI_MODEL_PATH", "OPENAI_BASE_URL", "OPENAI_API_BASE", "OLLAMA_API_BASE"):
        monkeypatch.delenv(variable, raising=False)
    found = route(model)
    assert (found.protocol, found.base, found.key_variable) == (protocol, base, key)


def test_addresses_given_and_the_endpoints_they_make(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODER_TUI_MODEL_PATH", raising=False)
    assert route("openai/local", "http://127.0.0.1:8080/v1").url("/chat/completions") == \
        "http://127.0.0.1:8080/v1/chat/completions"
    assert route("ollama_chat/qwen").url("/chat/completions") == "http://localhost:11434/v1/chat/completions"
    assert route("anthropic/claude-sonnet-4-5", "http://proxy:4000").url("/messages") == "http://proxy:4000/v1/messages"
    assert route("openai/responses/gpt-4.1").url("/responses") == "https://api.openai.com/v1/responses"
    assert route("openai/responses/gpt-4.1").model == "gpt-4.1"
    gemini = route("gemini/gemini-2.5-flash", "https://generativelanguage.googleapis.com/v1beta/openai/")
    assert (gemini.protocol, gemini.key_variable) == ("chat", "GEMINI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway:9000/v1")
    assert route("openai/gpt-4.1").base == "http://gateway:9000/v1"


def test_litellm_for_every_model_when_the_user_chooses_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agent.config import ConfigError, load_config

    monkeypatch.delenv("CODER_TUI_MODEL_PATH", raising=False)
    assert LLM("anthropic/claude-sonnet-4-5").route().protocol == "anthropic"
    assert LLM("anthropic/claude-sonnet-4-5", path="litellm").route().protocol == "litellm"
    monkeypatch.setenv("CODER_TUI_MODEL_PATH", "litellm")
    assert LLM("openai/gpt-4.1").route().protocol == "litellm"
    config_file = tmp_path / "config" / "coder-tui" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text('model_path = "litellm"\n')
    monkeypatch.delenv("CODER_TUI_MODEL_PATH")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert load_config(None, {"model": "openai/gpt-4.1"}).model_path == "litellm"
    with pytest.raises(ConfigError, match="CODER_TUI_MODEL_PATH must be auto or litellm"):
        load_config(None, {}, {"CODER_TUI_MODEL_PATH": "fast"})


def cold_run(home: Path, ws: Path, server: Any, hook: Path, *extra: str, **env: str) -> tuple[Any, str]:
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(WATCH)
    asked = hook / "asked"
    asked.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "tui.cli", "run", "say hi", "--workspace", str(ws), "--model",
                           server.model, "--api-base", server.url, "--api-key", TEST_KEY, "--no-host", *extra],
                          env=cli_env(home, PYTHONPATH=f"{hook}:{ROOT}", CODER_TUI_TEST_LITELLM_ASKED=str(asked), **env),
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    return done, asked.read_text() if asked.exists() else ""


@pytest.mark.parametrize("server", [FakeLLM, FakeAnthropic, FakeResponses, FakeOllama])
def test_a_cold_run_on_a_built_in_protocol_never_imports_litellm(server: Any, tmp_path: Path,
                                                                 isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {"a.txt": "x\n"})
    with server(Reply(text="hi there"), Reply(text="hi again")) as fake:
        done, asked = cold_run(isolated_home, ws, fake, tmp_path / "hook", "--verbose")
        assert done.returncode == 0, done.stderr[-2000:]
        assert "hi there" in done.stdout and asked == "", asked
        assert "built-in" in done.stderr and fake.url in done.stderr  # --verbose names the path and the address
        # the control: the same run with every model through litellm is seen importing it
        done, asked = cold_run(isolated_home, ws, fake, tmp_path / "hook", "--verbose", CODER_TUI_MODEL_PATH="litellm")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "hi again" in done.stdout and asked == "litellm\nin sys.modules at exit\n", asked
    assert "litellm (its adapter for this provider)" in done.stderr


async def test_each_family_gets_its_own_name_for_the_output_limit() -> None:
    """OpenAI's reasoning models (o-series, gpt-5) refuse `max_tokens`: they take `max_completion_tokens`."""
    with FakeLLM(Reply(text="a"), Reply(text="b"), Reply(text="c")) as server:
        for model in ("openai/gpt-5", "openai/o4-mini", "openai/gpt-4.1"):
            llm = LLM(model, server.url, TEST_KEY)
            llm.max_tokens = 321
            await llm.complete([{"role": "user", "content": "hi"}], [], lambda _t: None, lambda *_a: None)
    sent = [{k: v for k, v in body.items() if k.startswith("max_")} for body in server.requests]
    assert sent == [{"max_completion_tokens": 321}, {"max_completion_tokens": 321}, {"max_tokens": 321}]
