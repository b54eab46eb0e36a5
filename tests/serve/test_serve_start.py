"""`coder-tui serve` starts loading litellm only once it listens (issue 22): started earlier, the
load's thread competed with the server's own start for the interpreter (health answered ~1/3
later on a loaded machine). No timing: the order of the banner and the import's first step in
one merged output stream says which came first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import ROOT, TEST_KEY, cli_env, write_files
from tests.fakellm import FakeLLM, Reply

MARK_IMPORT = '''
import os, threading

_start = threading.Thread.start

def _marked(self):
    if self.name == "load-litellm":  # agent/llm/preload.py's loading thread
        os.write(1, b"LITELLM-IMPORT-STARTS\\n")
    _start(self)

threading.Thread.start = _marked
'''


def test_serve_loads_litellm_after_its_banner_and_answers_a_turn(isolated_home: Path, fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(MARK_IMPORT)
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    fake_llm.script(Reply(text="hello"))
    proc = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve", str(root), "--port", "0", "--mode", "allow",
                             "--token", "t0k", "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key",
                             TEST_KEY], env=cli_env(isolated_home, PYTHONPATH=f"{hook}:{ROOT}", CODER_TUI_MODEL_PATH="litellm"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("listening on"), first  # not the import's mark: it comes later
        base = first.split()[-1]
        seen: list[str] = []
        while "LITELLM-IMPORT-STARTS\n" not in seen and len(seen) < 12:  # the banner's lines, then the mark
            seen.append(proc.stdout.readline())
        assert "LITELLM-IMPORT-STARTS\n" in seen, seen  # it does start, after the banner
        with httpx.Client(base_url=base, headers={"Authorization": "Bearer t0k"}, timeout=120) as client:
            answer = client.post("/api/chat", json={"messages": [{"role": "user", "content": "hi"}]})
        assert answer.status_code == 200 and "hello" in answer.text
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
