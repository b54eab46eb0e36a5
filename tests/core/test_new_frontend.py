"""A new front end needs no change in the core: one module outside the package, on the seam.

The front end below lives in the test's temporary folder, not in agent/ or tui/. It opens its
target with `open_target`, runs a prompt on an `AgentSession`, shows the events through an
`EventHandler` and approves the edit through `session.answer`, against the scripted model.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, TEST_KEY, cli_env, write_files
from tests.fakellm import FakeLLM, Reply, call

FRONT_END = '''
"""tinyfront: a front end of coder-tui's agent in one module."""
import asyncio
import sys

from agent.approval import QueueApprover
from agent.config import load_config
from agent.consumer import EventHandler
from agent.session.open import open_session
from agent.session.ports import SessionPorts
from agent.session.target import TargetError, TargetSpec, open_target


class Lines(EventHandler):
    """Events as lines; approvals of edits are answered yes."""

    def __init__(self) -> None:
        self.session = None
        self.text = ""

    def on_run_started(self, event):
        print(f"started in {event.workspace} ({event.mode})", flush=True)

    def on_text_delta(self, event):
        self.text += event.text  # streamed in pieces; shown whole at the end

    def on_tool_call(self, event):
        print(f"tool: {event.tool}", flush=True)

    def on_approval_required(self, event):
        print(f"approve? {event.tool} {' '.join(f.path for f in event.files)}", flush=True)
        # the approval waits for its answer once this event has been shown
        asyncio.get_running_loop().call_soon(self.session.answer, event.approval_id, "allow_once")

    def on_approval_resolved(self, event):
        print(f"answered: {event.decision}", flush=True)

    def on_file_changed(self, event):
        print(f"changed: {event.path} lines {event.line_start}-{event.line_end}", flush=True)

    def on_complete(self, event):
        print(f"text: {self.text}", flush=True)
        print(f"complete: success={event.success} reason={event.completion_reason}", flush=True)


async def main(folder, model, api_base, api_key, prompt):
    try:
        target = await open_target(TargetSpec(workspace=folder, prompt=prompt))
    except TargetError as exc:
        print(f"tinyfront: {exc.message} ({exc.hint})", file=sys.stderr)
        return 2
    config = load_config(target.workspace.root, {"model": model, "api_base": api_base,
                                                 "api_key": api_key, "mode": "ask"})
    lines = Lines()
    session = open_session(target, config, SessionPorts(QueueApprover(), lines.handle))
    lines.session = session
    try:
        complete = await session.run(target.prompt)
    finally:
        await session.close()
        await target.close()
    loaded = sorted(m for m in sys.modules if m.startswith(("agent.frontends", "tui")))
    print(f"front-end modules loaded: {loaded}", flush=True)
    return 0 if complete.success else 1


sys.exit(asyncio.run(main(*sys.argv[1:])))
'''

EDIT = Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2,
                              new_content="    return 2")])


def run_front_end(tmp_path: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "front" / "tinyfront.py"
    script.parent.mkdir()
    script.write_text(FRONT_END)
    assert ROOT not in script.parents
    return subprocess.run([sys.executable, str(script), *args], cwd=script.parent, env=cli_env(home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


def test_a_front_end_outside_the_package_runs_a_prompt_with_an_approved_edit(
        fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    ws = write_files(tmp_path / "ws", {"a.py": "def f():\n    return 1\n"})
    fake_llm.script(EDIT, Reply(text="f now returns 2."))
    done = run_front_end(tmp_path, isolated_home, str(ws), fake_llm.model, fake_llm.url, TEST_KEY,
                         "make f return 2")
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == f"started in {ws} (ask)"
    assert out[1:6] == ["tool: replace_lines", "approve? replace_lines a.py", "answered: allow_once",
                        "changed: a.py lines 2-2", "text: f now returns 2."]
    assert out[6] == "complete: success=True reason=answered"
    assert out[7] == "front-end modules loaded: []"  # nothing of agent.frontends or tui was needed
    assert (ws / "a.py").read_text() == "def f():\n    return 2\n"
    assert TEST_KEY not in done.stdout + done.stderr


def test_the_front_end_reports_a_target_that_cannot_open(tmp_path: Path, isolated_home: Path) -> None:
    done = run_front_end(tmp_path, isolated_home, str(tmp_path / "missing"), "openai/x", "http://127.0.0.1:9",
                         TEST_KEY, "hi")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"tinyfront: --workspace: workspace folder {tmp_path / 'missing'} does not exist" in done.stderr
