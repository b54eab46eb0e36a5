"""Issue 24's done-when: ONE session live in the session host, driven at once from `run --attach` (a
real subprocess), an ACP client (the published TypeScript SDK, tests/interop/acp_client.mjs, whose
agent joins the session with `session/load`), an SSE client of `serve` (`GET
/api/sessions/{id}/events`) and the app (`coder-tui attach ID`, through Textual's pilot). Each
sees the others' prompts and the agent's events in order; an approval answered in one closes in
all (the app's panel included); the session file has every turn once, in order.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from tests.acp.conftest import acp_client, no_host  # noqa: F401 - fixtures
from tests.acp.test_acp import text_of
from tests.conftest import TEST_KEY, cli, run_cli
from tests.fakellm import FakeLLM, Reply, call
from tests.host.test_app_attach import APP_SIZE, WAIT, attached, make_app
from tests.host.test_app_attach import prompts as app_prompts
from tests.host.test_host_fanout import session_lines
from tests.tui.conftest import wait_for
from tests.tui.test_app_sessions import answers, notices
from tests.serve.conftest import make_serve, sse_events  # noqa: F401 - make_serve is a fixture


def edit(value: int) -> Reply:
    return Reply(tool_calls=[call("replace_lines", file_path="a.py", start_line=2, end_line=2,
                                  new_content=f"    return {value}")])


def attach_args(llm: FakeLLM, ws: Path, ref: str, prompt: str, *extra: str) -> list[str]:
    return ["run", "--attach", ref, prompt, "--workspace", str(ws), "--model", llm.model, "--api-base", llm.url,
            "--api-key", TEST_KEY, "--mode", "ask", "--workflow", "direct", "--json", *extra]


class Follower(threading.Thread):
    """The SSE client: follows the session until it has seen `turns` turns end."""

    def __init__(self, serve: Any, session_id: str, turns: int) -> None:
        super().__init__(daemon=True)
        self.serve, self.session_id, self.turns = serve, session_id, turns
        self.seen: list[dict[str, Any]] = []
        self.replayed = threading.Event()
        self.status = 0

    def run(self) -> None:
        with self.serve.client() as http, http.stream("GET", f"/api/sessions/{self.session_id}/events") as stream:
            self.status = stream.status_code
            for data in sse_events(stream.iter_lines()):
                self.seen.append(data)
                if data["type"] == "replay_end":
                    self.replayed.set()
                if sum(d["type"] == "turn_done" for d in self.seen) == self.turns:
                    return

    def live(self) -> list[dict[str, Any]]:
        kinds = [d["type"] for d in self.seen]
        return self.seen[kinds.index("replay_end") + 1:]


class Attached:
    """`coder-tui run --attach ID PROMPT --json` as a subprocess: its lines as they come, its stdin open."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for raw in self.process.stdout:
            if raw.strip():
                self.lines.append(json.loads(raw))
                self.changed.set()

    async def wait_for(self, kind: str, timeout: float = 60, **match: Any) -> dict[str, Any]:
        async def found() -> dict[str, Any]:
            while True:
                for line in self.lines:
                    if line.get("type") == kind and all(line.get(k) == v for k, v in match.items()):
                        return line
                self.changed.clear()
                await self.changed.wait()
        return await asyncio.wait_for(found(), timeout)

    def say(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode())


def updates_of(client: Any, session_id: str) -> list[tuple[str, str]]:
    """The ACP client's updates as (kind, text or title), in order."""
    shown = []
    for update in client.updates(session_id):
        kind = update["sessionUpdate"]
        if kind in ("user_message_chunk", "agent_message_chunk"):
            shown.append((kind, update["content"]["text"]))
        elif kind in ("tool_call", "tool_call_update"):
            shown.append((kind, update.get("title") or update.get("status") or ""))
    return shown


async def test_one_session_driven_from_the_app_run_attach_acp_and_sse_at_once(
        fake_llm: FakeLLM, ws: Path, start_host, acp_client: Any, make_serve: Any, isolated_home: Path) -> None:
    host = start_host()
    runtime = host.socket.parent.parent
    fake_llm.script(Reply(text="Zero done."), edit(2), Reply(text="One done."), edit(3), Reply(text="Two done."))
    # turn zero: `run --attach new` opens the session in the host (the host closes it when it leaves)
    zero = await asyncio.to_thread(run_cli, isolated_home, *attach_args(fake_llm, ws, "new", "zero: say hi"),
                                   XDG_RUNTIME_DIR=str(runtime))
    assert zero.returncode == 0, zero.stderr
    sid = next(json.loads(line)["session_id"] for line in zero.stdout.splitlines() if '"run_started"' in line)

    # the ACP client joins it in the host: the session so far first
    editor = await acp_client("--workflow", "direct", runtime=runtime)
    await editor.initialize()
    loaded = await editor.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
    assert loaded["modes"]["currentModeId"] == "ask"
    assert updates_of(editor, sid)[:2] == [("user_message_chunk", "zero: say hi"), ("agent_message_chunk", "Zero done.")]

    # the SSE client follows it through serve
    follower = Follower(make_serve(), sid, turns=2)
    follower.start()
    assert await asyncio.to_thread(follower.replayed.wait, 60), follower.seen
    # the app attaches to it (`coder-tui attach ID`): a fourth front end on the same session
    app = make_app(fake_llm, ws, sid)
    async with app.run_test(size=APP_SIZE) as pilot:
        assert (await attached(pilot)).session_id == sid

        # turn one: the editor's prompt asks for an approval; every front end sees it
        prompt_one = editor.request_nowait("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": "one: make f return 2"}]})
        asked_one = await editor.wait_for(lambda e: e.get("event") == "permission")
        # `run --attach` joins with its own prompt (queued behind turn one) and answers turn one's approval
        process = await asyncio.create_subprocess_exec(
            *cli(*attach_args(fake_llm, ws, sid, "two: make f return 3")), env=host.env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        terminal = Attached(process)
        joined = await terminal.wait_for("replay_end")
        assert len(joined["pending"]) == 1 and joined["running"] is True
        terminal.say("y\n")
        # the editor's request no longer applies: withdrawn ($/cancel_request), answered there as cancelled
        await editor.wait_for(lambda e: e.get("event") == "permission_withdrawn" and e["rid"] == asked_one["rid"])
        assert (await editor.reply(prompt_one, timeout=120))["result"]["stopReason"] == "end_turn"

        # turn two is the terminal's; its approval is answered in the editor
        asked_two = await editor.wait_for(lambda e: e.get("event") == "permission" and e["rid"] != asked_one["rid"])
        assert "return 3" in json.dumps(asked_two["params"]["toolCall"]["content"])
        editor.send(cmd="answer", rid=asked_two["rid"], outcome={"outcome": "selected", "optionId": "allow_once"})
        code = await asyncio.wait_for(process.wait(), 120)
        await terminal.reading
        assert code == 0, (await process.stderr.read()).decode() if process.stderr else ""
        await asyncio.to_thread(follower.join, 60)
        assert not follower.is_alive() and follower.status == 200

        # the app: both prompts with who sent them, who answered each approval, both texts
        await wait_for(pilot, lambda: "Two done." in "".join(answers(app)), timeout=WAIT, what="turn two in the app")
        shown = [(who.split(" (")[0], text) for who, text in app_prompts(app) if text.startswith(("one:", "two:"))]
        assert shown == [("acp", "one: make f return 2"), ("run --attach", "two: make f return 3")], app_prompts(app)
        said = [n for n in notices(app) if "Approval answered by" in n]
        assert [n.split("by ")[1].split(" (")[0] for n in said] == ["run --attach", "acp"], said

    assert (ws / "a.py").read_text().endswith("return 3\n")
    # the SSE client: both prompts, both approvals answered and by whom, the text, in order
    live = follower.live()
    story = [(d["type"], d["by"].split(" (")[0]) for d in live
             if d["type"] in ("turn_started", "approval_answered", "turn_done")]
    assert story == [("turn_started", "acp"), ("approval_answered", "run --attach"), ("turn_done", "acp"),
                     ("turn_started", "run --attach"), ("approval_answered", "acp"), ("turn_done", "run --attach")]
    assert [d["prompt"] for d in live if d["type"] == "turn_started"] == ["one: make f return 2",
                                                                          "two: make f return 3"]
    assert "".join(d["text"] for d in live if d["type"] == "text_delta") == "One done.Two done."
    # the terminal: the editor's prompt (in its replay), its answer and the editor's, both texts
    seen = terminal.lines
    assert any(d["type"] == "turn_started" and d["prompt"] == "one: make f return 2" for d in seen)
    answered = [d["by"] for d in seen if d["type"] == "approval_answered"]
    assert [by.split(" (")[0] for by in answered] == ["run --attach", "acp"]
    assert "".join(d["text"] for d in seen if d["type"] == "text_delta") == "One done.Two done."
    # the editor: the terminal's prompt as a user message, who answered, both texts
    shown = updates_of(editor, sid)
    assert ("user_message_chunk", "two: make f return 3") in shown
    assert ("user_message_chunk", "one: make f return 2") not in shown  # its own prompt is on its screen already
    titles = [text for kind, text in shown if kind == "tool_call_update" and " by " in text]
    assert titles[0].startswith("Edit a.py") and "(allowed by run --attach (pid" in titles[0]
    assert "(allowed by acp (pid" in titles[1]
    said = text_of(editor.updates(sid, "agent_message_chunk"))
    assert said.index("One done.") < said.index("Two done.")
    # the session file: every turn once, in order
    recorded = session_lines(isolated_home, sid)
    prompts = [m["data"]["content"] for m in recorded if m.get("kind") == "message" and m["data"]["role"] == "user"]
    assert prompts == ["zero: say hi", "one: make f return 2", "two: make f return 3"]
    resolved = [m["data"]["decision"] for m in recorded if m.get("kind") == "event"
                and m["data"]["type"] == "approval_resolved"]
    assert resolved == ["allow_once", "allow_once"]
