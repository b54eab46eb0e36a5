"""`coder-tui serve` listens before litellm has loaded (issue 22: ready within 0.5 s of launch).

No timing here: litellm's import is held in the server process (tests/import_gate.py) and the
server must answer while it is; an in-process turn sent meanwhile waits and is answered once it
loads; a turn in the session host (which has its own) does not wait for it.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.conftest import TEST_KEY, cli_env, write_files
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import runtime_dir, start_host  # noqa: F401 - fixtures: the session host is the test's
from tests.import_gate import gate_env

TOKEN = "serve-ready-token"


def start(home: Path, root: Path, model: str, url: str, env: dict[str, str]) -> subprocess.Popen[str]:
    # a cold interpreter (not the tests' warm zygote): its litellm must not be loaded yet
    return subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(root), "--port", "0", "--mode", "allow",
                             "--token", TOKEN, "--model", model, "--api-base", url, "--api-key", TEST_KEY],
                            env=cli_env(home, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)


def first_line(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"serve printed nothing within {timeout} s: {proc.communicate()[1][-2000:]}") from None


def test_serve_answers_while_litellm_is_still_loading_and_a_turn_waits_for_it(
        isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path, runtime_dir: Path) -> None:
    gate, hook = tmp_path / "gate", tmp_path / "hook"
    proc = start(isolated_home, write_files(tmp_path / "ws", {"a.py": "x = 1\n"}), fake_llm.model, fake_llm.url,
                 gate_env(hook, gate))
    try:
        banner = first_line(proc)  # before the fix: never, litellm's import held the banner back
        assert banner.startswith("listening on "), banner
        url = banner.split()[-1]
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as client:
            assert client.get("/api/health").status_code == 200
            assert not gate.exists()  # answered while litellm's import could not have finished
            fake_llm.script(Reply(text="hello after loading"))
            answers: list[httpx.Response] = []
            turn = threading.Thread(target=lambda: answers.append(client.post(
                "/api/chat", json={"messages": [{"role": "user", "content": "hi"}], "stream": False})))
            turn.start()
            gate.touch()
            turn.join(120)
        assert answers and answers[0].status_code == 200, answers and answers[0].text
        assert "hello after loading" in answers[0].text
    finally:
        proc.send_signal(2)
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_an_unknown_provider_stops_serve_with_exit_2_once_litellm_has_loaded(
        isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    proc = start(isolated_home, write_files(tmp_path / "ws", {}), "foo/bar", fake_llm.url, {})
    try:
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, (out, err)
    assert err.strip().splitlines()[-1].startswith("coder-tui serve: error: litellm does not know the provider of "
                                                   "model 'foo/bar'"), err
    assert "Traceback" not in err


def test_a_hosted_turn_does_not_wait_for_serves_own_litellm(isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path,
                                                             runtime_dir: Path, start_host) -> None:  # noqa: F811 - fixtures
    # the session host, with its own model layer (serve's settings, so that serve may borrow it)
    start_host(CODER_TUI_MODEL_PATH="litellm")
    gate = tmp_path / "gate"  # serve's own litellm import is held until the end
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(root), "--port", "0", "--mode", "allow",
                             "--token", "t0k", "--model", fake_llm.model, "--api-base", fake_llm.url,
                             "--api-key", TEST_KEY],
                            env=cli_env(isolated_home, XDG_RUNTIME_DIR=str(runtime_dir),
                                        **gate_env(tmp_path / "hook", gate)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        url = first_line(proc).split()[-1]
        fake_llm.script(Reply(text="hello from the host"))
        answer = httpx.post(url + "/api/chat", json={"messages": [{"role": "user", "content": "hi"}], "stream": False},
                            headers={"Authorization": "Bearer t0k"}, timeout=60)  # before: waited for the gate
        assert answer.status_code == 200 and answer.json()["content"] == "hello from the host", answer.text
        assert not gate.exists()
    finally:
        gate.touch()
        proc.send_signal(2)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
