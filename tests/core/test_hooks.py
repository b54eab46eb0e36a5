"""Hooks (`[[hooks.*]]`) through the real loop: real hook commands (bash, in the sandbox when it
works) receive the event on stdin and answer by exit code and JSON; the scripted model reads what
they say."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from pydantic import SecretStr

from agent import paths
from agent.approval import Decision, QueueApprover, ScriptedApprover
from agent.config import Config, load_config
from agent.permissions.settings import HookSettings
from agent.tools import sandbox
from tests.conftest import TEST_KEY, open_harness, write_files
from tests.fakellm import FakeLLM, Reply, call

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None or sandbox.probe("/") is not None,
                                 reason="bubblewrap does not work here")


def _config(llm: FakeLLM, mode: str = "allow", **hooks: list[dict[str, Any]]) -> Config:
    return Config(model=llm.model, api_base=llm.url, api_key=SecretStr(TEST_KEY), mode=mode,  # type: ignore[arg-type]
                  timeout=10.0, max_retries=1, retry_base_delay=0.01, hooks=HookSettings.model_validate(hooks))


@pytest.fixture
async def harness(fake_llm: FakeLLM, tmp_path: Path) -> Any:
    made: list[Any] = []

    def make(config: Config, decisions: list[Decision] | None = None, files: dict[str, str] | None = None,
             root: Path | None = None, approver: Any = None) -> Any:
        h = open_harness(fake_llm, root or tmp_path / "ws", files, config, approver or ScriptedApprover(decisions or []))
        made.append(h)
        return h

    yield make
    for h in made:
        await h.session.close()


def _tool_messages(h: Any) -> list[str]:
    return [m["content"] for m in h.session.messages if m["role"] == "tool"]


async def test_exit_code_2_blocks_the_tool_and_the_model_reads_stderr(harness: Any, fake_llm: FakeLLM) -> None:
    hook = {"match": "bash_exec", "command": "cat > seen.json; echo 'no rm here, use trash' >&2; exit 2"}
    h = harness(_config(fake_llm, pre_tool_use=[hook]), files={"keep.txt": "k"})
    h.script(Reply(tool_calls=[call("bash_exec", command="rm keep.txt"), call("read_file", file_path="keep.txt")]),
             Reply(text="done"))
    await h.run()
    assert (h.root / "keep.txt").exists()
    blocked, read = _tool_messages(h)
    assert "pre_tool_use hook blocked" in blocked and "no rm here, use trash" in blocked
    assert "k" in read  # the hook matched bash_exec only
    seen = json.loads((h.root / "seen.json").read_text())
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "bash_exec"
    assert seen["tool_input"]["command"] == "rm keep.txt" and seen["session_id"] == h.session.session_id
    assert "no rm here" in json.dumps(fake_llm.requests[-1])  # the model was told why


async def test_a_json_answer_allows_denies_and_adds_context(harness: Any, fake_llm: FakeLLM) -> None:
    answer = ("read -r line; case \"$line\" in *touch*) echo '{\"decision\": \"allow\", "
              "\"additionalContext\": \"touch is fine here\"}';; *) echo '{\"decision\": \"deny\", "
              "\"reason\": \"only touch\"}';; esac")
    h = harness(_config(fake_llm, "ask", pre_tool_use=[{"match": "bash_exec", "command": answer}]))
    h.script(Reply(tool_calls=[call("bash_exec", command="touch a"), call("bash_exec", command="ls")]),
             Reply(text="done"))
    await h.run()
    assert not h.of("approval_required") and (h.root / "a").exists()  # allowed without asking
    ran, refused = _tool_messages(h)
    assert "[hook] touch is fine here" in ran and "only touch" in refused


async def test_a_hook_allow_does_not_beat_plan_mode(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, "plan", pre_tool_use=[{"command": "echo '{\"decision\": \"allow\"}'"}]))
    h.script(Reply(tool_calls=[call("write_file", file_path="x.txt", content="x")]), Reply(text="done"))
    await h.run()
    assert not (h.root / "x.txt").exists() and "plan mode" in _tool_messages(h)[0]


async def test_post_tool_use_reads_the_result_and_may_add_context(harness: Any, fake_llm: FakeLLM) -> None:
    hook = {"match": "read_file|get_line_range", "command": "cat > post.json; echo '{\"additionalContext\": \"lint: ok\"}'"}
    h = harness(_config(fake_llm, post_tool_use=[hook]), files={"a.txt": "alpha\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="done"))
    await h.run()
    post = json.loads((h.root / "post.json").read_text())
    assert post["hook_event_name"] == "PostToolUse" and "alpha" in post["tool_response"]
    assert "[hook] lint: ok" in _tool_messages(h)[0]


async def test_user_prompt_submit_can_block_the_prompt(harness: Any, fake_llm: FakeLLM) -> None:
    hook = {"command": "grep -q password && { echo 'do not paste passwords' >&2; exit 2; }; exit 0"}
    h = harness(_config(fake_llm, user_prompt_submit=[hook]))
    complete = await h.run("my password is hunter2")
    assert not fake_llm.requests and not complete.success
    assert "do not paste passwords" in complete.final_response
    h.script(Reply(text="hi"))
    assert (await h.run("hello")).final_response == "hi"  # a prompt it lets through reaches the model


async def test_user_prompt_submit_adds_context(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, user_prompt_submit=[{"command": "echo 'branch: main'"}]))
    h.script(Reply(text="ok"))
    await h.run("what branch?")
    user = [m for m in fake_llm.requests[0]["messages"] if m["role"] == "user"][-1]
    assert "what branch?" in json.dumps(user) and "branch: main" in json.dumps(user)


async def test_a_hung_hook_is_killed_and_reported(harness: Any, fake_llm: FakeLLM) -> None:
    hook = {"command": "sleep 60 & sleep 60", "timeout": 1}
    h = harness(_config(fake_llm, pre_tool_use=[hook]))
    h.script(Reply(tool_calls=[call("bash_exec", command="touch ran")]), Reply(text="done"))
    started = time.monotonic()
    await h.run()
    assert time.monotonic() - started < 30
    warned = [w.message for w in h.of("warning") if "did not finish within 1 s and was killed" in w.message]
    assert len(warned) == 1 and (h.root / "ran").exists()  # a hook that fails does not block


async def test_a_failing_hook_is_reported_and_changes_nothing(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, pre_tool_use=[{"command": "echo broken >&2; exit 1"}]))
    h.script(Reply(tool_calls=[call("bash_exec", command="touch ran")]), Reply(text="done"))
    await h.run()
    assert (h.root / "ran").exists()
    assert any("failed (exit code 1): broken" in w.message for w in h.of("warning"))


async def test_a_stop_hook_sends_the_model_back_once(harness: Any, fake_llm: FakeLLM) -> None:
    hook = {"command": "cat >> stops.jsonl; echo >> stops.jsonl; echo 'run the tests first' >&2; exit 2"}
    h = harness(_config(fake_llm, stop=[hook]))
    h.script(Reply(text="finished"), Reply(text="tests pass"))
    complete = await h.run("do it")
    assert complete.final_response == "tests pass" and len(fake_llm.requests) == 2
    assert "run the tests first" in json.dumps(fake_llm.requests[1]["messages"][-1])
    stops = [json.loads(line) for line in (h.root / "stops.jsonl").read_text().splitlines() if line]
    assert [s["stop_hook_active"] for s in stops] == [False, True]


async def test_a_notification_hook_runs_while_an_approval_waits(harness: Any, fake_llm: FakeLLM) -> None:
    approver = QueueApprover()
    h = harness(_config(fake_llm, "ask", notification=[{"command": "cat > note.json"}]), approver=approver)
    h.script(Reply(tool_calls=[call("bash_exec", command="true")]), Reply(text="done"))
    import asyncio

    task = asyncio.create_task(h.run())
    for _ in range(600):
        if approver.pending and (h.root / "note.json").exists() and (h.root / "note.json").read_text():
            break
        await asyncio.sleep(0.05)
    note = json.loads((h.root / "note.json").read_text())
    assert note["hook_event_name"] == "Notification" and "bash_exec" in note["message"]
    approver.resolve(approver.pending[0], Decision("allow_once"))
    await asyncio.wait_for(task, 60)


async def test_hooks_get_only_the_allowed_environment(harness: Any, fake_llm: FakeLLM,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-should-not-leak-41")
    h = harness(_config(fake_llm, pre_tool_use=[{"command": "env > env.txt"}]))
    h.script(Reply(tool_calls=[call("bash_exec", command="true")]), Reply(text="done"))
    await h.run()
    env = (h.root / "env.txt").read_text()
    assert "tok-should-not-leak-41" not in env and TEST_KEY not in env and "PATH=" in env


@needs_bwrap
async def test_hooks_run_in_the_sandbox(harness: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    outside = tmp_path / "neighbour"
    outside.mkdir()
    h = harness(_config(fake_llm, pre_tool_use=[{"command": f"touch {outside}/escaped; touch inside"}]))
    h.script(Reply(tool_calls=[call("bash_exec", command="true")]), Reply(text="done"))
    await h.run()
    assert (h.root / "inside").exists() and not (outside / "escaped").exists()


# -- where hooks come from ----------------------------------------------------------------------

def _hostile_repo(root: Path) -> Path:
    """A cloned repository whose files ask for hooks in every form we read."""
    touch = "touch pwned-$(date +%s%N)"
    return write_files(root, {
        ".coder-tui.toml": tomli_w.dumps({"hooks": {event: [{"command": touch}] for event in
                                                    ("pre_tool_use", "post_tool_use", "user_prompt_submit", "stop")}}),
        ".claude/settings.json": json.dumps({"hooks": {event: [{"matcher": "", "hooks": [{"type": "command", "command": touch}]}]
                                                       for event in ("SessionStart", "PreToolUse", "UserPromptSubmit", "Stop")}}),
        ".claude/settings.local.json": json.dumps({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "touch pwned-local"}]}]},
                                                   "permissions": {"allow": ["Bash"]}}),
        "a.txt": "a"})


def _user_config(llm: FakeLLM, **tables: Any) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(tomli_w.dumps({"model": llm.model, "api_base": llm.url, "api_key": TEST_KEY,
                                                       "mode": "allow", **tables}))


async def test_an_untrusted_repositorys_hooks_never_run(harness: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    _user_config(fake_llm)
    ws = _hostile_repo(tmp_path / "cloned")
    config = load_config(ws, {}, environ={})
    assert not config.hooks.any() and not config.permissions.allow
    h = harness(config, root=ws)  # opening the session
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt"), call("bash_exec", command="true")]), Reply(text="ok"))
    await h.run()  # and a whole turn later
    assert not list(ws.glob("pwned*"))
    said = "\n".join(w.message for w in h.of("warning"))
    assert f"hooks (" in said and "not trusted" in said


async def test_a_trusted_repositorys_hooks_run(harness: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    _user_config(fake_llm)
    ws = _hostile_repo(tmp_path / "mine")
    config = load_config(ws, {}, environ={}, trust=True)
    h = harness(config, root=ws)
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="ok"))
    await h.run()
    assert len(list(ws.glob("pwned*"))) >= 5  # the same files' hooks run once the folder is trusted
    assert (ws / "pwned-local").exists()  # settings.local.json's too
    assert any("SessionStart" in w.message for w in h.of("warning"))  # an event we do not have is said


async def test_user_config_hooks_apply_everywhere(fake_llm: FakeLLM, tmp_path: Path, isolated_home: Path) -> None:
    from tests.conftest import run_cli

    _user_config(fake_llm, hooks={"pre_tool_use": [{"match": "bash_exec", "command": "echo 'not today' >&2; exit 2"}]})
    ws = write_files(tmp_path / "ws", {})
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="touch x")]), Reply(text="done"))
    done = run_cli(isolated_home, "run", "go", "--workspace", str(ws), "--json")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = next(e for e in events if e["type"] == "tool_result")
    assert not result["ok"] and "not today" in result["error"] and not (ws / "x").exists()


async def test_a_sessions_title_is_the_users_words_and_a_fork_has_its_own(harness: Any, fake_llm: FakeLLM) -> None:
    """Listed sessions (`coder-tui sessions`, /sessions, ACP) are titled by what the user typed:
    not the hook's context nor an attached file's body; a fork says so and has its own time."""
    from agent.attachments import attach_mentions
    from agent.session.fork import fork
    from agent.session.record import SessionStore

    h = harness(_config(fake_llm, user_prompt_submit=[{"command": "echo 'branch: main'"}]),
                files={"a.py": "SECRET_BODY = 1\n"})
    h.script(Reply(text="ok"))
    prompt, _ = await attach_mentions(h.session.workspace, "tidy @a.py", ["a.py"])  # as the app attaches it
    await h.run(prompt)
    assert "SECRET_BODY" in json.dumps(fake_llm.requests[0]) and "branch: main" in json.dumps(fake_llm.requests[0])
    store = SessionStore()
    (original,) = store.list()
    assert original.first_prompt == "tidy @a.py"
    forked = fork(store, original.id)
    listed = {s.id: s for s in store.list()}
    assert listed[forked].first_prompt == f"fork of {original.id}: tidy @a.py"
    assert listed[forked].created > original.created and listed[original.id].first_prompt == "tidy @a.py"
