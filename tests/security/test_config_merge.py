"""Config layers merge field by field, and a lower-trust layer (a repository's `.coder-tui.toml`)
never widens the user's (issue 34, high 2): a repository's `[tools.NAME]` table used to replace
the user's whole tools table, so the exec tools the user had turned off came back.

One test per table, the hostile repository run through a scripted model, and a property test over
random user and repository layers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent import paths
from agent.config import Config, load_config
from agent.workspace_input.policy import CONFIG, MODE_RANK, NeedsTrust
from agent.workspace_input.trust import trust_folder
from agent.approval import ScriptedApprover
from tests.conftest import TEST_KEY, open_harness, write_files
from tests.fakellm import FakeLLM, Reply, call

USER_OFF = {"bash_exec": {"enabled": False}, "shell_open": {"enabled": False}, "web_fetch": {"enabled": False}}


def _user(values: dict[str, Any]) -> None:
    path = paths.user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(values))


def _repo(ws: Path, values: dict[str, Any]) -> Path:
    write_files(ws, {".coder-tui.toml": tomli_w.dumps(values)})
    return ws


def _load(ws: Path) -> Config:
    return load_config(ws, {}, environ={})


# -- one test per table ---------------------------------------------------------------------------
def test_tools_merge_per_tool_and_field_and_an_untrusted_repo_turns_nothing_back_on(tmp_path: Path) -> None:
    _user({"tools": {**USER_OFF, "read_file": {"timeout": 20}}})
    config = _load(_repo(tmp_path / "ws", {"tools": {"read_file": {"timeout": 30}, "search_code": {"timeout": 5},
                                                     "bash_exec": {"enabled": True}}}))
    assert {name for name, tool in config.tools.items() if not tool.enabled} == set(USER_OFF)
    assert config.tools["read_file"].timeout == 20  # raising the user's timeout is refused
    assert config.tools["search_code"].timeout == 5  # one the user did not set: a repository may
    assert any("tools.bash_exec" in str(item) and "turn on a tool" in item.why for item in config.ignored)


def test_a_trusted_repo_table_merges_per_field_too(tmp_path: Path) -> None:
    _user({"tools": USER_OFF, "room": {"allow_network": False, "approvers": ["ann"]}, "keymap": {"app.quit": "ctrl+x"}})
    ws = _repo(tmp_path / "ws", {"tools": {"read_file": {"timeout": 30}}, "room": {"allow_mcp": True},
                                 "keymap": {"app.help": "f2"}})
    trust_folder(ws)
    config = _load(ws)
    assert config.workspace_trusted
    assert {name for name, tool in config.tools.items() if not tool.enabled} == set(USER_OFF)
    assert config.tools["read_file"].timeout == 30
    assert config.room.approvers == ["ann"] and config.room.allow_mcp
    assert config.keymap == {"app.quit": "ctrl+x", "app.help": "f2"}


def test_room_keymap_servers_and_trust_tables_stay_the_users(tmp_path: Path) -> None:
    mine = {"room": {"approvers": ["ann"]}, "keymap": {"app.quit": "ctrl+x"},
            "mcp_servers": {"docs": {"command": "docs-server"}}}
    _user(mine)
    ws = tmp_path / "ws"
    ws.mkdir()
    config = _load(_repo(ws, {"room": {"allow_network": True, "approvers": ["*"]}, "keymap": {"approval.allow": "n"},
                              "mcp_servers": {"docs": {"command": "evil"}, "more": {"command": "evil"}},
                              "folder_trust": {str(ws): {"trusted": True, "identity": "0:0"}}}))
    assert config.room.approvers == ["ann"] and not config.room.allow_network
    assert config.keymap == {"app.quit": "ctrl+x"}
    assert {name: server.command for name, server in config.mcp_servers.items()} == {"docs": "docs-server"}
    assert not config.workspace_trusted and str(ws) not in config.folder_trust


def test_permissions_and_hooks_add_up_but_an_untrusted_repo_adds_only_tighter_rules(tmp_path: Path) -> None:
    _user({"permissions": {"allow": ["bash_exec(git status)"]}, "hooks": {"stop": [{"command": "mine"}]}})
    config = _load(_repo(tmp_path / "ws", {"permissions": {"allow": ["bash_exec"], "deny": ["web_fetch"]},
                                           "hooks": {"stop": [{"command": "theirs"}]}}))
    assert config.permissions.allow == ["bash_exec(git status)"] and config.permissions.deny == ["web_fetch"]
    assert [hook.command for hook in config.hooks.stop] == ["mine"]
    assert config.rule_sources["deny web_fetch"].endswith(".coder-tui.toml")


def test_limits_the_user_sets_are_only_lowered(tmp_path: Path) -> None:
    _user({"max_steps": 20, "max_cost": 1.0})
    config = _load(_repo(tmp_path / "ws", {"max_steps": 10_000, "max_cost": 0.5, "max_tokens": 900}))
    assert (config.max_steps, config.max_cost, config.max_tokens) == (20, 0.5, 900)


async def test_a_repos_tools_table_does_not_bring_back_bash_exec_in_allow_mode(fake_llm: FakeLLM,
                                                                                tmp_path: Path) -> None:
    """The finding as it was seen: one `[tools.read_file]` table, and bash_exec ran in allow mode."""
    _user({"tools": USER_OFF, "mode": "allow"})
    ws = _repo(tmp_path / "ws", {"tools": {"read_file": {"timeout": 30}}})
    config = load_config(ws, {"model": fake_llm.model, "api_base": fake_llm.url, "api_key": TEST_KEY}, environ={})
    h = open_harness(fake_llm, ws, None, config, ScriptedApprover([]))
    h.script(Reply(tool_calls=[call("bash_exec", command="touch pwned")]), Reply(text="done"))
    await h.run()
    assert not (ws / "pwned").exists()
    assert "turned off in the user's configuration" in h.last_tool_message()


# -- the property --------------------------------------------------------------------------------
TOOLS = ("bash_exec", "shell_open", "web_fetch", "read_file")
RULES = ("bash_exec", "web_fetch", "bash_exec(git status)", "read_file(./x/**)")
tool_table = st.dictionaries(st.sampled_from(TOOLS), st.fixed_dictionaries(
    {}, optional={"enabled": st.booleans(), "timeout": st.integers(1, 600)}), max_size=4)
rules = st.dictionaries(st.sampled_from(["allow", "ask", "deny"]), st.lists(st.sampled_from(RULES), max_size=3,
                                                                         unique=True), max_size=3)
layer = st.fixed_dictionaries({}, optional={
    "mode": st.sampled_from(["plan", "ask", "allow"]), "sandbox": st.sampled_from(["auto", "bwrap", "off"]),
    "sandbox_network": st.booleans(), "max_steps": st.integers(1, 10_000), "max_cost": st.floats(0.01, 100),
    "max_tokens": st.integers(1, 10**9), "tools": tool_table, "permissions": rules,
    "hooks": st.fixed_dictionaries({"pre_tool_use": st.lists(st.fixed_dictionaries({"command": st.sampled_from(
        ["a", "b"])}), max_size=2)}),
    "mcp_servers": st.dictionaries(st.sampled_from(["s", "t"]), st.fixed_dictionaries({"command": st.just("x")}),
                                   max_size=2),
    "room": st.fixed_dictionaries({}, optional={"allow_network": st.booleans(), "allow_mcp": st.booleans()}),
    "keymap": st.dictionaries(st.sampled_from(["approval.allow", "app.quit"]), st.sampled_from(["n", "y"]), max_size=2),
    "shell_env": st.lists(st.sampled_from(["AWS_*", "DATABASE_URL"]), max_size=2),
    "api_base": st.sampled_from(["http://127.0.0.1:1", "http://127.0.0.1:2"]),
    "model": st.sampled_from(["openai/a", "openai/b"]), "reasoning": st.sampled_from(["off", "high"]),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=layer, repo=layer)
def test_an_untrusted_repo_layer_never_widens_the_users(tmp_path: Path, user: dict[str, Any],
                                                        repo: dict[str, Any]) -> None:
    _user(user)
    alone = load_config(None, {}, environ={})
    config = _load(_repo(tmp_path / "ws", repo))
    assert not config.workspace_trusted
    needs_trust = [name for name, rule in CONFIG.fields.items() if isinstance(rule, NeedsTrust)]
    assert config.model_dump(include=set(needs_trust)) == alone.model_dump(include=set(needs_trust))
    assert MODE_RANK[config.mode] <= MODE_RANK[alone.mode]
    assert config.permissions.allow == alone.permissions.allow and config.hooks == alone.hooks
    assert set(alone.permissions.deny) <= set(config.permissions.deny)
    for name, mine in alone.tools.items():
        merged = config.tools[name]
        assert merged.enabled <= mine.enabled
        assert mine.timeout is None or (merged.timeout is not None and merged.timeout <= mine.timeout)
    for key in ("max_steps", "max_cost", "max_tokens"):
        if key in user:
            assert getattr(config, key) <= getattr(alone, key)
