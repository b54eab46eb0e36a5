"""open_session, the one assembly of a session: every recipe gets the same finishing steps.

Scheduled tasks, plan steps and the router used to be built by recipes of their own that skipped
some of them (the sandbox policy, the token budget, the profile's models).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agent.config import Config
from agent.tools import sandbox
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, call


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """bubblewrap cannot be found (whether or not this machine has it): `bwrap` refuses, `auto` warns.
    PATH holds only git and the shells."""
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir()
    for name in ("git", "sh", "bash"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(folder))
    sandbox._bwrap_path.cache_clear()
    sandbox.probe.cache_clear()
    yield
    sandbox._bwrap_path.cache_clear()
    sandbox.probe.cache_clear()


def config_for(llm: FakeLLM, **values: Any) -> Config:
    return Config(model=llm.model, api_base=llm.url, api_key=SecretStr(TEST_KEY), timeout=10.0, max_retries=2,
                  retry_base_delay=0.01, **values)


async def test_a_scheduled_task_honours_the_configured_sandbox(
        fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path, no_bwrap: Any) -> None:
    from agent.session.tasks import run_due, task_store
    from agent.workspaces.local import LocalWorkspace

    root = tmp_path / "ws"
    root.mkdir()
    workspace = LocalWorkspace(root)
    store = task_store(workspace)
    store.schedule("say hello", delay_seconds=0)
    store.close()
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="echo hello")]), Reply(text="done"))
    events: list[Any] = []
    try:
        await run_due(workspace, config_for(fake_llm, mode="allow", sandbox="bwrap"), lambda text: None,
                      events.append)
    finally:
        await workspace.close()
    results = [e for e in events if e.type == "tool_result"]
    assert len(results) == 1 and not results[0].ok
    # `bwrap` refuses to run the command unconfined; the unconfigured default (`auto`) ran it with a warning
    assert 'sandbox = "bwrap" but bubblewrap (bwrap) is not installed' in (results[0].error or "")
    assert not [e for e in events if e.type == "warning" and "without a sandbox" in e.message]


async def test_a_plan_step_spends_from_the_turns_token_budget(make_harness: Any) -> None:
    from tests.planning.common import plan_reply

    h = make_harness(mode="allow")
    h.session.workflow = "structured"
    h.session.config.max_tokens = 1500
    h.script(replace(plan_reply("First", "Second", goal="Two steps"), usage=(100, 10)),  # the planner
             Reply(text="first done", usage=(2000, 10)),  # step 1 spends the rest of the budget
             Reply(text="second done"), Reply(text="report"))
    complete = await h.run("do two things")
    assert complete.completion_reason == "budget" and not complete.success
    assert "the token budget is spent" in complete.final_response
    assert [(e.step_id, e.status) for e in h.of("step_complete")] == [("1", "done"), ("2", "failed")]
    assert len(h.llm.requests) == 2  # step 2 asked the model nothing, and no report was written


async def test_the_router_uses_the_profiles_small_model(make_harness: Any, isolated_home: Path) -> None:
    from agent.profiles import user_dir

    user_dir().mkdir(parents=True)
    (user_dir() / "coder.toml").write_text('description = "routes cheaply"\nsmall_model = "openai/tiny-router"\n')
    h = make_harness(mode="allow")
    h.session.workflow = "auto"
    h.script(Reply(text='{"task_type": "follow_up", "needs_plan": false}'), Reply(text="done"))
    complete = await h.run("tidy up the parser module")
    assert complete.success
    assert [r["model"] for r in h.llm.requests] == ["tiny-router", h.llm.model.split("/", 1)[1]]


async def test_a_room_target_rebinds_its_trigger_answerer_to_the_next_session(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """After /clear or /resume the room's triggers go to the new session, not the closed one."""
    from types import SimpleNamespace

    from agent.approval import QueueApprover
    from agent.session.open import open_session
    from agent.session.ports import SessionPorts
    from agent.session.record import SessionStore
    from agent.session.target import Target
    from agent.workspaces.local import LocalWorkspace

    (tmp_path / "ws").mkdir()
    class Answerer:  # stands in for the RoomAgent made at the first attach
        session: Any = None
        emit: Any = None

        def bind(self, session: Any, emit: Any) -> None:
            self.session, self.emit = session, emit

    answerer = Answerer()
    target = Target(LocalWorkspace(tmp_path / "ws"), room=SimpleNamespace(), agent=answerer)  # type: ignore[arg-type]
    store = SessionStore(tmp_path / "sessions")
    events: list[Any] = []
    session = open_session(target, config_for(fake_llm), SessionPorts(QueueApprover(), events.append), store=store)
    try:
        assert answerer.session is session and answerer.emit == session.emit
    finally:
        await session.close()
