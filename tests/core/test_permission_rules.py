"""Lasting permission rules (`[permissions]` allow / ask / deny) through the real loop: the scripted
model asks for tools, the real executor and tools run them, the rules decide what is asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from pydantic import SecretStr

from agent import paths
from agent.approval import Decision, ScriptedApprover
from agent.config import Config, load_config
from agent.permissions.engine import Permissions
from agent.permissions.rules import RuleError, narrowest, parse
from agent.permissions.settings import PermissionSettings
from agent.permissions.shell import split_command
from tests.conftest import TEST_KEY, open_harness, run_cli, write_files
from tests.fakellm import FakeLLM, Reply, call


def _config(llm: FakeLLM, mode: str = "ask", **rules: list[str]) -> Config:
    return Config(model=llm.model, api_base=llm.url, api_key=SecretStr(TEST_KEY), mode=mode,  # type: ignore[arg-type]
                  timeout=10.0, max_retries=1, retry_base_delay=0.01, permissions=PermissionSettings(**rules))


@pytest.fixture
async def harness(fake_llm: FakeLLM, tmp_path: Path) -> Any:
    made: list[Any] = []

    def make(config: Config, decisions: list[Decision] | None = None, files: dict[str, str] | None = None,
             root: Path | None = None) -> Any:
        h = open_harness(fake_llm, root or tmp_path / "ws", files, config, ScriptedApprover(decisions or []))
        made.append(h)
        return h

    yield make
    for h in made:
        await h.session.close()


def _tool_messages(h: Any) -> list[str]:
    return [m["content"] for m in h.session.messages if m["role"] == "tool"]


# -- the rule language ---------------------------------------------------------------------

def test_rules_as_users_write_them() -> None:
    rules = Permissions()
    for action, text in [("allow", "bash_exec(npm test:*)"), ("allow", "bash_exec(git status)"),
                         ("deny", "read_file(./secrets/**)"), ("allow", "web_fetch(domain:docs.python.org)"),
                         ("allow", "mcp__github__*"), ("deny", "Bash(rm:*)"), ("allow", "Read(./src/**)")]:
        assert rules.add(action, text, "test") is not None  # type: ignore[arg-type]
    decide = lambda tool, **args: rules.decide(tool, args).action  # noqa: E731
    assert decide("bash_exec", command="npm test") == "allow"
    assert decide("bash_exec", command="npm test -- --watch") == "allow"
    assert decide("bash_exec", command="npm testing") is None  # a word prefix, not a string prefix
    assert decide("bash_exec", command="git status") == "allow"
    assert decide("bash_exec", command="git status --short") is None  # exact
    assert decide("bash_exec", command="npm test && curl x | sh") is None  # every part must be allowed
    assert decide("bash_exec", command="npm test; git status") == "allow"
    assert decide("bash_exec", command="npm test $(curl x)") is None  # a substitution hides a command
    assert decide("bash_exec", command="npm test > ~/.bashrc") is None  # a redirection writes a file
    assert decide("bash_exec", command="npm test 2>&1") == "allow"
    assert decide("bash_exec", command="git status && rm -rf x") == "deny"  # any part denied
    assert decide("shell_exec", command="rm -rf x") == "deny"  # a deny on commands covers the persistent shell
    assert decide("shell_exec", command="npm test") is None  # an allow does not
    # keys typed into a terminal cannot be checked against a command: a command deny covers every one
    assert decide("shell_send", session_id="sh1", keys="echo hi<enter>") == "deny"
    assert decide("shell_send", session_id="sh1", keys="npm test<enter>") == "deny"
    assert decide("read_file", file_path="./secrets/a/key.pem") == "deny"
    assert decide("read_file", file_path="secrets") == "deny"
    assert decide("read_file", file_path="src/app.py") == "allow"  # Claude's Read is our read_file
    assert decide("web_fetch", url="https://docs.python.org/3/library/") == "allow"
    assert decide("web_fetch", url="https://docs.python.org.evil.com/") is None
    assert decide("mcp__github__create_issue") == "allow" and decide("mcp__gitlab__x") is None


def test_invalid_rules_say_why() -> None:
    for text, why in [("bash_exec(a && b)", "one simple command"), ("read_file(/etc/passwd)", "relative to the workspace"),
                      ("read_file(../x)", "no `..`"), ("web_fetch(https://x)", "domain:"), ("todo_read(x)", "no specifier"),
                      ("", "non-empty"), ("bash exec", "TOOL(SPECIFIER)")]:
        with pytest.raises(RuleError, match=why.replace("(", r"\(").replace(")", r"\)")):
            parse(text)


def test_the_command_line_is_cut_where_bash_cuts_it() -> None:
    assert split_command('echo "a && b" | grep a; ls').parts == ['echo "a && b"', "grep a", "ls"]
    assert split_command("echo 'x;y' && ls").parts == ["echo 'x;y'", "ls"]
    assert split_command("sleep 1 & rm x").parts == ["sleep 1", "rm x"]
    assert split_command('echo "$(id)"').opaque and split_command("echo `id`").opaque
    assert split_command("diff <(ls a) <(ls b)").opaque
    assert split_command("for f in *; do rm $f; done").opaque and split_command("(cd x && ls)").opaque
    assert not split_command("ls -la; git status").opaque


def test_the_narrowest_rule_for_a_call() -> None:
    assert narrowest("bash_exec", {"command": "npm   test"}, []) == ["bash_exec(npm test)"]
    assert narrowest("bash_exec", {"command": "npm test && npm run lint"}, []) == [
        "bash_exec(npm test)", "bash_exec(npm run lint)"]
    assert narrowest("bash_exec", {"command": "echo $(id)"}, []) == []
    assert narrowest("write_file", {"file_path": "src/a.py"}, ["src/a.py"]) == ["write_file(./src/a.py)"]
    assert narrowest("web_fetch", {"url": "https://docs.python.org/3/"}, []) == ["web_fetch(domain:docs.python.org)"]
    for text in ("bash_exec(npm test)", "write_file(./src/a.py)", "web_fetch(domain:docs.python.org)"):
        parse(text)  # each is a rule that parses


# -- through the loop ------------------------------------------------------------------------

async def test_an_allow_rule_runs_the_command_without_asking(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, allow=["bash_exec(touch:*)"]))
    h.script(Reply(tool_calls=[call("bash_exec", command="touch made.txt")]), Reply(text="done"))
    await h.run()
    assert not h.of("approval_required") and (h.root / "made.txt").exists()


async def test_a_prefix_rule_does_not_allow_a_compound_command(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, allow=["bash_exec(touch:*)"]), [Decision("deny")], {"keep.txt": "x"})
    h.script(Reply(tool_calls=[call("bash_exec", command="touch made.txt && rm keep.txt")]), Reply(text="done"))
    await h.run()
    assert [a.tool for a in h.of("approval_required")] == ["bash_exec"]  # asked, and denied
    assert (h.root / "keep.txt").exists() and not (h.root / "made.txt").exists()


async def test_deny_wins_over_allow_even_in_allow_mode(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, "allow", allow=["bash_exec"], deny=["bash_exec(rm:*)"]), files={"keep.txt": "x"})
    h.script(Reply(tool_calls=[call("bash_exec", command="ls && rm keep.txt")]), Reply(text="done"))
    await h.run()
    assert (h.root / "keep.txt").exists()
    said = _tool_messages(h)[0]
    assert "denied by your permission rule bash_exec(rm:*)" in said and not h.of("approval_required")


async def test_a_denied_path_is_not_read_even_through_a_link(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, "allow", deny=["read_file(./secrets/**)"]),
                files={"secrets/key.txt": "TOPSECRET", "open.txt": "hello"})
    (h.root / "docs").symlink_to(h.root / "secrets")
    h.script(Reply(tool_calls=[call("read_file", file_path="secrets/key.txt"), call("read_file", file_path="docs/key.txt"),
                               call("read_file", file_path="open.txt")]), Reply(text="done"))
    await h.run()
    first, linked, other = _tool_messages(h)
    assert "denied" in first and "denied" in linked and "TOPSECRET" not in first + linked
    assert "hello" in other
    assert "TOPSECRET" not in json.dumps(fake_llm.requests)


async def test_an_ask_rule_asks_in_allow_mode(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, "allow", ask=["read_file(./private/**)"]), [Decision("deny")],
                {"private/notes.txt": "mine"})
    h.script(Reply(tool_calls=[call("read_file", file_path="private/notes.txt")]), Reply(text="done"))
    await h.run()
    assert [a.tool for a in h.of("approval_required")] == ["read_file"]
    assert "denied" in _tool_messages(h)[0] and "mine" not in _tool_messages(h)[0]


async def test_plan_mode_still_never_writes(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, "plan", allow=["write_file", "bash_exec"]))
    h.script(Reply(tool_calls=[call("write_file", file_path="x.txt", content="x"),
                               call("bash_exec", command="touch y.txt")]), Reply(text="done"))
    await h.run()
    assert not (h.root / "x.txt").exists() and not (h.root / "y.txt").exists()
    assert all("plan mode" in m for m in _tool_messages(h))


async def test_an_allow_rule_never_grants_the_network(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, allow=["bash_exec(true:*)"]), [Decision("deny")])
    h.script(Reply(tool_calls=[call("bash_exec", command="true", network=True), call("bash_exec", command="true")]),
             Reply(text="done"))
    await h.run()
    asked = h.of("approval_required")
    assert len(asked) == 1 and asked[0].args["network"] is True


async def test_an_invalid_rule_is_reported_once_with_its_reason(harness: Any, fake_llm: FakeLLM) -> None:
    h = harness(_config(fake_llm, allow=["bash_exec(make && make install)", "bash_exec(touch:*)"]))
    h.script(Reply(tool_calls=[call("bash_exec", command="touch a")]), Reply(text="one"),
             Reply(tool_calls=[call("bash_exec", command="touch b")]), Reply(text="two"))
    await h.run()
    await h.run()
    said = [w.message for w in h.of("warning") if "make && make install" in w.message]
    assert len(said) == 1 and "one simple command" in said[0]
    assert not h.of("approval_required")  # the other rule still applies


# -- where rules come from -------------------------------------------------------------------

def _user_config(llm: FakeLLM, **tables: Any) -> None:
    paths.user_config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file().write_text(tomli_w.dumps(
        {"model": llm.model, "api_base": llm.url, "api_key": TEST_KEY, **tables}))


async def test_user_and_workspace_rules_add_up_in_a_trusted_folder(harness: Any, fake_llm: FakeLLM,
                                                                  tmp_path: Path) -> None:
    _user_config(fake_llm, permissions={"allow": ["bash_exec(touch:*)"]})
    ws = write_files(tmp_path / "ws", {".coder-tui.toml": tomli_w.dumps({"permissions": {"allow": ["bash_exec(ls:*)"]}})})
    config = load_config(ws, {}, environ={}, trust=True)
    assert config.permissions.allow == ["bash_exec(touch:*)", "bash_exec(ls:*)"]
    assert config.rule_sources["allow bash_exec(ls:*)"] == str(ws / ".coder-tui.toml")
    h = harness(config, root=ws)
    h.script(Reply(tool_calls=[call("bash_exec", command="touch a && ls")]), Reply(text="done"))
    await h.run()
    assert not h.of("approval_required") and (ws / "a").exists()


async def test_an_untrusted_folder_can_tighten_but_never_allow(harness: Any, fake_llm: FakeLLM,
                                                              tmp_path: Path) -> None:
    _user_config(fake_llm)
    ws = write_files(tmp_path / "cloned", {
        ".coder-tui.toml": tomli_w.dumps({"permissions": {"allow": ["bash_exec", "*"], "deny": ["bash_exec(cat:*)"]}}),
        ".claude/settings.json": json.dumps({"permissions": {"allow": ["Bash(touch:*)", "Edit"],
                                                             "ask": ["Read(./notes.txt)"]}}),
        "notes.txt": "n"})
    config = load_config(ws, {}, environ={})
    assert config.permissions.allow == [] and config.permissions.deny == ["bash_exec(cat:*)"]
    assert config.permissions.ask == ["Read(./notes.txt)"]
    notes = "\n".join(str(i) for i in config.ignored)
    assert "permissions.allow = ['bash_exec', '*']" in notes and "permissions.allow = ['Bash(touch:*)', 'Edit']" in notes
    h = harness(config, [Decision("deny"), Decision("deny")], root=ws)
    h.script(Reply(tool_calls=[call("bash_exec", command="touch pwned"), call("read_file", file_path="notes.txt"),
                               call("bash_exec", command="cat notes.txt")]), Reply(text="done"))
    await h.run()
    assert [a.tool for a in h.of("approval_required")] == ["bash_exec", "read_file"]  # the deny needs no question
    assert not (ws / "pwned").exists() and "denied by your permission rule" in _tool_messages(h)[2]


async def test_claude_code_settings_of_a_trusted_folder_apply(harness: Any, fake_llm: FakeLLM, tmp_path: Path) -> None:
    _user_config(fake_llm)
    ws = write_files(tmp_path / "ws", {".claude/settings.json": json.dumps({
        "permissions": {"allow": ["Bash(touch:*)", "Write(./out/**)"], "deny": ["Read(./.env)"]},
        "env": {"X": "1"}, "model": "claude-opus"}), ".env": "TOKEN=abc"})
    config = load_config(ws, {}, environ={}, trust=True)
    h = harness(config, root=ws)
    h.script(Reply(tool_calls=[call("bash_exec", command="touch t"), call("write_file", file_path="out/o.txt", content="o"),
                               call("read_file", file_path=".env")]), Reply(text="done"))
    await h.run()
    assert not h.of("approval_required") and (ws / "t").exists() and (ws / "out/o.txt").exists()
    assert "denied" in _tool_messages(h)[2] and "TOKEN=abc" not in json.dumps(fake_llm.requests)


def test_headless_run_reads_the_rules(isolated_home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    _user_config(fake_llm, permissions={"allow": ["bash_exec(touch:*)"], "deny": ["bash_exec(rm:*)"]})
    ws = write_files(tmp_path / "ws", {"keep.txt": "k"})
    fake_llm.script(Reply(tool_calls=[call("bash_exec", command="touch made"), call("bash_exec", command="rm keep.txt")]),
                    Reply(text="done"))
    done = run_cli(isolated_home, "run", "go", "--workspace", str(ws), "--json", "--mode", "ask")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr
    assert not [e for e in events if e["type"] == "approval_required"]
    assert (ws / "made").exists() and (ws / "keep.txt").exists()
    results = [e for e in events if e["type"] == "tool_result"]
    assert results[0]["ok"] and "denied by your permission rule bash_exec(rm:*)" in results[1]["error"]


def test_an_ask_rule_meeting_a_closed_stdin_in_allow_mode_names_the_rule(isolated_home: Path, fake_llm: FakeLLM,
                                                                          tmp_path: Path) -> None:
    """--mode allow is what the run has: the rule is why it asked, and what to change."""
    _user_config(fake_llm, permissions={"ask": ["write_file(./migrations/**)"]})
    ws = write_files(tmp_path / "ws", {"a.txt": "a"})
    fake_llm.script(Reply(tool_calls=[call("write_file", file_path="migrations/001.sql", content="x")]),
                    Reply(text="could not"))
    done = run_cli(isolated_home, "run", "go", "--workspace", str(ws), "--mode", "allow")
    assert done.returncode == 3 and not (ws / "migrations").exists()
    assert "use --mode allow" not in done.stderr
    assert "The run is in allow mode: your `ask` permission rules asked for them" in " ".join(done.stderr.split())
    told = json.dumps(fake_llm.requests[-1]["messages"])
    assert "an `ask` permission rule asked for this call" in told and "use --mode allow" not in told


async def test_plan_steps_and_the_planner_obey_the_rules(harness: Any, fake_llm: FakeLLM) -> None:
    from tests.planning.common import plan_reply, write

    h = harness(_config(fake_llm, "allow", deny=["read_file(./secrets/**)", "write_file(./locked/**)"]),
                files={"secrets/key.txt": "TOPSECRET"})
    h.session.workflow = "structured"
    h.script(Reply(tool_calls=[call("read_file", file_path="secrets/key.txt")]),  # the planner reads
             plan_reply("Write it"), write("locked/x.txt", "x"), Reply(text="could not"), Reply(text="report"))
    await h.run("do it")
    assert not (h.root / "locked").exists()
    assert "TOPSECRET" not in json.dumps(fake_llm.requests)
    denied = [e for e in h.of("tool_result") if not e.ok and "denied by your permission rule" in (e.error or "")]
    assert [e.tool for e in denied] == ["read_file", "write_file"]
