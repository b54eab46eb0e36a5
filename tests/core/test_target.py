"""open_target on local folders, and the session API front ends use on a target."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.approval import Decision, QueueApprover, ScriptedApprover
from agent.config import Config
from agent.session.open import open_session
from agent.session.ports import SessionPorts
from agent.session.record import SessionStore
from agent.session.target import TargetError, TargetSpec, open_target
from tests.conftest import write_files
from tests.fakellm import FakeLLM, Reply


def config() -> Config:
    return Config(model="openai/scripted", api_base="http://127.0.0.1:9")


async def test_a_local_folder_is_described_and_closes_twice_safely(tmp_path: Path) -> None:
    ws = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    target = await open_target(TargetSpec(workspace=str(ws), prompt="tidy a.py"))
    assert (target.kind, target.label, target.prompt) == ("local", str(ws), "tidy a.py")
    assert target.registry() is None and target.meta == {} and target.github is None and target.room is None
    assert await target.workspace.read_text("a.py") == "x = 1\n"
    await target.close()
    await target.close()


async def test_resume_without_a_folder_opens_the_sessions_folder(tmp_path: Path, fake_llm: FakeLLM) -> None:
    ws = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    store = SessionStore(tmp_path / "sessions")
    first = await open_target(TargetSpec(workspace=str(ws)))
    fake_llm.script(Reply(text="hello"))
    session = open_session(first, Config(model="openai/scripted", api_base=fake_llm.url, api_key="sk-test-1234567890"),
                           SessionPorts(QueueApprover(), lambda event: None), store=store)
    await session.run("hi")  # a session is recorded from its first prompt
    await session.close()
    again = await open_target(TargetSpec(resume=session.session_id), store=store)
    assert again.workspace.root == ws.resolve()
    resumed = open_session(again, config(), SessionPorts(QueueApprover(), lambda event: None),
                           resume=session.session_id, store=store)
    assert resumed.resumed and resumed.session_id == session.session_id
    await resumed.close()
    await again.close()


@pytest.mark.parametrize("spec, message, hint", [
    (TargetSpec(workspace="/definitely/not/here"),
     "--workspace: workspace folder /definitely/not/here does not exist", "a folder you can read"),
    (TargetSpec(clone=True), "--clone and --issue need --github OWNER/REPO", "add --github OWNER/REPO"),
    (TargetSpec(issue=3), "--clone and --issue need --github OWNER/REPO", "add --github OWNER/REPO"),
    (TargetSpec(resume="no-such-session"), "--resume: no session 'no-such-session'", "coder-tui sessions"),
])
async def test_what_cannot_open_is_one_error_with_a_hint(tmp_path: Path, spec: TargetSpec, message: str,
                                                         hint: str) -> None:
    with pytest.raises(TargetError) as info:
        await open_target(spec, store=SessionStore(tmp_path / "sessions"))
    assert info.value.message.startswith(message) and str(info.value) == info.value.message
    assert hint in info.value.hint and info.value.usage
    error = info.value  # no chained traceback behind the message
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_the_spec_reads_the_options_of_every_command() -> None:
    class Run:  # `coder-tui run`
        workspace, github, clone, issue, prompt, resume = None, "octo/hello", True, 4, "fix it", "last"

    class Room:  # `coder-tui room ROOM_ID`
        room_id, server, name, email, resume = "r1", "http://127.0.0.1:1/", "bot", "b@x.org", None

    assert TargetSpec.from_options(Run()) == TargetSpec(github="octo/hello", clone=True, issue=4,
                                                        prompt="fix it", resume="last")
    room = TargetSpec.from_options(Room())
    assert (room.room, room.server, room.name, room.email) == ("r1", "http://127.0.0.1:1/", "bot", "b@x.org")


async def test_answers_by_id_need_a_queue_approver(tmp_path: Path) -> None:
    target = await open_target(TargetSpec(workspace=str(write_files(tmp_path / "ws", {}))))
    store = SessionStore(tmp_path / "sessions")
    queued = open_session(target, config(), SessionPorts(QueueApprover(), lambda event: None), store=store)
    assert queued.pending_approvals == [] and queued.answer("ap_unknown", "allow_once") is False
    await queued.close(keep_workspace=True)
    scripted = open_session(target, config(), SessionPorts(ScriptedApprover([Decision("deny")]), lambda event: None),
                            store=store)
    with pytest.raises(TypeError, match="ScriptedApprover does not take answers by id"):
        scripted.answer("ap_1", "deny")
    assert scripted.pending_approvals == []
    await scripted.close()
