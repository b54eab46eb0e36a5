"""Profiles: each profile and mode offers exactly its tools (seen in the scripted model's request
log), the stream agent answers once without tools, files are validated, workspace profiles are
untrusted config."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.profiles import ProfileError, load_profiles, read_profile, user_dir
from tests.fakellm import Reply, call
from tests.profiles.conftest import requested_tools

# issue 12's knowledge tools: the map and the task list are reads; scheduling and cancelling change
# what runs later, so they are exec tools (never offered in plan mode or to read-only profiles)
READS = {"read_file", "list_dir", "get_line_range", "search_code", "get_project_info", "todo_read", "todo_write",
         "get_codebase_map", "list_tasks", "scratchpad_write", "note_observation",
         "agent"}  # a subagent (agent/subagents) never has more than the profile and mode give its parent
EDITS = {"write_file", "patch_file", "multi_edit", "replace_lines", "insert_at_line", "delete_lines"}
EXECS = {"bash_exec", "shell_open", "shell_exec", "shell_close", "shell_send", "schedule_task", "cancel_task"}
EXPECTED = {
    ("coder", "allow"): READS | EDITS | EXECS | {"web_fetch"},
    ("coder", "ask"): READS | EDITS | EXECS | {"web_fetch"},
    ("coder", "plan"): READS,
    ("reviewer", "ask"): READS | {"git"},
    ("reviewer", "plan"): READS | {"git"},
    ("architect", "allow"): READS,
    ("ask", "allow"): set(),
}


@pytest.mark.parametrize(("profile", "mode"), sorted(EXPECTED))
async def test_each_profile_and_mode_offers_exactly_its_tools(make_session: Any, profile: str, mode: str) -> None:
    h = make_session(mode=mode, profile=profile)
    h.script(Reply(text="fine"))
    assert (await h.run("hello")).completion_reason == "answered"
    body = h.llm.requests[-1]
    assert requested_tools(body) == EXPECTED[(profile, mode)]
    system = body["messages"][0]["content"]
    assert (f"## Profile: {profile}" in system) == (profile != "coder")


async def test_architect_defaults_to_plan_mode_and_switching_profile_changes_the_offer(make_session: Any) -> None:
    h = make_session(mode="ask", profile="architect")
    assert h.session.mode == "plan"
    h.script(Reply(text="plan"), Reply(text="done"))
    await h.run("design it")
    h.session.agent.use_profile("coder")
    h.session.mode = "allow"
    await h.run("build it")
    first, second = h.llm.requests
    assert requested_tools(first) == READS and requested_tools(second) >= EDITS | EXECS


async def test_a_tool_outside_the_profile_is_refused_even_when_called(make_session: Any) -> None:
    h = make_session(mode="allow", profile="reviewer", files={"a.txt": "x\n"})
    h.script(Reply(tool_calls=[call("write_file", file_path="a.txt", content="y\n")]), Reply(text="sorry"))
    await h.run()
    result = h.of("tool_result")[0]
    assert not result.ok and "not offered to this agent" in result.error and "git" in result.error
    assert h.read("a.txt") == "x\n"


async def test_reviewer_runs_read_only_git_and_nothing_that_writes(make_session: Any, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    for args in (["init", "-q"], ["-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q", "--allow-empty",
                                   "-m", "first commit"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    (root / "a.py").write_text("print(1)\n")
    h = make_session(mode="ask", profile="reviewer", root=root)
    h.script(Reply(tool_calls=[call("git", args=["log", "--oneline"])]),
             Reply(tool_calls=[call("git", args=["commit", "-m", "x"])]),
             Reply(tool_calls=[call("git", args=["diff", "--output=out.txt"])]),
             Reply(tool_calls=[call("git", args=["branch", "evil"])]),
             Reply(tool_calls=[call("git", args=["diff", "--no-index", "/etc/hostname", "a.py"])]),
             Reply(tool_calls=[call("git", args=["diff", "--stat"])]),
             Reply(text="Verdict: fine."))
    complete = await h.run("review")
    assert complete.final_response == "Verdict: fine."
    results = h.of("tool_result")
    assert results[0].ok and "first commit" in results[0].output
    assert "git commit is not allowed" in results[1].error
    assert "'--output=out.txt' is not allowed" in results[2].error
    assert "creates refs" in results[3].error
    assert "'--no-index' is not allowed" in results[4].error
    assert results[5].ok and results[5].output.startswith("exit code: 0")
    assert not (root / "out.txt").exists() and not h.approver.requests  # reads: never asked
    branches = subprocess.run(["git", "branch", "--list"], cwd=root, capture_output=True, text=True).stdout
    assert "evil" not in branches


async def test_stream_profile_answers_once_without_tools(make_session: Any) -> None:
    h = make_session(profile="ask")
    h.script(Reply(text="It is 42.", tool_calls=[call("read_file", file_path="x")]))
    complete = await h.run("what is it?")
    assert (complete.completion_reason, complete.iterations, complete.final_response) == ("answered", 1, "It is 42.")
    assert len(h.llm.requests) == 1 and "tools" not in h.llm.requests[0]
    assert not h.of("tool_call")


def test_builtin_profiles() -> None:
    profiles = load_profiles(None).profiles
    assert set(profiles) >= {"coder", "reviewer", "architect", "ask"}
    assert profiles["ask"].agent == "stream" and profiles["architect"].mode == "plan"
    assert all(p.source == "built in" and p.description for p in profiles.values())


def test_user_and_workspace_profiles_and_prompt_files(tmp_path: Path) -> None:
    folder = user_dir()
    folder.mkdir(parents=True)
    (folder / "docs.toml").write_text('description = "writes docs"\nsystem_prompt_file = "docs.md"\n'
                                      'tools = ["read", "edit"]\nmax_cost = 0.5\n')
    (folder / "docs.md").write_text("Write documentation.\n")
    ws = tmp_path / "ws"
    (ws / ".coder-tui" / "profiles").mkdir(parents=True)
    (ws / ".coder-tui" / "profiles" / "coder.toml").write_text('description = "team coder"\n')
    profiles = load_profiles(ws, trusted=True).profiles
    assert profiles["docs"].name == "docs" and profiles["docs"].prompt_text() == "Write documentation."
    assert profiles["docs"].max_cost == 0.5 and profiles["docs"].source == str(folder / "docs.toml")
    assert profiles["coder"].description == "team coder"


@pytest.mark.parametrize(("text", "message"), [
    ('agent = "chain"\n', "field `agent`: Input should be 'iterative', 'stream' or 'react'"),
    ('tools = "read"\n', "field `tools`: Input should be a valid list"),
    ('max_steps = 0\n', "field `max_steps`: Input should be greater than or equal to 1"),
    ('colour = "red"\n', "field `colour`: Extra inputs are not permitted"),
    ('system_prompt_file = "missing.md"\n', "field `system_prompt_file`: cannot read"),
    ('name = [\n', "is not valid TOML"),
])
def test_invalid_profiles_name_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ProfileError) as caught:
        read_profile(path)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)


def test_untrusted_workspace_profiles_cannot_run_commands_or_raise_the_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    folder = ws / ".coder-tui" / "profiles"
    folder.mkdir(parents=True)
    (folder / "yolo.toml").write_text('mode = "allow"\ntools = ["read", "exec", "bash_exec", "edit"]\n')
    untrusted = load_profiles(ws, trusted=False)
    assert untrusted.profiles["yolo"].tools == ["read", "edit"] and untrusted.profiles["yolo"].mode is None
    said = [str(item) for item in untrusted.ignored]
    assert any(s.startswith("tools = ['exec', 'bash_exec'] in ") and "run commands" in s for s in said), said
    assert any(s.startswith("mode = 'allow' in ") and "raise the mode" in s for s in said), said
    trusted = load_profiles(ws, trusted=True)
    assert trusted.profiles["yolo"].mode == "allow" and not trusted.ignored


async def test_unknown_profile_is_a_clear_error_and_records_nothing(make_session: Any) -> None:
    from agent.session.record import SessionStore

    with pytest.raises(ProfileError, match="no profile 'nope'; known profiles: architect, ask, coder, reviewer"):
        make_session(profile="nope")
    assert SessionStore().list() == []


async def test_a_profile_prompt_gets_the_built_in_markers(make_session: Any) -> None:
    # seed 003: a profile's prompt may use {mode}, {facts} and {tools}; other braces stay as written
    folder = user_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs.toml").write_text('description = "writes docs"\ntools = ["read"]\nsystem_prompt = """'
                                      'Mode: {mode}. Tools: {tools}.\nFacts:\n{facts}\nKeep {this} and {{that}}."""\n')
    h = make_session(mode="ask", profile="docs")
    h.script(Reply(text="fine"))
    await h.run("hello")
    system = h.llm.requests[-1]["messages"][0]["content"]
    section = system.split("## Profile: docs\n", 1)[1]
    assert section.startswith("Mode: ask. Tools: ") and "read_file" in section.split("\n")[0]
    assert "write_file" not in section.split("\n")[0]  # the tools this profile is offered
    assert "- date: " in section and "Keep {this} and {{that}}." in section
