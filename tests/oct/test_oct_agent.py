"""The room agent end to end: a host written with the published OCT packages, the test server,
the Python agent, and the scripted model server. Each test asserts the host's exact final text."""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import SecretStr

from agent.session.room import RoomAgent
from agent.workspaces.room import RoomWorkspace
from tests.conftest import TEST_KEY
from tests.fakellm import Reply, call
from tests.oct.proxy import CuttableProxy

DOC = "ws/main.py"


async def wait_for(predicate, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


@dataclass
class Rig:
    host: Any
    client: Any
    session: Any
    agent: RoomAgent
    llm: Any
    events: list[Any] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    async def type(self, text: str, at: int | str = "end", delay: int = 0) -> None:
        self.host.send(cmd="type", path=DOC, at=at, text=text, delay=delay)
        await self.host.expect("typed")

    async def settled(self, answered: int, timeout: float = 60.0) -> str:
        """The host's text once the agent answered that many triggers and its edits reached the host."""
        await wait_for(lambda: self.agent.answered >= answered, timeout)
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:  # our last edit may still be on its way to the host
            text = await self.host.text(DOC)
            if text == self.client.docs.read(DOC) or loop.time() > end:
                return text
            await asyncio.sleep(0.05)

    async def cursors(self) -> list[dict[str, Any]]:
        """The other peers' cursors as the host's editor draws them: [{path, line}]."""
        self.host.send(cmd="presence")
        return (await self.host.expect("presence"))["cursors"]


@pytest.fixture
async def rig(oct_server, node_host, make_client, fake_llm):
    from agent.approval import ScriptedApprover
    from agent.config import Config
    from agent.session.core import AgentSession

    made: list[Rig] = []

    async def make(text: str = "a = 1\n", mode: str = "allow", via: str | None = None,
                   readonly: bool = False, decisions: list[Any] | None = None,
                   files: dict[str, str] | None = None, room_settings: dict[str, bool] | None = None,
                   mcp_servers: dict[str, Any] | None = None, stat_any: bool = False,
                   **client_options: Any) -> Rig:
        room = await node_host.create(oct_server.url, files={DOC: text, **(files or {})}, readonly=readonly,
                                      stat_any=stat_any)
        node_host.send(cmd="open", path=DOC)
        client = make_client(via or oct_server.url, room, **client_options)
        await client.join()
        await wait_for(lambda: client.docs.read(DOC) == text)
        config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode=mode,
                        max_steps=10, timeout=10.0, max_retries=1, retry_base_delay=0.01,  # type: ignore[arg-type]
                        room=room_settings or {}, mcp_servers=mcp_servers or {})
        workspace = RoomWorkspace(client)
        events: list[Any] = []
        session = AgentSession.open(config, workspace, ScriptedApprover(decisions or []), events.append)
        agent = RoomAgent(client, workspace, session, session.emit, "agent")
        result = Rig(node_host, client, session, agent, fake_llm, events)
        result.task = asyncio.create_task(agent.run())
        made.append(result)
        return result

    yield make
    for item in made:
        item.task.cancel()
        await asyncio.gather(item.task, return_exceptions=True)
        await item.session.close()
        await item.client.leave()


async def test_plain_edit(rig):
    r = await rig()
    r.llm.script(
        Reply(tool_calls=[call("insert_at_line", file_path=DOC, line=3, content="def greet():\n    return 'hi'\n")]),
        Reply(text="Added greet()."),
    )
    await r.type("# @agent add a greet function\n")
    final = await r.settled(1)
    assert final == "a = 1\n# @agent add a greet function\ndef greet():\n    return 'hi'\n"
    trigger = r.of("trigger")[0]
    assert (trigger.prompt, trigger.path, trigger.line, trigger.by) == ("add a greet function", DOC, 2, "host")
    sent = r.llm.requests[0]["messages"][-1]["content"]
    assert "1\ta = 1\n2\t# @agent add a greet function\n3\t" in sent  # numbered, as the document is
    assert r.client.status.last_trigger and r.client.status.working_on is None


async def test_human_typing_during_a_delayed_answer_is_kept(rig):
    r = await rig("a = 1\nb = 2\n")
    r.llm.script(
        Reply(delay=1.5, tool_calls=[call("replace_lines", file_path=DOC, start_line=2, end_line=2, new_content="b = 20")]),
        Reply(text="Changed b."),
    )
    await r.type("# @agent make b twenty\n")
    await wait_for(lambda: len(r.llm.requests) == 1)
    await r.type("import os\n", at=0, delay=5)  # while the model thinks: shifts every line down
    await r.type("c = 3\n", delay=5)
    final = await r.settled(1)
    assert final == "import os\na = 1\nb = 20\n# @agent make b twenty\nc = 3\n"


async def test_two_triggers_in_quick_succession_are_both_answered_in_order(rig):
    r = await rig()
    r.llm.script(
        Reply(delay=0.5, tool_calls=[call("patch_file", file_path=DOC, patches=[
            {"old_text": "# @agent one\n", "new_text": "# @agent one\nONE = 1\n"}])]),
        Reply(text="one done"),
        Reply(tool_calls=[call("patch_file", file_path=DOC, patches=[
            {"old_text": "# @agent two\n", "new_text": "# @agent two\nTWO = 2\n"}])]),
        Reply(text="two done"),
    )
    await r.type("# @agent one\n# @agent two\n")
    final = await r.settled(2)
    assert final == "a = 1\n# @agent one\nONE = 1\n# @agent two\nTWO = 2\n"
    assert [t.prompt for t in r.of("trigger")] == ["one", "two"]
    assert r.of("trigger")[1].document.count("@agent two") == 1


async def test_edit_after_a_forced_disconnect_and_reconnect(rig, oct_server):
    proxy = CuttableProxy(int(oct_server.url.rsplit(":", 1)[1].strip("/")))
    await proxy.start()
    try:
        r = await rig(via=f"http://127.0.0.1:{proxy.port}/")
        r.llm.script(
            Reply(delay=1.5, tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1,
                                              new_content="a = 100")]),
            Reply(text="done"),
        )
        await r.type("# @agent set a to 100\n")
        await wait_for(lambda: len(r.llm.requests) == 1)
        proxy.refusing = True
        proxy.cut()
        await wait_for(lambda: r.client.status.phase == "reconnecting")
        await r.type("x = 0\n", at=0)  # typed while the agent is away
        proxy.refusing = False
        await wait_for(lambda: r.client.status.phase == "joined")
        final = await r.settled(1)
        assert final == "x = 0\na = 100\n# @agent set a to 100\n"
        assert proxy.cuts == 1
    finally:
        await proxy.stop()


async def test_our_cursor_marks_the_prompt_while_we_work_and_nothing_is_written_into_the_document(rig):
    """The host's editor shows the agent at the prompt line (its awareness cursor) while the model
    works, even when it then fails; no busy character is written into the host's file."""
    answer = threading.Event()
    r = await rig()
    r.llm.script(Reply(hold=answer, status=500, error_message="boom"), Reply(status=500, error_message="boom"))
    await r.type("# @agent do something\n")
    await wait_for(lambda: len(r.llm.requests) == 1)
    deadline = asyncio.get_running_loop().time() + 30
    while {"path": DOC, "line": 2} not in await r.cursors():
        assert asyncio.get_running_loop().time() < deadline, "the agent's cursor never showed at the prompt"
        await asyncio.sleep(0.05)
    assert await r.host.text(DOC) == "a = 1\n# @agent do something\n"  # mid-run: the host's text as typed
    answer.set()
    assert await r.settled(1) == "a = 1\n# @agent do something\n"
    await wait_for(lambda: r.client.docs.awareness.get_local_state().get("selection", {}).get("textSelections") == [])
    deadline = asyncio.get_running_loop().time() + 30
    while await r.cursors():
        assert asyncio.get_running_loop().time() < deadline, "the agent's cursor stayed after the run"
        await asyncio.sleep(0.05)


async def test_chat_trigger_is_answered_in_the_chat(rig):
    r = await rig()
    r.llm.script(Reply(text="a is 1."))
    r.host.send(cmd="chat", text="@agent what is a?")
    chat = await r.host.expect("chat")
    assert chat["text"] == "a is 1."
    assert "what is a?" in r.llm.requests[0]["messages"][-1]["content"]
    assert await r.host.text(DOC) == "a = 1\n"


async def test_read_only_room_refuses_edits_and_says_why(rig):
    r = await rig(readonly=True)
    r.llm.script(
        Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1, new_content="a = 2")]),
        Reply(text="I cannot edit: the room is read-only."),
    )
    await r.type("# @agent change a\n")
    final = await r.settled(1)
    assert final == "a = 1\n# @agent change a\n"
    result = [e for e in r.of("tool_result")][0]
    assert not result.ok and "read-only" in result.error


async def test_ask_mode_approval_then_edit(rig):
    from agent.approval import Decision

    r = await rig(mode="ask", decisions=[Decision("allow_once")])
    r.llm.script(
        Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1, new_content="a = 5")]),
        Reply(text="ok"),
    )
    await r.type("# @agent five\n")
    final = await r.settled(1)
    assert final == "a = 5\n# @agent five\n"
    assert r.of("approval_required")[0].files[0].path == DOC


async def test_long_documents_are_windowed_in_the_prompt(rig):
    body = "".join(f"value_{n:05d} = {n}  # filler filler filler\n" for n in range(1500))
    r = await rig(body)
    r.llm.script(Reply(text="looked"))
    await r.type("# @agent summarise\n")
    await r.settled(1)
    sent = r.llm.requests[0]["messages"][-1]["content"]
    assert "of 1502" in sent and "value_00000" not in sent and "1501\t# @agent summarise" in sent


async def test_files_not_open_in_the_editor_go_through_the_hosts_file_system(rig):
    r = await rig(files={"ws/lib/util.py": "def f():\n    return 1\n", "ws/lib/data.txt": "x\n"})
    r.llm.script(
        Reply(tool_calls=[call("list_dir", path="ws/lib")]),
        Reply(tool_calls=[call("search_code", pattern="return")]),
        Reply(tool_calls=[call("read_file", file_path="ws/lib/util.py")]),
        Reply(tool_calls=[call("replace_lines", file_path="ws/lib/util.py", start_line=2, end_line=2,
                               new_content="    return 2")]),
        Reply(text="util.f returns 2 now."),
    )
    await r.type("# @agent make util.f return 2\n")
    final = await r.settled(1)
    assert final == "a = 1\n# @agent make util.f return 2\n"
    r.host.send(cmd="file", path="ws/lib/util.py")
    assert (await r.host.expect("file"))["text"] == "def f():\n    return 2\n"
    outputs = [e.output for e in r.of("tool_result")]
    assert "data.txt" in outputs[0] and "util.py" in outputs[0]
    assert "ws/lib/util.py:2" in outputs[1]  # search covers the host's files (and the shared texts)
    assert re.search(r"^ *2\t    return 1$", outputs[2], re.M)


async def test_agents_md_of_the_shared_folder_is_in_the_system_prompt(rig):
    r = await rig(files={"ws/AGENTS.md": "Always answer in French.\n"})
    r.llm.script(Reply(text="d'accord"))
    r.host.send(cmd="chat", text="@agent hello")
    await r.host.expect("chat")
    system = r.llm.requests[0]["messages"][0]["content"]
    assert "## Project instructions (AGENTS.md)" in system and "Always answer in French." in system


async def test_a_room_without_agents_md_is_not_warned_about_one(rig):
    """The host's folder listing says whether there is one: a host whose stat answers for any path
    (as one seen in use) made every room run warn "ignored AGENTS.md: cannot read ... not found"."""
    r = await rig(stat_any=True)
    r.llm.script(Reply(text="hello"))
    r.host.send(cmd="chat", text="@agent hello")
    await r.host.expect("chat")
    assert r.of("warning") == [] and "Project instructions" not in r.llm.requests[0]["messages"][0]["content"]


async def test_a_chat_answer_over_several_model_turns_keeps_them_apart(rig):
    r = await rig()
    r.llm.script(Reply(text="Let me check readability:", tool_calls=[call("read_file", file_path=DOC)]),
                 Reply(text="The function is fine."))
    r.host.send(cmd="chat", text="@agent is it readable?")
    chat = await r.host.expect("chat")
    assert "readability:The" not in chat["text"], chat["text"]


async def test_a_stop_drops_and_answers_the_peers_queued_requests(rig):
    """A stop ends the running turn and answers every request queued behind it in the chat (they
    stayed queued before, and ran after the stop)."""
    release = threading.Event()
    r = await rig()
    r.llm.script(Reply(text="first answer", hold=release), Reply(text="never asked"))
    try:
        r.host.send(cmd="chat", text="@agent first question")
        await wait_for(lambda: len(r.llm.requests) == 1)
        r.host.send(cmd="chat", text="@agent second question")
        await wait_for(lambda: r.agent.queue.qsize() == 1)
        assert r.agent.stop("the operator") == 1
        told = await r.host.expect("chat")
    finally:
        release.set()
    assert told["text"] == ("Stopped by the operator before it ran: your request 'second question'. "
                            "Ask again to have it answered.")
    await wait_for(lambda: r.agent.answered == 1)
    assert r.agent.queue.empty() and r.client.status.queue == []
    assert len(r.llm.requests) == 1  # the dropped request never ran
    assert any("dropped 1 queued request" in e.message for e in r.of("warning"))
