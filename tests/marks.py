"""Which tests are `slow` (deselect them with `pytest -m "not slow"`) and which run the CLI cold.

A test is slow when it starts a process that imports much: the CLI (`cli`, `run_cli`, `cli_env`
from tests/conftest.py), another Python (`sys.executable`: import probes, mypy, import-linter)
or Node (the interop clients and MCP servers); found by following the names its code, its
fixtures and the test helpers they call use, so a new test of those layers is marked without
being listed. The lists below add in-process tests measured over about 1 s (a quiet machine):
keep them in step with `python -m tests.bench.unmarked`, which names unmarked tests over 1 s.
"""

from __future__ import annotations

import fnmatch
import inspect
import types
from collections.abc import Iterable
from typing import Any

import pytest

# Names that start a process when a test's code (or a helper's, or a fixture's) uses them:
# tests/conftest.py's CLI helpers, `sys.executable`, and "node" as a command.
CLI_NAMES = {"cli", "run_cli", "cli_env"}
PROCESS_STRINGS = {"node"}
# Fixtures that start Node (their own modules hold them; their helpers are followed anyway).
SLOW_FIXTURES = {"node_host", "vectors", "acp_client"}
# Whole modules whose tests drive the whole app through Textual's pilot (about 1-5 s each).
SLOW_MODULES = {
    "tests/github/test_gh_app.py", "tests/github/test_gh_app_quit.py", "tests/knowledge/test_app_map.py",
    "tests/planning/test_app_plans.py", "tests/profiles/test_profiles_app.py", "tests/security/test_trust_app.py",
    "tests/tui/test_app_sessions.py", "tests/tui/test_app_ui.py", "tests/tui/test_docked_approval.py",
    "tests/tui/test_gcpolicy.py", "tests/tui/test_replay.py", "tests/tui/test_snapshots.py",
    "tests/tui/test_stuck_screens.py", "tests/tui/test_subagents_app.py",
    "tests/lsp/test_lsp_servers.py",  # real language servers (basedpyright on Node, typescript-language-server)
    "tests/fleet/test_fleet.py",  # three worker processes, a redis-server, batches of jobs
    "tests/core/test_fast_tier.py",  # inner pytest sessions (one with two xdist workers) of slow tests
}
# Single in-process tests measured over about 1 s (file::name, parameters left out).
SLOW_TESTS = {
    "tests/core/test_approval_gate.py::test_revoking_an_allowance_makes_the_gate_ask_again",
    "tests/github/test_gh_merge.py::test_clean_merges_keep_both_sides_when_one_side_is_unchanged",
    "tests/oct/test_oct_codec.py::test_connection_skips_garbage_without_crashing",
    "tests/oct/test_oct_positions.py::test_agrees_with_yjs_relative_positions_on_ascii",
    "tests/profiles/test_mcp.py::test_a_server_that_exits_mid_session_withdraws_its_tools",
    "tests/security/test_paths_and_bytes.py::test_an_edit_changes_only_the_edited_lines_bytes",
    "tests/tui/test_approval_screen.py::test_deny_and_stop_buttons",
    "tests/tui/test_approval_screen.py::test_five_thousand_line_changes_open_and_scroll",
    "tests/tui/test_approval_screen.py::test_rejecting_a_hunk_of_your_own_edit_leaves_it_out",
    "tests/tui/test_model_config.py::test_a_model_the_provider_does_not_know_opens_setup",
    "tests/tui/test_prompt.py::test_fifty_thousand_paths_show_at_most_fifty_rows_and_the_best_first",
    "tests/tui/test_setup.py::test_key_not_saved_drops_old_key_and_shows_the_export_line",
    "tests/tui/test_setup.py::test_keyboard_fill_and_enter_checks_in_a_worker",
    # Unmarked until the fast tier's guard (tests/fasttier.py) named them: 12-21 s each on a busy
    # 2-core machine. The first two import litellm in the test process (an unknown provider is
    # litellm's to judge); the ACP one starts the CLI and waits for litellm's import in it.
    "tests/core/test_model_errors.py::test_an_unknown_provider_is_a_configuration_error",
    "tests/tui/test_model_config.py::test_an_unknown_provider_opens_setup_before_the_first_prompt",
    "tests/acp/test_acp_ready.py::test_acp_answers_initialize_and_new_session_while_litellm_is_still_loading",
}
# Parametrisations measured over about 1 s of otherwise fast tests: file::name (as above) -> fnmatch
# patterns of the parameter ids that are slow.
SLOW_PARAMS: dict[str, set[str]] = {
    # one real language server (basedpyright, on Node) per case, 1.3-2.2 s each (plan mode blocks
    # lsp_rename before a server starts: 0.1 s)
    "tests/core/test_modes.py::test_plan_mode_blocks_every_change":
        {"lsp_diagnostics", "lsp_definition", "lsp_references", "lsp_hover", "lsp_symbols"},
    "tests/core/test_modes.py::test_ask_mode_changes_nothing_on_deny": {"lsp_*"},
    "tests/core/test_modes.py::test_ask_mode_acts_only_after_approval": {"lsp_*"},
    "tests/core/test_modes.py::test_allow_mode_runs_without_asking": {"lsp_*"},
}
# Tests that need a real cold CLI process (tests/zygote.py): they SIGKILL it and look at what
# it left at once, read its pid, or read /proc of its ancestors.
COLD_CLI = {
    "tests/knowledge/test_tasks.py::test_a_task_whose_runner_was_killed_is_marked_failed",
    "tests/knowledge/test_cli_explore.py::test_explore_killed_mid_step_resumes_without_repeats",
    "tests/planning/test_headless_plans.py::test_a_killed_run_resumes_at_the_first_unfinished_step",
    "tests/github/test_gh_cli.py::test_crash_then_resume_publishes_the_unpublished_edits",
    "tests/security/test_trust_and_secrets.py::test_shell_commands_cannot_read_keys_from_their_ancestors",
}


# Node ids of the collected tests that run the CLI warm (the zygote starts early when one is selected).
WARM_CLI: set[str] = set()


def _names(code: types.CodeType) -> set[str]:
    """Global, attribute and imported names a code object uses, nested functions included."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _strings(code: types.CodeType) -> set[str]:
    found = {c for c in code.co_consts if isinstance(c, str)}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _strings(const)
    return found


def _from_conftest(value: Any) -> bool:
    return getattr(value, "__module__", None) == "tests.conftest"


def _ours(value: Any) -> bool:
    return (inspect.isfunction(value) or inspect.isclass(value)) and \
        getattr(value, "__module__", "").startswith("tests")


def starts_a_process(obj: Any, seen: set[int] | None = None, cli_only: bool = False) -> bool:
    """Whether obj (a test, fixture, helper or class of the tests) can start a heavy process
    (with cli_only: the CLI)."""
    seen = set() if seen is None else seen
    obj = inspect.unwrap(obj)
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if inspect.isclass(obj):
        return any(starts_a_process(v, seen, cli_only) for v in vars(obj).values() if inspect.isfunction(v))
    code = getattr(obj, "__code__", None)
    if code is None:
        return False
    names = _names(code)
    scope = getattr(obj, "__globals__", {})
    if not cli_only and ("executable" in names or _strings(code) & PROCESS_STRINGS):
        return True
    clis = names & CLI_NAMES  # tests/conftest.py's, not `from tui import cli` run in-process
    if clis and ("tests.conftest" in names or any(_from_conftest(scope.get(n)) for n in clis)):
        return True
    return any(_ours(scope.get(name)) and starts_a_process(scope[name], seen, cli_only) for name in names)


def test_id(item: pytest.Item) -> str:
    """file::name of a test without its parameters (the key of the lists above)."""
    path = item.nodeid.split("::")[0]
    return "::".join([path, *item.nodeid.split("::")[1:-1], getattr(item, "originalname", item.name)])


def _fixture_functions(item: pytest.Item) -> Iterable[Any]:
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for definition in (info.name2fixturedefs.get(name, ()) if info else ()):
            func = getattr(definition, "func", None)
            if _ours(func):
                yield func


def is_slow(item: pytest.Item) -> bool:
    if test_id(item) in SLOW_TESTS or item.nodeid.split("::")[0] in SLOW_MODULES:
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and any(fnmatch.fnmatchcase(callspec.id, p) for p in SLOW_PARAMS.get(test_id(item), ())):
        return True
    if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    function = getattr(item, "function", None)
    return starts_a_process(function) or any(starts_a_process(f) for f in _fixture_functions(item))


def uses_the_cli(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    return starts_a_process(function, cli_only=True) or \
        any(starts_a_process(f, cli_only=True) for f in _fixture_functions(item))


def mark(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
        if test_id(item) in COLD_CLI:
            item.add_marker(pytest.mark.cold_cli)
        elif uses_the_cli(item):
            WARM_CLI.add(item.nodeid)
