"""Custom commands in every front end: `coder-tui run "/name args"`, `serve` (a message starting
with /name) and `acp` (advertised with `available_commands_update`, run as a prompt)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent import paths
from tests.acp.test_acp import open_session
from tests.conftest import TEST_KEY, run_cli, write_files
from tests.custom.test_commands import REVIEW
from tests.fakellm import FakeLLM, Reply


def _user_commands(files: dict[str, str]) -> None:
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    write_files(paths.config_dir() / "commands", files)


def test_run_expands_a_command_and_a_trusted_workspaces_own(isolated_home: Path, fake_llm: FakeLLM,
                                                             tmp_path: Path) -> None:
    ws = write_files(tmp_path / "ws", {".claude/commands/review-pr.md": REVIEW})
    assert run_cli(isolated_home, "trust", str(ws)).returncode == 0
    fake_llm.script(Reply(text="done"))
    done = run_cli(isolated_home, "run", "/review-pr 7 low bob", "--workspace", str(ws), "--model", fake_llm.model,
                   "--api-base", fake_llm.url, "--api-key", TEST_KEY, "--json")
    assert done.returncode == 0, done.stderr
    user = fake_llm.requests[0]["messages"][-1]["content"]
    assert user.startswith("Review PR #7 with priority low and assign to bob.")


def test_serve_expands_a_message_that_starts_with_a_command(make_serve: Any, isolated_home: Path) -> None:
    _user_commands({"git/summary.md": "---\ndescription: Summarise\n---\nSummarise the changes in $1."})
    serve = make_serve(files={"a.py": "x = 1\n"})
    serve.llm.script(Reply(text="summary"))
    response, events = serve.chat("/git:summary a.py")
    assert response.status_code == 200
    assert serve.llm.requests[0]["messages"][-1]["content"] == "Summarise the changes in a.py."


async def test_acp_advertises_the_commands_and_runs_one(acp_client: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    _user_commands({"review-pr.md": REVIEW, "tidy.md": "Tidy $ARGUMENTS"})
    root = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    client = await acp_client()
    sid = await open_session(client, root)
    update = await client.wait_for(lambda e: e.get("event") == "update" and e["sessionId"] == sid
                                   and e["update"]["sessionUpdate"] == "available_commands_update")
    commands = update["update"]["availableCommands"]
    assert [c["name"] for c in commands] == ["review-pr", "tidy"]
    assert commands[0]["description"] == "Review pull request"
    assert commands[0]["input"] == {"hint": "[pr-number] [priority] [assignee]"}
    fake_llm.script(Reply(text="ok"))
    await client.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/tidy a.py"}]})
    assert fake_llm.requests[0]["messages"][-1]["content"] == "Tidy a.py"
    json.dumps(commands)


def test_run_refuses_a_command_it_does_not_know_as_the_app_does(isolated_home: Path, fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    _user_commands({"review-pr.md": REVIEW})
    ws = write_files(tmp_path / "ws", {"a.py": "x = 1\n"})
    model = ["--workspace", str(ws), "--model", fake_llm.model, "--api-base", fake_llm.url, "--api-key", TEST_KEY]
    unknown = run_cli(isolated_home, "run", "/nosuchcmd foo", *model)
    assert unknown.returncode == 2, unknown.stderr
    assert unknown.stderr == "coder-tui: error: unknown command /nosuchcmd (custom commands: /review-pr)\n"
    builtin = run_cli(isolated_home, "run", "/help", *model)
    assert builtin.returncode == 2 and "/help is a command of the app" in builtin.stderr
    assert fake_llm.requests == [] and unknown.stdout == builtin.stdout == ""
    fake_llm.script(Reply(text="It has a typo."))
    path = run_cli(isolated_home, "run", "/etc/hosts is wrong", *model, "--mode", "allow")  # text, not a command
    assert path.returncode == 0, path.stderr
    assert fake_llm.requests[0]["messages"][-1]["content"] == "/etc/hosts is wrong"
