"""Issue 34's low findings, each tried as a hostile repository (or a hostile input) would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent import paths
from agent.config import ConfigError, load_config
from agent.profiles import ProfileError
from agent.workspace_input.load import workspace_input
from agent.workspace_input.trust import trust_folder
from tests.conftest import write_files
from tests.host.conftest import runtime_dir, start_host  # noqa: F401 - fixtures


def _user(text: str) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(text)


def test_profile_tool_globs_that_match_exec_tools_need_trust(tmp_path: Path) -> None:
    ws = write_files(tmp_path / "ws", {".coder-tui/profiles/sly.toml": 'tools = ["b*", "?hell_*", "*_exec", "read"]\n'})
    config = load_config(ws, {}, environ={})
    found = workspace_input(ws, config)
    assert found.profiles.get("sly").tools == ["read"]
    assert any("sly.toml" in line and "run commands" in line for line in found.notices())


@pytest.mark.parametrize("text", ['bogus_key = 1\n', 'mode = \n', 'max_steps = -3\n'])
def test_a_broken_untrusted_config_is_ignored_with_a_warning(tmp_path: Path, text: str) -> None:
    ws = write_files(tmp_path / "ws", {".coder-tui.toml": text})
    config = load_config(ws, {}, environ={})  # the run goes on, without the file
    assert any(".coder-tui.toml" in line and "the whole file" in line for line in workspace_input(ws, config).notices())
    trust_folder(ws)
    with pytest.raises(ConfigError):  # a folder you trust: its broken file is an error to fix
        load_config(ws, {}, environ={})


@pytest.mark.parametrize("text", ['system_prompt_file = "missing.md"\n', 'bogus = 1\n', 'tools = 3\n'])
def test_a_broken_untrusted_profile_is_ignored_with_a_warning(tmp_path: Path, text: str) -> None:
    ws = write_files(tmp_path / "ws", {".coder-tui/profiles/broken.toml": text})
    config = load_config(ws, {}, environ={})
    notices = workspace_input(ws, config).notices()
    assert any("broken.toml" in line and "the whole profile" in line for line in notices), notices
    trust_folder(ws)
    with pytest.raises(ProfileError):
        workspace_input(ws, load_config(ws, {}, environ={}))


# -- issue 35 (a trust question): keys in the folder's .env ------------------------------------------
ENV_KEY = "dotenv-key-without-a-known-shape-41c7"


async def test_an_untrusted_folders_env_keys_are_not_used_and_the_no_key_messages_say_env(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent.secrets import redact
    from tests.core.test_model_errors import failure, fast

    ws = write_files(tmp_path / "ws", {".env": f"# keys\nexport OPENAI_API_KEY='{ENV_KEY}'\nDEBUG=1\n"})
    config = load_config(ws, {}, environ={})
    assert config.model is None and config.api_key is None
    assert any("OPENAI_API_KEY" in line and ".env" in line for line in workspace_input(ws, config).notices())
    assert ENV_KEY not in redact(f"x {ENV_KEY} y")  # never shown either
    with pytest.raises(ConfigError, match=r"\.env"):
        config.require_model()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    error, _ = await failure(fast("openai/gpt-4.1", None, None, "OPENAI_API_KEY"))
    assert error.kind == "no_key" and ".env" in str(error) and "coder-tui trust DIR" in str(error)


def test_a_trusted_folders_env_key_is_used_and_the_environment_wins(tmp_path: Path) -> None:
    ws = write_files(tmp_path / "ws", {".env": f"OPENAI_API_KEY={ENV_KEY}  # mine\n"})
    trust_folder(ws)
    config = load_config(ws, {}, environ={})
    assert config.model == "openai/gpt-4.1" and config.api_key.get_secret_value() == ENV_KEY
    assert config.sources["api_key"] == "OPENAI_API_KEY in .env"
    config = load_config(ws, {}, environ={"OPENAI_API_KEY": "from-the-environment"})
    assert config.api_key is None and config.sources["api_key"] == "OPENAI_API_KEY"  # litellm reads the variable


def test_a_trusted_folders_env_key_reaches_the_provider(tmp_path: Path, isolated_home: Path) -> None:
    from tests.conftest import run_cli
    from tests.fakellm import FakeLLM, Reply

    with FakeLLM() as llm:
        _user(f'model = "{llm.model}"\napi_base = "{llm.url}"\n')
        ws = write_files(tmp_path / "ws", {".env": f"OPENAI_API_KEY={ENV_KEY}\n"})
        llm.script(Reply(text="hello"))
        done = run_cli(isolated_home, "run", "hi", "--workspace", str(ws), "--trust", timeout=90)
        assert done.returncode == 0, done.stderr
        assert llm.headers[-1].get("Authorization") == f"Bearer {ENV_KEY}"
        assert ENV_KEY not in done.stdout + done.stderr


def test_a_config_key_that_a_provider_variable_shadows_is_masked_too() -> None:
    from agent.secrets import redact

    shadowed = "config-toml-key-7d1e0b2a9f"
    _user(f'model = "openai/gpt-4.1"\napi_key = "{shadowed}"\n')
    config = load_config(None, {}, environ={"OPENAI_API_KEY": "the-variables-key-55aa"})
    assert config.api_key is None  # the variable outranks it
    assert shadowed not in redact(f"the map said {shadowed}")


@pytest.mark.parametrize("image", ["/dev/zero", "/dev/urandom", "fifo"])
def test_run_image_refuses_a_device_or_fifo_before_reading_it(tmp_path: Path, isolated_home: Path, image: str) -> None:
    import os
    import time

    from tests.conftest import run_cli

    if image == "fifo":
        image = str(tmp_path / "pipe.png")
        os.mkfifo(image)
    started = time.monotonic()
    done = run_cli(isolated_home, "run", "look", "--image", image, "--model", "openai/x", "--api-key", "k",
                   "--workspace", str(tmp_path), timeout=60)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    assert time.monotonic() - started < 30 and "Traceback" not in done.stderr


async def test_the_host_answers_a_deeply_nested_line_and_goes_on(start_host: Any) -> None:
    import asyncio
    import json
    import os

    host = start_host()
    reader, writer = await asyncio.open_unix_connection(str(host.socket), limit=16 * 1024 * 1024)
    deep = 100_000
    for line in (b"[" * deep + b"]" * deep, b'{"type": "list", "id": 7, "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                 b'{"type": "list", "id": 8}'):
        writer.write(line + b"\n")
        await writer.drain()
        answer = json.loads(await asyncio.wait_for(reader.readline(), 60))
        assert answer["type"] == "reply", answer
    assert answer["ok"] is True  # the last, a plain request: answered after the others
    writer.close()
    assert host.process.poll() is None
    fd = host.process.stderr.fileno()
    os.set_blocking(fd, False)
    try:
        said = os.read(fd, 1 << 20)
    except BlockingIOError:
        said = b""
    assert b"Traceback" not in said


@pytest.mark.parametrize("method", ["session/new", "session/load", "session/list"])
async def test_acp_answers_a_nul_in_cwd_without_a_traceback(isolated_home: Path, method: str) -> None:
    import asyncio
    import json

    from tests.conftest import TEST_KEY, cli, cli_env

    proc = await asyncio.create_subprocess_exec(
        *cli("acp", "--model", "openai/x", "--api-key", TEST_KEY), env=cli_env(isolated_home), cwd=str(isolated_home),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    params = {"cwd": f"{isolated_home}/a\u0000b", "mcpServers": [], "sessionId": "x"}
    for number, message in enumerate([("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
                                      (method, params)], start=1):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": message[0],
                                     "params": message[1]}).encode() + b"\n")
        await proc.stdin.drain()
        answer = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
    assert answer["id"] == 2 and answer["error"]["code"] == -32602 and "NUL" in json.dumps(answer)
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 60)
    assert b"Traceback" not in await proc.stderr.read()


@pytest.mark.parametrize("name", ["app\u200b.py", "ma\u00a0in.py", "a\u2060b.py", "\ufeffsetup.py", "x\u00ad.py",
                                  "tag\U000e0041.py", "hangul\u3164.py", "sel\ufe0f.py"])
async def test_a_name_with_an_invisible_character_is_refused(make_harness: Any, name: str) -> None:
    from tests.core.test_tools import use

    h = make_harness(files={"app.py": "x = 1\n"})
    out = await use(h, "write_file", file_path=f"src/{name}", content="evil = 1\n")
    assert out.startswith("Error:") and "invisible" in out and not (h.root / "src" / name).exists()
    assert (await use(h, "write_file", file_path="src/café.py", content="ok = 1\n")).startswith("Created")
