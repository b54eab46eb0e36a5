"""What a cold `coder-tui run "say hi"` leaves out (issue 32's start-up goal): modules it has no
use for before the first answer, and processes it need not start. Each is a gate, so that a later
change cannot put one back on the path unnoticed (measured with callgrind: each one is milliseconds).

The run is a fresh interpreter on the scripted Anthropic server, in an empty folder outside any
repository, as tests/bench/first_answer.py times it; at exit it writes the modules it imported,
and every `git` it started is noted by a `git` first on PATH that then runs the real one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, TEST_KEY, cli_env
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import Reply

RECORD = '''
import atexit, os, sys
atexit.register(lambda: open(os.environ["CODER_TUI_TEST_MODULES"], "w").write("\\n".join(sorted(sys.modules))))
'''
# Not imported by a cold run in an empty folder, and why (the first use imports each):
NOT_ON_THE_PATH = {
    "h2": "HTTP/2: our requests are HTTP/1.1 (agent/llm/http.py blocks it while httpx and httpcore load)",
    "hpack": "h2's header compression",
    "litellm": "built-in protocols need no litellm",
    "pathspec": "`.gitignore` rules: imported by the first folder that has some (agent/workspaces/ignore.py)",
    "agent.permissions.claude": "Claude Code's settings: read when the folder has a .claude",
    "agent.knowledge.builder": "the map builder: an empty folder has nothing to map; get_codebase_map imports it",
    "agent.knowledge.rank": "the map's ranking, with the builder",
    "agent.knowledge.summarize": "the map's AI summaries, with the builder",
}


def test_a_cold_run_in_an_empty_folder_imports_and_starts_only_what_it_needs(tmp_path: Path,
                                                                              isolated_home: Path) -> None:
    hook, ws, log, modules = tmp_path / "hook", tmp_path / "ws", tmp_path / "git-calls", tmp_path / "modules"
    hook.mkdir()
    ws.mkdir()
    (hook / "sitecustomize.py").write_text(RECORD)
    real = shutil.which("git")
    assert real is not None
    (hook / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (hook / "git").chmod(0o755)
    env = cli_env(isolated_home, PYTHONPATH=f"{hook}{os.pathsep}{ROOT}", CODER_TUI_TEST_MODULES=str(modules),
                  PATH=f"{hook}{os.pathsep}{os.environ.get('PATH', '')}")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"):
        env.pop(name, None)
    with FakeAnthropic(Reply(text="hi there")) as server:
        done = subprocess.run([sys.executable, "-m", "tui.cli", "run", "say hi", "--model", server.model,
                               "--api-base", server.url, "--api-key", TEST_KEY, "--mode", "allow"],
                              cwd=ws, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "hi there" in done.stdout, done.stderr[-2000:]
    loaded = set(modules.read_text().split())
    assert "agent.llm.anthropic" in loaded and "httpx" in loaded  # the control: the record is of this run
    assert {name: why for name, why in NOT_ON_THE_PATH.items() if name in loaded} == {}
    assert not log.exists(), f"git started outside a repository: {log.read_text()}"
    assert not list((isolated_home / "data").rglob("map.sqlite3"))  # no map made for an empty folder


GC_PROBE = """
import asyncio, gc, sys
sys.path.insert(0, {root!r})
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import Reply
from agent.llm import LLM
from agent.llm.preload import pause_startup

pause_startup()
paused = not gc.isenabled()
with FakeAnthropic(Reply(text="hello")) as server:
    frozen = gc.get_freeze_count()
    reply = asyncio.run(LLM(server.model, server.url, {key!r}).complete(
        [{{"role": "user", "content": "hi"}}], [], lambda s: None, lambda *a: None))
print(reply.text, paused, gc.isenabled(), gc.get_freeze_count() > frozen)
"""


def test_garbage_collection_paused_for_the_start_resumes_at_the_first_request() -> None:
    """`run` starts with collections paused (tui/cli.py); the first model request freezes the
    start's long-lived objects out of later collections and collects as usual from then on."""
    done = subprocess.run([sys.executable, "-c", GC_PROBE.format(root=str(ROOT), key=TEST_KEY)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["hello", "True", "True", "True"]


BUILT = '''
import atexit, os, sys
def _built():
    base = sys.modules["agent.tools.base"].ToolArgs
    todo, built, seen = [base], [], set()
    while todo:
        for cls in todo.pop().__subclasses__():
            if cls not in seen:
                seen.add(cls)
                todo.append(cls)
                if cls.__pydantic_complete__:
                    built.append(cls.__qualname__)
    open(os.environ["CODER_TUI_TEST_BUILT"], "w").write(" ".join(sorted(built)) + "\\n" + str(len(seen)))
atexit.register(_built)
'''


def test_a_second_cold_run_reads_the_tool_schemas_and_builds_no_tool_validator(tmp_path: Path,
                                                                              isolated_home: Path) -> None:
    """The first run derives the tools' schemas and keeps them in the cache folder; the next one
    reads them there, and no tool's argument validator is built until a call is checked."""
    hook, ws, built = tmp_path / "hook", tmp_path / "ws", tmp_path / "built"
    hook.mkdir()
    ws.mkdir()
    (hook / "sitecustomize.py").write_text(BUILT)
    env = cli_env(isolated_home, PYTHONPATH=f"{hook}{os.pathsep}{ROOT}", CODER_TUI_TEST_BUILT=str(built))
    kept = isolated_home / "cache" / "coder-tui" / "tool-schemas.json"
    bodies = []
    for _ in range(2):
        with FakeAnthropic(Reply(text="hi there")) as server:
            done = subprocess.run([sys.executable, "-m", "tui.cli", "run", "say hi", "--model", server.model,
                                   "--api-base", server.url, "--api-key", TEST_KEY, "--mode", "allow"],
                                  cwd=ws, env=env, capture_output=True, text=True, timeout=120,
                                  stdin=subprocess.DEVNULL)
            bodies.append(server.requests[0])
        assert done.returncode == 0 and "hi there" in done.stdout, done.stderr[-2000:]
        assert kept.exists()
    names, count = built.read_text().split("\n")
    assert int(count) > 20 and names == ""  # the control: the tools' argument models were there
    assert bodies[0]["tools"] == bodies[1]["tools"]  # the kept schemas are the derived ones


def test_the_event_models_annotations_are_objects_not_text() -> None:
    """agent/events.py is imported by every front end before the first request: its fifty models'
    annotations are evaluated once by Python, not parsed from text by pydantic at each class."""
    import agent.events

    assert "annotations" not in vars(agent.events)  # `from __future__ import annotations` binds it
    assert not isinstance(agent.events.RunStarted.__annotations__["run_id"], str)
