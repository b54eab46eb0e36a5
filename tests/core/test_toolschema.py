"""agent/llm/toolschema.py's rules on their own: names, ids, and no copy when nothing changes (the
servers in tests/core/test_strict_servers.py show that what it sends is accepted)."""

from __future__ import annotations

import re

from agent.llm.toolschema import fit, fit_name

VALID = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


def test_names_every_provider_takes() -> None:
    assert fit_name("read_file") == "read_file"
    assert fit_name("fs.read") == "fs_read"
    assert fit_name("9lives") == "_9lives"  # Gemini wants a letter or _ first
    long = "x." * 40
    assert VALID.match(fit_name(long)) and fit_name(long) != fit_name(long[:-2])  # a hash keeps them apart
    assert fit_name("fs.read", {"fs_read"}) != "fs_read" and VALID.match(fit_name("fs.read", {"fs_read"}))
    assert fit_name("") == "_"


def test_a_tool_valid_as_it_is_keeps_its_name_when_another_cleans_to_it() -> None:
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
             for n in ("fs.read", "fs_read")]
    fitted = fit("openai/gpt-4o", [], tools)
    sent = [t["function"]["name"] for t in fitted.tools]
    assert sent[1] == "fs_read" and sent[0].startswith("fs_read_") and fitted.name_back(sent[0]) == "fs.read"
    assert fitted.name_back("fs_read") == "fs_read"


def test_nothing_is_copied_when_nothing_needs_fitting() -> None:
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "x"}]
    for model in ("openai/gpt-4o", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash", "ollama_chat/qwen"):
        fitted = fit(model, messages, tools)
        assert fitted.messages is messages and fitted.tools[0] is tools[0] and fitted.names == {}
    mistral = fit("mistral/mistral-large-latest", messages, tools)
    assert mistral.messages is not messages and messages[1]["tool_calls"][0]["id"] == "call_1"  # history untouched
    assert mistral.messages[0] is messages[0]
