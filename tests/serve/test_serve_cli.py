"""`coder-tui serve` as a user starts it (a real process), driven by Node's fetch with the
eventsource-parser package (tests/interop/sse_client.mjs) and by httpx."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT, TEST_KEY, cli, cli_env, run_cli, write_files
from tests.fakellm import FakeLLM, Reply, call
from tests.host.conftest import stop_started_host
from tests.oct.nodeproc import INTEROP

NODE_HINT = "run `npm ci --prefix tests/interop` (the serve interop test needs eventsource-parser)"


class ServeProcess:
    def __init__(self, home: Path, root: Path | None, llm: FakeLLM, *args: str, **env: str) -> None:
        command = cli("serve", *([str(root)] if root else []), "--port", "0", "--model", llm.model, "--api-base", llm.url,
                      "--api-key", TEST_KEY, *args)
        self.home = home
        # its sessions live in a session host of its own (started on demand, stopped with it)
        self.runtime = Path(tempfile.mkdtemp(prefix="sv"))
        env = {"XDG_RUNTIME_DIR": str(self.runtime), **env}
        self.proc = subprocess.Popen(command, env=cli_env(home, **env), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.banner = [self.proc.stdout.readline() for _ in range(3)]  # blocks until it printed them
        if not self.banner[0].startswith("listening on "):
            self.proc.kill()
            raise AssertionError(f"serve did not start: {self.banner} {self.proc.communicate()[1]}")
        self.url = self.banner[0].split()[-1]

    def stop(self) -> int:
        self.proc.send_signal(2)  # Ctrl+C
        self.proc.communicate(timeout=60)
        self.forget()
        return self.proc.returncode

    def forget(self) -> None:
        """The session host it started, stopped; its folder removed."""
        stop_started_host(self.runtime / "coder-tui" / "host.lock")
        shutil.rmtree(self.runtime, ignore_errors=True)


@pytest.fixture
def start_serve(isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Any]:
    started: list[ServeProcess] = []

    def start(*args: str, files: dict[str, str] | None = None, **env: str) -> ServeProcess:
        server = ServeProcess(isolated_home, write_files(tmp_path / "ws", files or {}), fake_llm, *args, **env)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            assert server.stop() == 0
        server.forget()


def node_chat(server: ServeProcess, token: str, body: dict[str, Any], *decisions: str) -> tuple[int, list[Any]]:
    if not (INTEROP / "node_modules" / "eventsource-parser").is_dir():
        pytest.fail(f"tests/interop/node_modules/eventsource-parser is missing: {NODE_HINT}")
    done = subprocess.run(["node", str(INTEROP / "sse_client.mjs"), server.url, token, json.dumps(body), *decisions],
                          capture_output=True, text=True, timeout=120, cwd=INTEROP)
    assert done.stderr == ""
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def test_node_fetch_with_eventsource_parser_drives_a_turn_with_an_approval(start_serve, fake_llm):
    server = start_serve("--mode", "ask", files={"calc.py": "def calc(x, y):\n    return x + y\n"})
    token = server.banner[1].removeprefix("token: ").strip()
    fake_llm.script(Reply(text="Renaming:", tool_calls=[call(
        "patch_file", file_path="calc.py", reason="Clearer name",
        patches=[{"old_text": "def calc(", "new_text": "def calculate_sum("}])]), Reply(text="Done."))
    code, lines = node_chat(server, token, {"messages": [{"role": "user", "content": "refactor"}]}, "allow_once")
    assert code == 0, lines
    events = [line["event"] for line in lines if "event" in line]
    # every frame carries its id (seed 002's Last-Event-ID), read by the parser as such: 1, 2, 3...
    ids = [line["sse"]["id"] for line in lines if "event" in line]
    assert ids == [str(n) for n in range(1, len(ids) + 1)]
    assert all(line["sse"]["event"] is None for line in lines if "event" in line)
    assert events[0]["type"] == "session" and events[-1] == {"done": True}
    assert lines[-1] == {"status": 200, "session_header": events[0]["session_id"]}
    asked = next(e for e in events if e.get("type") == "approval_required")
    assert asked["files"][0]["file"] == "calc.py"
    [answer] = [line["approval_answer"] for line in lines if "approval_answer" in line]
    assert answer == {"id": asked["id"], "decision": "allow_once", "session_id": events[0]["session_id"]}
    [diff] = [e for e in events if e.get("type") == "diff"]
    assert diff["file"] == "calc.py" and diff["reason"] == "Clearer name" and diff["line_start"] == 1
    text = "".join(e.get("content", "") for e in events)
    assert text.startswith(f"Renaming:\n\n[waiting for approval: patch_file on calc.py. To answer, POST "
                           f"/api/approvals/{asked['id']} with") and text.endswith(".]\n\nDone.")
    assert not any(line.get("parse_error") for line in lines)


def test_the_banner_and_a_given_token(start_serve, fake_llm):
    server = start_serve(CODER_TUI_SERVE_TOKEN="from-the-environment-42")
    assert server.banner[0].startswith("listening on http://127.0.0.1:")
    assert server.banner[1] == "token: the one given by CODER_TUI_SERVE_TOKEN\n"  # not echoed to logs
    fake_llm.script(Reply(text="hello"))
    response = httpx.post(server.url + "/api/chat", headers={"Authorization": "Bearer from-the-environment-42"},
                          json={"messages": [{"role": "user", "content": "hi"}], "stream": False}, timeout=60)
    assert response.json()["content"] == "hello"
    assert httpx.get(server.url + "/api/sessions").status_code == 401
    assert server.stop() == 0
    written = "".join(p.read_text(errors="replace") for p in server.home.rglob("*") if p.is_file())
    assert "from-the-environment-42" not in written  # the token never reaches a session file or log


@pytest.mark.parametrize("mode, note", [
    ("ask", 'approvals: every edit, command and web request waits for POST /api/approvals/ID with {"decision": '),
    ("allow", "approvals: none (--mode allow)"), ("plan", "approvals: none (--mode plan)")])
def test_the_banner_says_the_mode_and_how_to_answer_approvals(start_serve, mode, note):
    server = start_serve("--mode", mode)
    assert f"mode: {mode}" in server.banner[2]
    server.proc.send_signal(2)  # Ctrl+C first: without the line, reading it meets the end instead of waiting
    assert server.proc.stdout is not None and server.proc.stdout.readline().startswith(note)
    server.proc.communicate(timeout=60)
    assert server.proc.returncode == 0


def test_a_generated_token_is_printed_and_required(start_serve):
    server = start_serve()
    token = server.banner[1].removeprefix("token: ").strip()
    assert len(token) >= 24
    assert httpx.get(server.url + "/api/sessions", headers={"Authorization": f"Bearer {token}"}).json() == {
        "sessions": []}
    assert httpx.get(server.url + "/api/sessions").status_code == 401


def test_a_non_loopback_host_without_a_token_is_refused(isolated_home, fake_llm, tmp_path):
    done = run_cli(isolated_home, "serve", str(tmp_path), "--host", "0.0.0.0", "--port", "0",
                   "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY, timeout=60)
    assert done.returncode == 2
    assert "--host 0.0.0.0 is reachable from other machines" in done.stderr and "--token" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_missing_folder_and_a_taken_port_are_usage_errors(isolated_home, fake_llm, tmp_path):
    model = ("--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY)
    missing = run_cli(isolated_home, "serve", str(tmp_path / "nope"), *model, timeout=60)
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    port = fake_llm.url.split(":")[-1].split("/")[0]
    taken = run_cli(isolated_home, "serve", str(tmp_path), "--port", port, *model, timeout=60)
    assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr
    port = run_cli(isolated_home, "serve", str(tmp_path), "--port", "99999", *model, timeout=60)
    assert port.returncode == 2 and "a port is 0-65535, got 99999" in port.stderr and "Traceback" not in port.stderr
    both = run_cli(isolated_home, "serve", str(tmp_path), "--github", "octo/hello", *model, timeout=60)
    assert both.returncode == 2 and "DIR cannot be combined with --github" in both.stderr


def test_serve_help_explains_and_imports_nothing_heavy(isolated_home):
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "tui.cli", "serve", "--help"],
                          env=cli_env(isolated_home), capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0
    for words in ("POST /api/chat", "/api/approvals/ID", "apply", "--host", "--token", "--model", "--mode"):
        assert words in done.stdout
    # what a disconnect does, as tests/serve/test_serve_resume.py and test_serve_safety.py check it
    said = " ".join(done.stdout.split())
    assert "A streaming client that disconnects has --reconnect-grace seconds (30 by default) to come back" in said
    assert "A client that disconnects stops its run" not in said
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not {"aiohttp", "litellm", "agent.frontends.serve.main"} & imported


def test_ctrl_c_during_a_run_stops_it_and_ends_its_stream(start_serve, fake_llm):
    server = start_serve()
    token = server.banner[1].removeprefix("token: ").strip()
    fake_llm.script(Reply(text="Thinking about it", chunk_size=4, stall_after=3))  # then the model hangs
    with httpx.stream("POST", server.url + "/api/chat", headers={"Authorization": f"Bearer {token}"},
                      json={"messages": [{"role": "user", "content": "think"}]}, timeout=60) as response:
        lines = response.iter_lines()
        events = []
        for line in lines:
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if "content" in events[-1]:
                    break
        server.proc.send_signal(2)
        events += [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    assert {"type": "complete", "success": False, "completion_reason": "stopped"} in events
    assert events[-1] == {"done": True}
    assert server.proc.wait(60) == 0


@pytest.mark.parametrize("given", [False, True])
def test_the_banner_says_where_the_browser_view_is(start_serve, given):
    server = start_serve(*(["--token", "given-token-0123456789"] if given else []))
    assert server.proc.stdout is not None
    server.proc.stdout.readline()  # the mode's note
    view = server.proc.stdout.readline().strip()
    token = "given-token-0123456789" if given else server.banner[1].removeprefix("token: ").strip()
    if given:  # a token the user chose is not printed
        assert view == f"browser view: {server.url}/view (it asks for the token)"
    else:  # in the fragment: the browser sends it to no server and no log
        assert view == f"browser view: {server.url}/view#token={token}"
    page = httpx.get(view.split()[2].split("#")[0], timeout=30)
    assert page.status_code == 200 and "coder-tui" in page.text
    assert server.stop() == 0
