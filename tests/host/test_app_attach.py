"""The app as a client of the session host (`coder-tui attach`, tui/attaching.py): a real host
process on its real socket, another front end as a real `coder-tui run --attach` process, the app
through Textual's pilot, the model the scripted server."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.host.client import HostClient
from tests.conftest import cli
from tests.fakellm import FakeLLM, Reply
from tests.host.conftest import next_of
from tests.host.test_host_cli import attach_args
from tests.host.test_host_fanout import EDIT, session_lines
from tests.tui.conftest import APP_SIZE, app_options, type_text, wait_for
from tests.tui.test_app_sessions import answers, approval, notices

WAIT = 90.0


class Other:
    """`coder-tui run --attach ... --json` running beside the app: its stdout lines as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            if text.strip().startswith("{"):
                self.lines.put(json.loads(text))
        self.lines.put(None)

    async def next(self, pilot: Any, kind: str, **match: Any) -> dict[str, Any]:
        """Its next line of type `kind` (the app runs meanwhile)."""
        found: list[dict[str, Any]] = []

        def arrived() -> bool:
            while not found:
                try:
                    line = self.lines.get_nowait()
                except queue.Empty:
                    return False
                assert line is not None, f"run --attach ended before a {kind} line: {self.stderr()}"
                self.seen.append(line)
                if line.get("type") == kind and all(line.get(k) == v for k, v in match.items()):
                    found.append(line)
            return True

        await wait_for(pilot, arrived, timeout=WAIT, what=f"run --attach's {kind}")
        return found[0]

    def stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read()


@pytest.fixture
def other(start_host: Any, fake_llm: FakeLLM, ws: Path) -> Iterator[Any]:
    """Start `run --attach new PROMPT` in the host (its answers to approvals: none, stdin stays open)."""
    started: list[subprocess.Popen[str]] = []
    host = start_host()

    def start(prompt: str, *extra: str, ref: str = "new") -> Other:
        process = subprocess.Popen(cli(*attach_args(fake_llm, ws, ref, prompt, "--json", *extra)), env=host.env,
                                   text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append(process)
        return Other(process)

    start.host = host  # type: ignore[attr-defined]
    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
            process.wait(60)


def make_app(fake_llm: FakeLLM, ws: Path, ref: str) -> Any:
    from tui.app import CoderApp

    options = app_options(ws, fake_llm)
    options.attach = ref
    return CoderApp(options, animate=False)


async def attached(pilot: Any) -> Any:
    app = pilot.app
    await wait_for(pilot, lambda: app.bridge.driver is not None and app.bridge.driver.following,
                   timeout=WAIT, what="the app attached to the host session")
    return app.bridge.driver


def prompts(app: Any) -> list[tuple[str, str]]:
    """(who, text) of every prompt in the conversation."""
    from tui.widgets.transcript import UserMessage

    earlier = [(b.who, b.text) for b in app.query_one("#history").blocks if b.kind == "user"]
    return earlier + [(m.who, m.message) for m in app.query(UserMessage)]


async def test_the_app_sees_the_other_front_ends_prompt_and_the_agents_reply(
        other: Any, fake_llm: FakeLLM, ws: Path) -> None:
    release = threading.Event()
    fake_llm.script(Reply(text="Hello from the host.", hold=release))
    run = other("say hello")
    started = await _first(run, "run_started")
    app = make_app(fake_llm, ws, started["session_id"][:12])
    async with app.run_test(size=APP_SIZE) as pilot:
        remote = await attached(pilot)
        assert remote.session_id == started["session_id"] and remote.running
        who = f"run --attach (pid {run.process.pid})"
        assert (who, "say hello") in prompts(app)  # from the replay: the turn runs as the app joins
        release.set()
        await wait_for(pilot, lambda: "Hello from the host." in answers(app), timeout=WAIT, what="the reply")
        await wait_for(pilot, lambda: not app.bridge.running, timeout=WAIT, what="the turn's end")
        # a second prompt of the other front end, sent while the app is attached
        fake_llm.script(Reply(text="Second reply."))
        second = other("and again", ref=started["session_id"])
        await wait_for(pilot, lambda: (f"run --attach (pid {second.process.pid})", "and again") in prompts(app),
                       timeout=WAIT, what="the other's second prompt")
        await wait_for(pilot, lambda: "Second reply." in answers(app), timeout=WAIT, what="the second reply")
    assert run.process.wait(WAIT) == 0 and second.process.wait(WAIT) == 0


async def test_an_approval_of_the_others_turn_is_answered_in_the_app(other: Any, fake_llm: FakeLLM,
                                                                       ws: Path) -> None:
    fake_llm.script(EDIT, Reply(text="Done."))
    run = other("make f return 2")
    asked = await _first(run, "approval_required")
    app = make_app(fake_llm, ws, asked_session(run))
    async with app.run_test(size=APP_SIZE) as pilot:
        await attached(pilot)
        await approval(pilot)  # the approval that waits is docked, as a resumed one would be
        from tui.widgets.transcript import ToolRow

        assert [(row.tool, row.key) for row in app.query(ToolRow)] == [("replace_lines", "a.py")]
        await pilot.press("y")
        resolved = await run.next(pilot, "approval_resolved", approval_id=asked["approval_id"])
        answered = await run.next(pilot, "approval_answered", approval_id=asked["approval_id"])
        await run.next(pilot, "turn_done", success=True)
    assert resolved["decision"] == "allow_once" and answered["by"].startswith("coder-tui app")
    assert (ws / "a.py").read_text().endswith("return 2\n")
    assert run.process.wait(WAIT) == 0


async def test_an_approval_answered_by_the_other_closes_the_apps_panel_and_says_who(
        other: Any, fake_llm: FakeLLM, ws: Path) -> None:
    fake_llm.script(Reply(text="Hi."), EDIT, Reply(text="Done."))
    run = other("hi")
    done = await _first(run, "turn_done")
    app = make_app(fake_llm, ws, asked_session(run))
    async with app.run_test(size=APP_SIZE) as pilot:
        await attached(pilot)
        assert done["success"] and not app.query("#approval")
        client = await HostClient.connect(other.host.socket)
        try:
            await client.request("open", session=asked_session(run), client="the reviewer", options={})
            await client.request("prompt", text="make f return 2")
            asked = await next_of(client, "approval_required")
            await approval(pilot)  # raised live: the app docks it
            await client.request("approve", approval_id=asked["approval_id"], decision="deny", feedback="not now")
            await wait_for(pilot, lambda: not app.query("#approval"), timeout=WAIT, what="the panel to close")
            await wait_for(pilot, lambda: any("answered by the reviewer (deny)" in n for n in notices(app)),
                           timeout=WAIT, what="who answered")
        finally:
            await client.close()
    assert (ws / "a.py").read_text().endswith("return 1\n")


async def test_a_prompt_typed_in_the_app_runs_in_the_host_and_quitting_leaves_the_run_going(
        other: Any, fake_llm: FakeLLM, ws: Path, isolated_home: Path) -> None:
    release = threading.Event()
    fake_llm.script(Reply(text="Hi."), Reply(text="A long answer.", hold=release))
    run = other("hi")
    await _first(run, "turn_done")
    session_id = asked_session(run)
    watcher = await HostClient.connect(other.host.socket)
    try:
        model = {k: v for k, v in other.host.options(fake_llm, ws).items() if k != "workspace"}
        await watcher.request("open", session=session_id, client="watcher", options=model)
        app = make_app(fake_llm, ws, session_id)
        async with app.run_test(size=APP_SIZE) as pilot:
            await attached(pilot)
            prompt = app.query_one("#prompt")
            await wait_for(pilot, lambda: "a.py" in prompt._files.known, timeout=WAIT, what="@ completion's files")
            prompt.text = "from the app, see @a.py"
            await pilot.press("enter")
            started = await next_of(watcher, "turn_started")
            assert started["by"].startswith("coder-tui app") and started["prompt"].startswith("from the app, see @a.py")
            await next_of(watcher, "step_started")  # the model holds its answer
            assert ("you", "from the app, see @a.py") in prompts(app)
            sent = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "user"][-1]
            assert "return 1" in str(sent)  # the mentioned file went with the prompt, as in-process
            await pilot.press("ctrl+q")  # no "stop it and quit?": the run is the host's
            await wait_for(pilot, lambda: app.return_code is not None, timeout=WAIT, what="the app to quit")
        left = await next_of(watcher, "client_left")
        assert left["client"].startswith("coder-tui app")
        release.set()
        done = await next_of(watcher, "turn_done", ticket=started["ticket"])
        assert done["success"] is True  # the run went on without the app
    finally:
        release.set()
        await watcher.close()
    prompts_recorded = [m["data"]["content"] for m in session_lines(isolated_home, session_id)
                        if m.get("kind") == "message" and m["data"]["role"] == "user"]
    assert prompts_recorded[0] == "hi" and prompts_recorded[1].startswith("from the app, see @a.py")
    assert len(prompts_recorded) == 2


async def test_the_picker_lists_the_live_sessions_and_who_is_attached(other: Any, fake_llm: FakeLLM, ws: Path,
                                                                      isolated_home: Path) -> None:
    from textual.widgets import OptionList

    from tui.screens.attachpicker import AttachPicker

    from tests.conftest import run_cli

    release = threading.Event()
    fake_llm.script(Reply(text="recorded"), Reply(text="working", hold=release))
    earlier = run_cli(isolated_home, "run", "an earlier question", "--workspace", str(ws), "--model", fake_llm.model,
                      "--api-base", fake_llm.url, "--api-key", "sk-test-x")
    assert earlier.returncode == 0, earlier.stderr
    run = other("a long task")
    started = await _first(run, "step_started")
    app = make_app(fake_llm, ws, "")
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            def listed() -> Any:
                screen = app.screen
                found = isinstance(screen, AttachPicker) and screen.query(OptionList)
                return found and found.first().option_count > 0 and found.first()

            options = await wait_for(pilot, listed, timeout=WAIT, what="the picker's list")
            first = options.get_option_at_index(0)
            label = str(first.prompt)
            assert first.id == run_session(run) and "running" in label
            assert f"run --attach (pid {run.process.pid})" in label
            labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert any(text.startswith("recorded") and "an earlier question" in text for text in labels)
            assert labels[-1].startswith("new session")
            await pilot.press("enter")
            remote = await attached(pilot)
            assert remote.session_id == run_session(run)
    finally:
        release.set()
    assert started


async def _first(run: Other, kind: str) -> dict[str, Any]:
    """The other's first line of type `kind` (before the app runs)."""
    import asyncio
    import time

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            line = run.lines.get_nowait()
        except queue.Empty:
            await asyncio.sleep(0.02)
            continue
        assert line is not None, f"run --attach ended early: {run.stderr()}"
        run.seen.append(line)
        if line.get("type") == kind:
            return line
    raise AssertionError(f"no {kind} from run --attach")


def run_session(run: Other) -> str:
    return next(line["session_id"] for line in run.seen if line.get("type") == "run_started")


asked_session = run_session


async def test_when_the_host_stops_the_app_says_so_once_and_continues_the_session_in_process(
        other: Any, fake_llm: FakeLLM, ws: Path) -> None:
    fake_llm.script(Reply(text="Hi."), Reply(text="Answered in-process."))
    run = other("hi")
    await _first(run, "turn_done")
    session_id = run_session(run)
    app = make_app(fake_llm, ws, session_id)
    async with app.run_test(size=APP_SIZE) as pilot:
        await attached(pilot)
        other.host.process.terminate()
        await wait_for(pilot, lambda: app.bridge.session is not None and app.query_one("#status").state == "idle",
                       timeout=WAIT, what="the session opened in-process")
        lost = [n for n in notices(app) if "session host stopped" in n]
        assert len(lost) == 1 and session_id in lost[0] and "in-process" in lost[0]
        assert app.bridge.driver is None and app.bridge.session.session_id == session_id
        assert "Hi." in answers(app)  # the conversation, as --resume shows it
        await type_text(pilot, "still there?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Answered in-process." in answers(app), timeout=WAIT, what="the answer")


async def test_without_a_usable_host_attach_says_so_once_and_resumes_in_process(
        fake_llm: FakeLLM, ws: Path, isolated_home: Path, runtime_dir: Path) -> None:
    from tests.conftest import run_cli

    fake_llm.script(Reply(text="Recorded answer."))
    first = run_cli(isolated_home, "run", "first question", "--workspace", str(ws), "--model", fake_llm.model,
                    "--api-base", fake_llm.url, "--api-key", "sk-test-x", "--json")
    assert first.returncode == 0, first.stderr
    session_id = next(json.loads(t)["session_id"] for t in first.stdout.splitlines() if '"run_started"' in t)
    (runtime_dir / "coder-tui").write_text("not a folder")  # the host's place is unusable
    app = make_app(fake_llm, ws, session_id)
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.session is not None and app.query_one("#status").state == "idle",
                       timeout=WAIT, what="the session opened in-process")
        said = [n for n in notices(app) if "session host is not available" in n]
        assert len(said) == 1 and "in-process" in said[0]
        assert app.bridge.driver is None and app.bridge.session.session_id == session_id
        assert "Recorded answer." in answers(app)


async def test_slash_attach_switches_the_running_app_to_the_host_session(other: Any, fake_llm: FakeLLM,
                                                                        ws: Path) -> None:
    from tests.tui.conftest import ready

    release = threading.Event()
    fake_llm.script(Reply(text="Busy in the host.", hold=release))
    run = other("a long task")
    await _first(run, "step_started")
    from tui.app import CoderApp

    app = CoderApp(app_options(ws, fake_llm), animate=False)
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            await ready(pilot)
            own = app.bridge.session.session_id
            await type_text(pilot, f"/attach {run_session(run)[:15]}")
            await pilot.press("enter")
            remote = await attached(pilot)
            assert remote.session_id == run_session(run) != own and app.bridge.session is None
            assert (f"run --attach (pid {run.process.pid})", "a long task") in prompts(app)
            release.set()
            await wait_for(pilot, lambda: "Busy in the host." in answers(app), timeout=WAIT, what="the reply")
    finally:
        release.set()


async def test_one_hunk_rejected_in_the_app_is_left_out_by_the_host(other: Any, fake_llm: FakeLLM, ws: Path) -> None:
    from tests.fakellm import call

    lines = [f"line {i}\n" for i in range(1, 41)]
    (ws / "long.txt").write_text("".join(lines))
    changed = list(lines)
    changed[1], changed[34] = "line 2 changed\n", "line 35 changed\n"
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="long.txt", content="".join(changed))]),
                    Reply(text="ok"))
    run = other("change two lines")
    asked = await _first(run, "approval_required")
    app = make_app(fake_llm, ws, run_session(run))
    async with app.run_test(size=APP_SIZE) as pilot:
        await attached(pilot)
        await approval(pilot)
        await pilot.press("j", "space", "y")  # the second hunk rejected, the rest allowed
        resolved = await run.next(pilot, "approval_resolved", approval_id=asked["approval_id"])
        await run.next(pilot, "turn_done", success=True)
    assert resolved["rejected_hunks"] == {"long.txt": [1]}
    text = (ws / "long.txt").read_text()
    assert "line 2 changed" in text and "line 35 changed" not in text and "line 35\n" in text


async def test_a_prompt_typed_during_the_others_turn_waits_in_the_host_and_esc_stops_the_run_and_the_queue(
        other: Any, fake_llm: FakeLLM, ws: Path) -> None:
    release = threading.Event()
    fake_llm.script(Reply(text="Never finished.", hold=release))
    run = other("a long task")
    await _first(run, "step_started")
    app = make_app(fake_llm, ws, "last")  # this folder's newest: the live one (not yet listed as recorded)
    try:
        async with app.run_test(size=APP_SIZE) as pilot:
            remote = await attached(pilot)
            assert remote.session_id == run_session(run)
            await type_text(pilot, "after that")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("Queued in the session host behind 1 turn" in n for n in notices(app)),
                           timeout=WAIT, what="the queued line")
            assert ("you", "after that") not in prompts(app)  # shown when its turn starts
            await run.next(pilot, "prompt_queued", prompt="after that")
            await pilot.press("escape")
            stopped = await run.next(pilot, "turn_done")
            assert stopped["success"] is False and stopped["completion_reason"] != "completed"
            # stop means stop: the prompt queued behind the run is dropped, and the app says so
            await wait_for(pilot, lambda: any("the queued prompt did not run" in n and "after that" in n
                                              for n in notices(app)), timeout=WAIT, what="the dropped prompt")
            assert ("you", "after that") not in prompts(app) and len(fake_llm.requests) == 1
            # ...and its text is back in the input, to send again or edit (it was lost)
            from tui.widgets.prompt import PromptInput

            await wait_for(pilot, lambda: app.query_one("#prompt", PromptInput).value == "after that", timeout=WAIT,
                           what="the dropped prompt back in the input")
            assert any("Esc stops the running turn and drops what is queued" in n for n in notices(app))
    finally:
        release.set()


async def test_attaching_to_a_session_that_does_not_exist_says_why_and_prompts_are_not_kept(
        start_host: Any, fake_llm: FakeLLM, ws: Path) -> None:
    start_host()
    app = make_app(fake_llm, ws, "20991231-nosuch")
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.bridge.failure is not None, timeout=WAIT, what="the failure")
        message, fix = app.bridge.failure
        assert message == "attach: no session '20991231-nosuch' (see `coder-tui sessions`)"  # no --resume: not typed
        assert "coder-tui sessions" in fix
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Not sent" in n for n in notices(app)), timeout=WAIT, what="not sent")


async def test_shift_tab_in_the_attached_app_sets_the_host_sessions_mode(
        other: Any, fake_llm: FakeLLM, ws: Path) -> None:
    """The mode key reaches the session in the host (it used to say the host could not change it)."""
    fake_llm.script(Reply(text="Hi."))
    run = other("hi")
    await _first(run, "turn_done")
    session_id = asked_session(run)
    watcher = await HostClient.connect(other.host.socket)
    try:
        model = {k: v for k, v in other.host.options(fake_llm, ws).items() if k != "workspace"}
        await watcher.request("open", session=session_id, client="watcher", options=model)
        app = make_app(fake_llm, ws, session_id)
        async with app.run_test(size=APP_SIZE) as pilot:
            driver = await attached(pilot)
            before = driver.mode
            app.action_cycle_mode()
            changed = await next_of(watcher, "mode_changed")
            assert changed["by"].startswith("coder-tui app") and changed["mode"] != before
            await wait_for(pilot, lambda: driver.mode == changed["mode"] == app.mode, timeout=WAIT,
                           what="the app's mode to be the session's")
            assert not any("set when it was opened there" in text for text in notices(app))
            await app.bridge.shutdown()
    finally:
        await watcher.close()
