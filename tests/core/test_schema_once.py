"""Each schema is declared once: the approval the loop asks and the event front ends see share
their fields, and the merged `Config` is the file `Settings` plus what the merge adds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from agent.approval import ApprovalRequest
from agent.config import Config, Settings, load_config, read_settings
from agent.diffing import FileChange
from agent.events import ApprovalDetails, ApprovalRequired


def own_fields(cls: type) -> set[str]:
    """The fields a class declares itself (not the ones it inherits)."""
    return set(vars(cls).get("__annotations__", {}))


def test_the_approval_request_and_its_event_declare_no_field_of_the_other() -> None:
    details = set(ApprovalDetails.model_fields)
    assert {"approval_id", "call_id", "tool", "args", "kind", "summary", "command", "cwd", "timeout",
            "url", "child_id", "parent_id", "asker"} == details
    assert own_fields(ApprovalRequired) == {"type", "files"}
    # the request's per-file facts (the changes, and what each file is to coder-tui) become the event's `files`
    assert own_fields(ApprovalRequest) == {"changes", "protected"}
    assert set(ApprovalRequired.model_fields) == details | {"type", "files"}
    assert set(ApprovalRequest.model_fields) == details | {"changes", "protected"}


def test_the_event_of_a_request_carries_every_detail_and_the_diffs() -> None:
    values: dict[str, Any] = {"approval_id": "ap_1", "call_id": "c_1", "tool": "run_shell",
                              "args": {"command": "make"}, "kind": "exec", "summary": "build",
                              "command": "make", "cwd": "/w", "timeout": 30, "url": "http://127.0.0.1/x",
                              "child_id": "20261208-1", "parent_id": "20261208-0", "asker": "coder #1: build"}
    assert set(values) == set(ApprovalDetails.model_fields)  # every field, none left at its default
    change = FileChange("a.py", "x = 1\n", "x = 2\n")
    request = ApprovalRequest(**values, changes=[change])
    event = request.to_event()
    assert type(event) is ApprovalRequired
    assert event.model_dump(exclude={"type", "files"}) == values
    assert [(f.path, f.hunks, f.diff) for f in event.files] == [("a.py", 1, change.unified_diff())]
    assert request.changes[0] is change  # the loop applies the very changes it showed


def test_config_is_the_settings_plus_what_the_merge_adds() -> None:
    assert own_fields(Config) == {"retry_base_delay", "workspace_trusted", "sources", "ignored", "rule_sources"}
    assert set(Settings.model_fields) < set(Config.model_fields)
    config, defaults = Config(), Settings()
    assert config.model_dump(include=set(Settings.model_fields)) == defaults.model_dump()


def test_a_config_made_in_code_keeps_the_bounds_of_the_file() -> None:
    with pytest.raises(ValidationError, match="max_steps"):
        Config(max_steps=0)
    assert Config(model="m", api_key=SecretStr("k"), max_steps=3).max_steps == 3


def test_a_file_gives_only_what_it_sets(tmp_path: Path, isolated_home: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('mode = "plan"\nmax_steps = 7\n[mcp_servers.docs]\ncommand = "docs-server"\n', encoding="utf-8")
    given = read_settings(path).given()
    assert set(given) == {"mode", "max_steps", "mcp_servers"}
    assert given["mcp_servers"]["docs"]["command"] == "docs-server"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".coder-tui.toml").write_text("max_steps = 9\n", encoding="utf-8")
    config = load_config(workspace, {}, {})
    assert (config.max_steps, config.sources["max_steps"]) == (9, str(workspace / ".coder-tui.toml"))
    assert config.mode == "ask" and "mode" not in config.sources  # the default, set by no layer
