"""The ReAct text protocol (the seed's ReActAgent): THOUGHT, ACTION and ACTION_INPUT as plain text.

Serves profiles with `agent = "react"` and models without native tool calling. The model writes

    THOUGHT: what it is thinking
    ACTION: read_file
    ACTION_INPUT: {"file_path": "a.py"}

and reads the result in the next user message (`OBSERVATION`). A reply without an ACTION (or with
FINAL ANSWER) ends the run. Parsing forgives what models do: any case, markdown bold, `Action
Input`, JSON in a code fence, text after the JSON, an invented OBSERVATION (cut off).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LABEL = r"[*_`#\s]*"
ACTION_RE = re.compile(rf"^{LABEL}action{LABEL}:{LABEL}([A-Za-z0-9_.\-]+)", re.IGNORECASE | re.MULTILINE)
INPUT_RE = re.compile(rf"^{LABEL}action[ _]?input{LABEL}:", re.IGNORECASE | re.MULTILINE)
FINAL_RE = re.compile(rf"^{LABEL}final[ _]?answer{LABEL}:", re.IGNORECASE | re.MULTILINE)
OBSERVATION_RE = re.compile(rf"^{LABEL}observation{LABEL}:", re.IGNORECASE | re.MULTILINE)
PROTOCOL_HEADING = "## How to use tools (text protocol)"
THOUGHT_RE = re.compile(rf"^{LABEL}thought{LABEL}:\s*", re.IGNORECASE | re.MULTILINE)


@dataclass
class Step:
    """One parsed reply: an action to run, or a final answer (`action` is None)."""

    thought: str = ""
    action: str | None = None
    arguments: str = "{}"  # JSON text for the executor
    error: str | None = None  # the action could not be read; told to the model
    answer: str = ""


def parse(text: str) -> Step:
    observed = OBSERVATION_RE.search(text)
    if observed:  # the model imagined the result: only what came before is its own
        text = text[: observed.start()]
    final = FINAL_RE.search(text)
    action = ACTION_RE.search(text)
    if final and (action is None or final.start() < action.start()):
        end = action.start() if action is not None else len(text)  # an action after it is not run
        return Step(thought=_thought(text[: final.start()]), answer=text[final.end():end].strip())
    if action is None:
        return Step(answer=THOUGHT_RE.sub("", text, count=1).strip())
    step = Step(thought=_thought(text[: action.start()]), action=action.group(1))
    rest = text[action.end():]
    label = INPUT_RE.search(rest)
    source = rest[label.end():] if label else rest
    step.arguments, step.error = _json_object(source, step.action)
    return step


def _thought(text: str) -> str:
    return THOUGHT_RE.sub("", text.strip(), count=1).strip()


def _json_object(text: str, tool: str) -> tuple[str, str | None]:
    """The JSON arguments, or (when they cannot be read) the raw text, which the executor then
    rejects with the tool's expected parameters, and why."""
    text = text.strip()
    start = text.find("{")
    if start < 0:
        if text.strip("`").strip().lower() in ("", "none", "{}"):
            return "{}", None
        return text.splitlines()[0][:2000], f"no JSON object after ACTION_INPUT for {tool}"
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        return text[start : start + 2000], f"ACTION_INPUT for {tool} is not valid JSON ({exc.msg})"
    return json.dumps(value), None


def protocol(tools: list[dict[str, Any]], examples: Mapping[str, Sequence[dict[str, Any]]] | None = None) -> str:
    """The system prompt section that teaches the protocol and lists the tools (with the registry's
    example arguments: a model that writes its calls as text follows examples better than schemas)."""
    lines = [
        PROTOCOL_HEADING,
        "You call tools by writing, and then stopping:",
        "THOUGHT: <your reasoning about what to do next>",
        "ACTION: <one tool name from the list below>",
        'ACTION_INPUT: <the arguments as one JSON object, e.g. {"file_path": "src/app.py"}>',
        "",
        "The result comes back in the next message, starting with OBSERVATION. Call one tool per "
        "reply and never write an OBSERVATION yourself. When the task is done, reply with",
        "FINAL ANSWER: <your answer to the user>",
        "",
        "Tools:",
    ]
    for tool in tools:
        function = tool["function"]
        parameters = json.dumps(function["parameters"].get("properties", {}), separators=(",", ":"))
        required = ", ".join(function["parameters"].get("required", [])) or "none"
        lines.append(f"- {function['name']}: {function['description']}\n  parameters: {parameters}; "
                     f"required: {required}")
        lines += [f"  example: ACTION_INPUT: {json.dumps(e)}" for e in (examples or {}).get(function["name"], ())]
    return "\n".join(lines)


def observation(tool: str, content: str) -> dict[str, Any]:
    return {"role": "user", "content": f"OBSERVATION ({tool}):\n{content}"}
