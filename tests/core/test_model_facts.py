"""Model facts from litellm's bundled table, read without importing litellm (agent/llm/facts.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from agent.llm import facts
from tests.conftest import ROOT


def test_the_installed_litellm_is_one_the_reading_was_checked_against() -> None:
    """Fails on a litellm upgrade outside facts.CHECKED: check the table's fields, then widen the range."""
    assert facts.version_checked(), f"litellm {facts._installed_version()} is outside {facts.CHECKED}"
    spec = facts._lookup(facts._text(), "sample_spec")
    assert spec is not None and all(name in spec for name in facts.FIELDS)


def test_each_entry_looked_up_is_the_one_the_whole_table_holds() -> None:
    text = facts._text()
    whole = json.loads(text)
    names = list(whole)[::25] + ["claude-haiku-5-5"]  # a sample, and the one entry written without indent
    assert all(facts._lookup(text, name) == whole[name] for name in names)
    assert facts._lookup(text, "no-such-model-anywhere") is None
    assert facts._lookup(text, "litellm_provider") is None  # a field's name, not an entry's


def test_facts_under_the_names_users_give() -> None:
    sonnet = facts.facts("anthropic/claude-sonnet-4-5")
    assert (sonnet.window, sonnet.max_output, sonnet.reasoning, sonnet.vision) == (200000, 64000, True, True)
    assert facts.facts("claude-sonnet-4-5") == sonnet
    assert facts.facts("openai/gpt-5-codex").mode == "responses"
    assert facts.facts("openai/responses/o4-mini").tools is True  # the route segment is not part of the name
    assert facts.facts("ollama_chat/codegeex4:latest").without_tools  # the table says no tool calling
    assert facts.facts("openai/some-local-model") == facts.UNKNOWN and not facts.UNKNOWN.without_tools
    assert facts.facts("anthropic/claude-opus-4-6").adaptive_thinking


def test_reading_facts_imports_no_litellm() -> None:
    probe = ("import sys; from agent.llm.facts import facts; from agent.images import accepts; "
             "from agent.llm.usage import prices_for; facts('anthropic/claude-sonnet-4-5'); "
             "accepts('openai/gpt-4o', None); prices_for('openai/gpt-4.1'); print('litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
