"""What is known about a model: context window, output limit, prices, and whether it takes tools,
images and a reasoning effort. Read from litellm's bundled model table as JSON, never by importing
litellm (seconds and hundreds of megabytes for a dictionary lookup).

The table (`model_prices_and_context_window_backup.json`, 3 MB) keys models by litellm's names:
`gpt-4.1`, `claude-sonnet-4-5`, `deepseek/deepseek-chat`, `ollama/llama3.1`. `entry()` tries the
model string as given, then without the `responses/` route segment and without its provider
prefix. Each name is looked up in the file's text and only its entry parsed (parsing the whole
table costs about 20 ms of a cold start; a look-up, well under one).

Version guard: the fields read here were checked against the litellm versions in CHECKED. Outside
them the table is still read when its own `sample_spec` names every field used here, and ignored
otherwise (every model is then unknown: no compaction by window, no prices; requests still work);
tests/core/test_model_facts.py fails on an upgrade outside the range so that it is checked again.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TABLE = "model_prices_and_context_window_backup.json"
CHECKED = ((1, 106), (1, 110))  # litellm versions whose table layout this module was checked against
FIELDS = ("max_input_tokens", "max_output_tokens", "input_cost_per_token", "output_cost_per_token",
          "litellm_provider", "mode", "supports_function_calling", "supports_reasoning", "supports_vision")
OLLAMA = ("ollama", "ollama_chat")


@dataclass(frozen=True)
class ModelFacts:
    known: bool  # the table has the model
    window: int | None  # input tokens it takes
    max_output: int | None  # output tokens it can write
    tools: bool | None  # native tool calls (None: the table does not say)
    vision: bool  # image input
    reasoning: bool | None  # takes a reasoning effort (None: the table does not say)
    adaptive_thinking: bool  # Anthropic: thinking {"type": "adaptive"} with output_config.effort
    mode: str | None  # "chat", "responses", ...
    entry: dict[str, Any]  # the table's whole entry (prices), {} when unknown

    @property
    def without_tools(self) -> bool:
        """The table positively says the model cannot call tools (only then the text protocol)."""
        return self.tools is False


UNKNOWN = ModelFacts(False, None, None, None, False, None, False, None, {})


def table_path() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / TABLE


def version_checked() -> bool:
    """Whether the installed litellm is one this module's reading was checked against."""
    found = _installed_version()
    return found is not None and CHECKED[0] <= found < CHECKED[1]


def _installed_version() -> tuple[int, ...] | None:
    """litellm's version from its dist-info folder's name (importlib.metadata costs milliseconds)."""
    path = table_path()
    names = sorted(path.parent.parent.glob("litellm-*.dist-info")) if path is not None else []
    text = names[-1].name.removeprefix("litellm-").split(".dist-info")[0] if names else ""
    try:
        return tuple(int(part) for part in text.split(".")[:2]) if text else None
    except ValueError:
        return None


@functools.lru_cache(maxsize=1)
def _text() -> str:
    """The table's text ("" when it cannot be read, or its layout is not the one checked)."""
    path = table_path()
    if path is None:
        return ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return ""
    if not version_checked():
        spec = _lookup(text, "sample_spec")
        if spec is None or any(name not in spec for name in FIELDS):
            return ""
    return text


_DECODER = json.JSONDecoder()


def _lookup(text: str, key: str) -> dict[str, Any] | None:
    """The table's entry named `key`: found as `"key": {` at the start of an entry (after `{` or `,`),
    then only that object parsed."""
    needle, start = json.dumps(key), 0
    while (at := text.find(needle, start)) >= 0:
        start = at + len(needle)
        back = at - 1
        while back >= 0 and text[back] in " \t\r\n":
            back -= 1
        before = text[back] if back >= 0 else ""
        after = text[start:start + 64].lstrip()
        if before not in ("{", ",") or not after.startswith(":") or not after[1:].lstrip().startswith("{"):
            continue
        brace = text.index("{", start)
        try:
            value, _end = _DECODER.raw_decode(text, brace)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def table() -> dict[str, Any]:
    """The whole table, parsed ({} when it cannot be read): for tests and tools, not requests."""
    text = _text()
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def keys(model: str) -> list[str]:
    """The table names `model` may have, most specific first."""
    plain = model.replace("/responses/", "/", 1) if "/responses/" in model else model
    prefix, _, name = plain.partition("/")
    found = [model, plain]
    if name:
        found.append(name)
        if prefix in OLLAMA:
            found += [f"ollama/{name}", f"ollama/{name.split(':')[0]}"]
        elif "/" not in name:
            found.append(f"{prefix}/{name}")
    return list(dict.fromkeys(found))


def entry(model: str) -> dict[str, Any]:
    text = _text()
    for key in keys(model):
        value = _lookup(text, key) if text else None
        if value is not None:
            return value
    return {}


@functools.lru_cache(maxsize=128)
def facts(model: str) -> ModelFacts:
    """The model's facts (UNKNOWN for a model the table does not have: a local server, a proxy alias)."""
    found = entry(model)
    if not found:
        return UNKNOWN
    window = found.get("max_input_tokens") or found.get("max_tokens")
    output = found.get("max_output_tokens") or found.get("max_tokens")
    return ModelFacts(
        known=True, window=_int(window), max_output=_int(output), tools=_flag(found, "supports_function_calling"),
        vision=bool(found.get("supports_vision")), reasoning=_flag(found, "supports_reasoning"),
        adaptive_thinking=bool(found.get("supports_adaptive_thinking")), mode=found.get("mode"), entry=found)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


def _flag(found: dict[str, Any], name: str) -> bool | None:
    value = found.get(name)
    return value if isinstance(value, bool) else None
