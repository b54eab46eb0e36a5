"""Checkpoints and undo (edits and shell changes, git and non-git), sessions and resume."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.checkpoints import CheckpointError, Checkpoints
from agent.session.record import SessionStore, load
from tests.conftest import TEST_KEY
from tests.fakellm import Reply, call


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("original\n")
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("dep\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return root


@pytest.mark.parametrize("with_git", [True, False])
async def test_undo_restores_edits_and_shell_changes(make_harness: Any, git_repo: Path, with_git: bool) -> None:
    if not with_git:
        subprocess.run(["rm", "-rf", str(git_repo / ".git")], check=True)
    else:
        head, index = _git(git_repo, "rev-parse", "HEAD"), (git_repo / ".git" / "index").read_bytes()
    h = make_harness(root=git_repo)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="edited\n"),
                               call("bash_exec", command="echo made > made.txt && rm .gitignore")]),
             Reply(text="done"))
    await h.run("change things")
    checkpoint = h.of("checkpoint")
    assert len(checkpoint) == 1 and "before write_file a.txt" in checkpoint[0].label
    assert h.read("a.txt") == "edited\n" and (git_repo / "made.txt").exists()
    restored, saved = await h.session.undo()
    assert restored.id == checkpoint[0].id
    assert h.read("a.txt") == "original\n" and not (git_repo / "made.txt").exists()
    assert (git_repo / ".gitignore").exists() and (git_repo / "node_modules" / "dep.js").exists()
    if with_git:  # the user's repository was never touched
        assert _git(git_repo, "rev-parse", "HEAD") == head
        assert (git_repo / ".git" / "index").read_bytes() == index
        assert _git(git_repo, "status", "--porcelain") == ""
    await h.session.undo(saved.id)  # the restore itself can be undone
    assert h.read("a.txt") == "edited\n" and (git_repo / "made.txt").exists()


async def test_undo_keeps_files_the_agent_never_touched(make_harness: Any, git_repo: Path) -> None:
    h = make_harness(root=git_repo)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="edited\n"),
                               call("bash_exec", command="mkdir -p gen && echo made > gen/made.txt")]),
             Reply(text="done"))
    await h.run("change things")
    (git_repo / "newfile.txt").write_text("mine\n")  # by hand, after the run
    (git_repo / "a.txt").write_text("edited\nand my line\n")  # a hand edit on top of the agent's
    assert await asyncio.to_thread(h.session.checkpoints.untouched) == ["newfile.txt"]
    await h.session.undo()
    assert h.read("a.txt") == "original\n" and not (git_repo / "gen").exists()
    assert h.read("newfile.txt") == "mine\n"
    first = h.of("checkpoint")[0].id
    await h.session.undo(first, include_untouched=True)  # confirmed: the hand-made file goes too
    assert not (git_repo / "newfile.txt").exists() and h.read("a.txt") == "original\n"


async def test_one_checkpoint_per_model_turn(make_harness: Any, git_repo: Path) -> None:
    h = make_harness(root=git_repo)
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="1\n"),
                               call("write_file", file_path="b.txt", content="2\n")]),
             Reply(tool_calls=[call("write_file", file_path="a.txt", content="3\n")]),
             Reply(text="done"))
    await h.run()
    labels = [c.label for c in h.of("checkpoint")]
    assert len(labels) == 2 and labels[0].startswith("step 1:") and labels[1].startswith("step 2:")
    await h.session.undo()
    assert h.read("a.txt") == "1\n"
    await h.session.undo()
    assert h.read("a.txt") == "original\n" and not (git_repo / "b.txt").exists()
    with pytest.raises(CheckpointError, match="nothing to undo"):
        await h.session.undo()


def test_undo_command_lists_and_restores(git_repo: Path, isolated_home: Path) -> None:
    from tests.conftest import cli, cli_env

    checkpoints = Checkpoints(git_repo)
    first = checkpoints.create_sync("before step 1")
    (git_repo / "a.txt").write_text("changed\n")
    checkpoints.note_touched_sync(["a.txt"])  # the agent's change
    (git_repo / "newfile.txt").write_text("made by hand\n")  # the user's, since the checkpoint
    (git_repo / "logo.png").write_bytes(b"\x89PNG by hand")
    env = cli_env(isolated_home)
    listing = subprocess.run(cli("undo", "--list", "--workspace", str(git_repo)), env=env, capture_output=True, text=True)
    assert listing.returncode == 0 and first.id in listing.stdout and "before step 1" in listing.stdout
    done = subprocess.run(cli("undo", "--workspace", str(git_repo)), env=env, capture_output=True, text=True)
    assert done.returncode == 0 and f"restored checkpoint {first.id}" in done.stdout
    assert (git_repo / "a.txt").read_text() == "original\n"
    assert (git_repo / "newfile.txt").read_text() == "made by hand\n" and (git_repo / "logo.png").exists()
    assert f"kept 2 file(s) the agent never touched: logo.png, newfile.txt (`coder-tui undo {first.id} " \
           "--include-untracked` restores them too)" in done.stdout
    done = subprocess.run(cli("undo", first.id, "--include-untracked", "--workspace", str(git_repo)), env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and not (git_repo / "newfile.txt").exists() and not (git_repo / "logo.png").exists()
    bad = subprocess.run(cli("undo", "zzzz", "--workspace", str(git_repo)), env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "no checkpoint 'zzzz'" in bad.stderr and "Traceback" not in bad.stderr


async def test_resume_continues_the_conversation_and_plan(make_harness: Any, tmp_path: Path) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("todo_write", todos=[{"id": "1", "content": "step", "status": "in_progress"}])]),
             Reply(text="first answer"))
    await h.run("first prompt")
    session_id = h.session.session_id
    await h.session.close()
    h2 = make_harness(resume=session_id)
    h2.script(Reply(text="second answer"))
    await h2.run("second prompt")
    assert h2.session.session_id == session_id and h2.session.todos[0].content == "step"
    sent = [m.get("content") for m in h.llm.requests[-1]["messages"] if m["role"] in ("user", "assistant")]
    assert sent == ["first prompt", None, "first answer", "second prompt"]
    await h2.session.close()  # one writer per session: a second opener is refused while it is open
    h3 = make_harness(resume="last")
    assert h3.session.session_id == session_id
    assert h3.session.totals.prompt_tokens > 0


async def test_truncated_session_file_loads_its_complete_lines(make_harness: Any) -> None:
    h = make_harness(files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="a.txt")]), Reply(text="answer"))
    await h.run("prompt")
    path = h.session.writer.path
    await h.session.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])  # cut the last line in the middle
    loaded = load(path)
    assert loaded.damaged_lines == 1 and loaded.messages[0]["content"] == "prompt"
    h2 = make_harness(resume=h.session.session_id)
    h2.script(Reply(text="after crash"))
    assert (await h2.run("again")).final_response == "after crash"
    for line in path.read_text().splitlines():
        json.loads(line)  # appending dropped the partial tail


async def test_interrupted_tool_calls_get_results_on_resume(make_harness: Any) -> None:
    h = make_harness()
    writer = h.session.writer
    writer.message({"role": "user", "content": "go"})
    writer.message({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]})
    await h.session.close()
    h2 = make_harness(resume=h.session.session_id)
    h2.script(Reply(text="ok"))
    await h2.run("continue")
    roles = [(m["role"], m.get("tool_call_id")) for m in h.llm.requests[-1]["messages"][1:]]
    assert roles == [("user", None), ("assistant", None), ("tool", "c1"), ("user", None)]


async def test_secrets_never_reach_session_files_or_events(make_harness: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEAKY_TOKEN", "ghp_" + "A" * 36)
    h = make_harness(files={"config.txt": f"api_key = {TEST_KEY}\n"})
    h.script(Reply(tool_calls=[call("read_file", file_path="config.txt"),
                               call("bash_exec", command="echo ghp_" + "B" * 36)]),
             Reply(text="done"))
    await h.run()
    text = h.session.writer.path.read_text()
    events = "".join(e.model_dump_json() for e in h.events)
    for blob in (text, events):
        assert TEST_KEY not in blob and "ghp_" + "B" * 36 not in blob
        assert "[redacted]" in blob


def test_sessions_command_lists_newest_first(isolated_home: Path) -> None:
    from tests.conftest import cli, cli_env

    store = SessionStore()
    for prompt in ("first task", "second task"):
        writer = store.create({"workspace": "/tmp/w"})
        writer.message({"role": "user", "content": prompt})
        writer.close()
    out = subprocess.run(cli("sessions"), env=cli_env(isolated_home), capture_output=True, text=True).stdout
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].endswith("/tmp/w  second task") and lines[1].endswith("first task")
