"""Room proposals answered from the chat: a host peer written with the published OCT packages (and a
Python guest), the test server, the room agent in ask mode and the scripted model server."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import SecretStr

from agent.approval import Decision, QueueApprover
from agent.oct.approvals import MAX_DIFF_LINES, parse_answer, proposal_message
from agent.session.room import RoomAgent
from agent.workspaces.room import RoomWorkspace
from tests.conftest import TEST_KEY
from tests.fakellm import Reply, call

DOC = "ws/main.py"
LOCAL_REFUSAL = "host: only the person running coder-tui may answer proposals in this room"


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
    local: QueueApprover  # the person running coder-tui (answers by id, like the app or stdin)
    llm: Any
    events: list[Any] = field(default_factory=list)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    async def chat(self, *parts: str, timeout: float = 60.0) -> str:
        """The next chat message the host sees that holds every part (earlier ones are skipped)."""
        while True:
            text = (await self.host.expect("chat", timeout=timeout))["text"]
            if all(part in text for part in parts):
                return text

    def chats(self) -> list[str]:
        return [e["text"] for e in self.host.seen if e.get("event") == "chat"]


@pytest.fixture
async def rig(oct_server, node_host, make_client, fake_llm):
    from agent.config import Config
    from agent.session.core import AgentSession

    made: list[tuple[Rig, asyncio.Task[None]]] = []

    async def make(approvers: list[str] | None = None, cli_approvers: tuple[str, ...] = ()) -> Rig:
        room = await node_host.create(oct_server.url, files={DOC: "a = 1\n"})
        node_host.send(cmd="open", path=DOC)
        client = make_client(oct_server.url, room)
        await client.join()
        await wait_for(lambda: client.docs.read(DOC) == "a = 1\n")
        config = Config(model=fake_llm.model, api_base=fake_llm.url, api_key=SecretStr(TEST_KEY), mode="ask",
                        max_steps=10, timeout=10.0, max_retries=1, retry_base_delay=0.01,  # type: ignore[arg-type]
                        room={"approvers": approvers or []})
        workspace = RoomWorkspace(client)
        events: list[Any] = []
        local = QueueApprover()
        session = AgentSession.open(config, workspace, local, events.append)
        agent = RoomAgent(client, workspace, session, session.emit, "agent", cli_approvers)
        result = Rig(node_host, client, session, agent, local, fake_llm, events)
        made.append((result, asyncio.create_task(agent.run())))
        return result

    yield make
    for item, task in made:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await item.session.close()
        await item.client.leave()


def edit_then(text: str) -> tuple[Reply, Reply]:
    return (Reply(tool_calls=[call("replace_lines", file_path=DOC, start_line=1, end_line=1, new_content="a = 5")]),
            Reply(text=text))


async def ask(r: Rig) -> str:
    """Trigger an edit from the document; the proposal as the room sees it in the chat."""
    r.host.send(cmd="type", path=DOC, at="end", text="# @agent five\n")
    await r.host.expect("typed")
    return await r.chat("Proposal 1")


async def test_an_allowed_peer_approves_from_the_chat_and_the_edit_lands(rig):
    r = await rig(approvers=["host"])
    r.llm.script(*edit_then("a is five."))
    proposal = await ask(r)
    assert "edit ws/main.py" in proposal and "-a = 1\n+a = 5" in proposal
    assert proposal.endswith("Answer with @agent yes, or @agent no <feedback> (to name this one: @agent yes 1)")
    r.host.send(cmd="chat", text="@agent yes")
    assert await r.chat("Proposal 1") == "Proposal 1 approved by host."
    assert await r.host.wait_text(DOC, equals="a = 5\n# @agent five\n")
    await wait_for(lambda: r.agent.answered == 1)
    resolved = r.of("approval_resolved")[0]
    assert (resolved.decision, resolved.by) == ("allow_once", "host")
    assert not r.local.pending  # the local question was withdrawn
    assert len(r.llm.requests) == 2  # the @agent yes was an answer, not a prompt


async def test_no_with_feedback_reaches_the_model(rig):
    r = await rig(approvers=["HOST"])  # names match whatever their case
    r.llm.script(*edit_then("I will use tabs."))
    await ask(r)
    r.host.send(cmd="chat", text="@agent no use tabs")
    assert await r.chat("Proposal 1") == "Proposal 1 declined by host: use tabs."
    await wait_for(lambda: r.agent.answered == 1)
    tool_result = r.llm.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool" and "Their feedback: use tabs" in tool_result["content"]
    assert await r.host.wait_text(DOC, equals="a = 1\n# @agent five\n")  # as typed: nothing of ours in it


async def test_a_peer_not_allowed_is_refused_and_nothing_lands(rig, make_client, oct_server):
    r = await rig(approvers=["alice@example.com"], cli_approvers=("carol",))
    bob = make_client(oct_server.url, r.host.room_id, name="bob")
    await bob.join()
    try:
        await wait_for(lambda: any(p.name == "bob" for p in r.client.status.peers.values()))
        r.llm.script(*edit_then("Left it."))
        await ask(r)
        bob.send_chat("@agent yes")
        refusal = await r.chat("bob:")
        assert refusal == "bob: only alice@example.com, carol may answer proposals in this room."
        assert r.agent.approvals.pending and not r.of("approval_resolved")  # still waiting
        r.local.resolve(r.local.pending[0], Decision("deny", feedback="private note"))  # not for the room
        assert await r.chat("Proposal 1") == "Proposal 1 declined by the person running coder-tui."
        await wait_for(lambda: r.agent.answered == 1)
        assert await r.host.wait_text(DOC, equals="a = 1\n# @agent five\n")  # as typed: nothing of ours in it
        assert sum("bob:" in text for text in r.chats()) == 1  # one reply
    finally:
        await bob.leave()


async def test_by_default_only_the_local_person_approves(rig):
    r = await rig()
    r.llm.script(*edit_then("Done."))
    await ask(r)
    r.host.send(cmd="chat", text="@agent yes")
    refusal = await r.chat("host:")
    assert refusal.startswith(LOCAL_REFUSAL) and "--approver NAME" in refusal
    assert r.agent.approvals.pending and not r.of("approval_resolved")
    r.local.resolve(r.local.pending[0], Decision("allow_once"))
    assert await r.host.wait_text(DOC, equals="a = 5\n# @agent five\n")


async def test_a_local_answer_first_closes_the_chat_proposal(rig):
    r = await rig(approvers=["*"])
    r.llm.script(*edit_then("Done."))
    await ask(r)
    await wait_for(lambda: r.session.pending_approvals)  # the session's answers reach the local approver
    assert r.session.answer(r.session.pending_approvals[0], "allow_once")
    assert await r.chat("Proposal 1") == "Proposal 1 approved by the person running coder-tui."
    await wait_for(lambda: r.agent.answered == 1)
    assert await r.host.wait_text(DOC, equals="a = 5\n# @agent five\n")
    r.host.send(cmd="chat", text="@agent no too late")  # the chat's answer comes second
    assert await r.chat("host:") == "host: nothing is waiting for approval."
    assert len(r.llm.requests) == 2 and r.of("approval_resolved")[0].by is None


async def test_a_proposal_named_by_its_number(rig):
    r = await rig(approvers=["host"])
    r.llm.script(*edit_then("Done."))
    await ask(r)
    r.host.send(cmd="chat", text="@agent yes 2")
    assert await r.chat("host:") == "host: no proposal 2 is waiting (waiting: 1)."
    r.host.send(cmd="chat", text="@agent yes 1")
    assert await r.chat("Proposal 1") == "Proposal 1 approved by host."
    assert await r.host.wait_text(DOC, equals="a = 5\n# @agent five\n")


async def test_a_proposal_is_withdrawn_when_the_run_stops(rig):
    r = await rig(approvers=["host"])
    r.llm.script(*edit_then("Done."))
    await ask(r)
    await wait_for(lambda: r.local.pending)
    assert r.session.stop()
    assert await r.chat("Proposal 1") == "Proposal 1 withdrawn: the run stopped."
    await wait_for(lambda: r.agent.answered == 1)
    assert not r.local.pending and not r.agent.approvals.pending
    r.host.send(cmd="chat", text="@agent yes")
    assert await r.chat("host:") == "host: nothing is waiting for approval."
    assert await r.host.wait_text(DOC, equals="a = 1\n# @agent five\n")


def test_approver_needs_a_room():
    from tui.cli import _launch_problem, launch_parser

    problem = _launch_problem(launch_parser().parse_args(["--approver", "alice"]))
    assert problem == "--approver needs --room ROOM_ID: it names the room peers who may answer proposals"
    assert _launch_problem(launch_parser().parse_args(["--room", "r1", "--approver", "alice"])) is None


def test_answers_are_parsed_and_other_prompts_are_not():
    assert parse_answer("yes") == parse_answer("Yes.")
    assert parse_answer("no 2 use tabs") == parse_answer("no #2: use tabs")
    assert (parse_answer("no 2 use tabs").allow, parse_answer("no 2 use tabs").number) == (False, 2)
    assert parse_answer("no use tabs").feedback == "use tabs"
    assert parse_answer("yesterday's bug: fix it") is None and parse_answer("add tests") is None


def test_a_long_diff_is_trimmed_with_a_count():
    from agent.approval import ApprovalRequest
    from agent.diffing import FileChange

    old = "".join(f"line {n}\n" for n in range(100))
    change = FileChange(DOC, old, old.replace("line", "LINE"), "shout")
    request = ApprovalRequest(approval_id="ap_1", call_id="c", tool="write_file", args={}, kind="edit",
                              summary="shout\x1b[2K", changes=[change])
    text = proposal_message(3, request, "agent")
    lines = text.splitlines()
    total = len(change.unified_diff().splitlines()) + 1
    assert len(lines) == MAX_DIFF_LINES + 3
    assert lines[-2] == f"… {total - MAX_DIFF_LINES} more lines not shown"
    assert lines[0] == "Proposal 3 from @agent, waiting for approval: shout\\x1b[2K"


def test_the_room_and_tools_tables_of_a_config_file_are_typed_settings(isolated_home):
    """`[room]` and `[tools.NAME]` read from config.toml were left plain tables: `[room]` settings
    were never seen by the room agent, and `[tools.NAME]` broke opening a session."""
    from agent.config import load_config
    from agent.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text('[room]\napprovers = ["alice"]\nallow_network = true\n'
                                  '[tools.bash_exec]\ntimeout = 5\n')
    config = load_config(None, {"model": "openai/x"}, environ={})
    assert (config.room.approvers, config.room.allow_network) == (["alice"], True)
    assert config.tools["bash_exec"].timeout == 5


def test_a_fetch_and_a_command_are_proposed_by_what_they_would_do():
    from agent.approval import ApprovalRequest

    fetch = ApprovalRequest(approval_id="ap_1", call_id="c", tool="web_fetch", args={}, kind="network",
                            summary="web_fetch: https://example.com/x", url="https://example.com/x")
    assert proposal_message(1, fetch, "bot").splitlines()[1] == "fetch https://example.com/x"
    command = ApprovalRequest(approval_id="ap_2", call_id="c", tool="bash_exec", args={"network": True},
                              kind="exec", summary="bash_exec: make", command="make\x1b]0;x\x07", cwd="src")
    lines = proposal_message(2, command, "bot").splitlines()
    assert lines[1] == "run `make\\x1b]0;x\\x07` in src (with network access)"
    assert lines[2] == "Answer with @bot yes, or @bot no <feedback> (to name this one: @bot yes 2)"
