"""Tool names, schemas and call ids made acceptable to the provider a request goes to, and mapped back.

Applied once per request in `LLM.complete`, so every path (the loop, a fallback model, a /model
switch mid-conversation) sends what the provider in front of it accepts:

- names: every provider's rule at once (OpenAI `^[a-zA-Z0-9_-]{1,64}$`, Anthropic the same,
  Gemini a letter or `_` first): a name outside it is cleaned, shortened with a hash of the
  original when too long or taken, and the model's calls of the sent name are mapped back;
- call ids: OpenAI takes at most 40 characters of `[a-zA-Z0-9_-]` (Anthropic's pattern), Mistral
  exactly nine letters or digits. An id that breaks the rule of the model now in use (a
  conversation begun with another provider) is replaced, the same way in the call and in its
  result, by a digest of the original, so the history itself is never changed. Gemini has no
  rule and its ids carry its thought signatures (`call_..__thought__SIGNATURE`, litellm's way of
  keeping them): they go to Gemini exactly as they came;
- schemas: litellm already turns JSON Schema into Gemini's subset (drops `additionalProperties`,
  `$schema`, `strict`, unsupported `format`s; inlines `$defs` and `definitions`); what it gets
  wrong, `const` (sent as an object type), becomes a one-value `enum` here first.

Nothing is copied unless something changes: the usual request goes out as it came.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass, field
from typing import Any

NAME_OK = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
NAME_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
ID_OK = re.compile(r"^[a-zA-Z0-9_-]{1,40}$")
MISTRAL_ID_OK = re.compile(r"^[a-zA-Z0-9]{9}$")
MISTRAL_MODELS = ("mistral", "codestral", "devstral", "magistral", "ministral", "pixtral")
GEMINI_PROVIDERS = ("gemini", "vertex_ai", "vertex_ai_beta")
ALPHANUMERIC = string.digits + string.ascii_letters


@dataclass
class Fitted:
    """The request as it goes out, and the way back from the names the provider saw."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    names: dict[str, str] = field(default_factory=dict)  # sent name -> our name

    def name_back(self, sent: str) -> str:
        return self.names.get(sent, sent)

    def restore(self, calls: list[Any]) -> None:
        """The model's tool calls named as our tools are (each has a `name`)."""
        for call in calls:
            call.name = self.name_back(call.name)


def provider_of(model: str) -> str:
    """The provider prefix of a litellm model string (`openai` when there is none)."""
    return model.split("/", 1)[0].lower() if "/" in model else "openai"


def fit(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Fitted:
    """`messages` and `tools` as `model`'s provider accepts them (the originals when nothing changes)."""
    provider = provider_of(model)
    names = _fitted_names([_function(t).get("name", "") for t in tools])
    sent_tools = _tools(tools, names, provider in GEMINI_PROVIDERS)
    id_rule = _same_id if provider in GEMINI_PROVIDERS else _mistral_id if _is_mistral(model) else _openai_id
    sent_messages = _messages(messages, names, id_rule)
    return Fitted(sent_messages, sent_tools, {sent: ours for ours, sent in names.items() if sent != ours})


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function") or {}


def _is_mistral(model: str) -> bool:
    return provider_of(model) == "mistral" or any(m in model.lower() for m in MISTRAL_MODELS)


# -- names ----------------------------------------------------------------------------------
def fit_name(name: str, taken: frozenset[str] | set[str] = frozenset()) -> str:
    """`name` if every provider accepts it, else a clean one (a hash of `name` keeps it unique)."""
    if NAME_OK.match(name) and name not in taken:
        return name
    clean = NAME_BAD_CHARS.sub("_", name) or "_"
    if not (clean[0].isalpha() or clean[0] == "_"):
        clean = f"_{clean}"
    if len(clean) > 64 or clean in taken:
        clean = f"{clean[:55]}_{_digest(name, 8)}"
    return clean


def _fitted_names(names: list[str]) -> dict[str, str]:
    """Our tool names -> the names sent, unique among themselves and the names kept as they are."""
    kept = {n for n in names if NAME_OK.match(n)}
    fitted: dict[str, str] = {n: n for n in kept}
    for name in names:
        if name not in fitted:
            fitted[name] = fit_name(name, kept | set(fitted.values()))
    return fitted


def _tools(tools: list[dict[str, Any]], names: dict[str, str], gemini: bool) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function = _function(tool)
        name = function.get("name", "")
        parameters = function.get("parameters")
        fixed_schema = _gemini_schema(parameters) if gemini and isinstance(parameters, dict) else parameters
        if names.get(name, name) == name and fixed_schema is parameters:
            out.append(tool)
            continue
        changed = {**function, "name": names.get(name, name)}
        if parameters is not None:
            changed["parameters"] = fixed_schema
        out.append({**tool, "function": changed})
    return out


# -- schemas --------------------------------------------------------------------------------
SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")  # name -> schema
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_ONE = ("items", "additionalProperties", "not")


def _gemini_schema(schema: Any) -> Any:
    """`schema` with each `const` as a one-value `enum` (litellm would send it as an object type);
    only schema positions are walked, so a parameter named `const` stays a parameter."""
    if not isinstance(schema, dict):
        return schema
    changed: dict[str, Any] = {}
    for key in SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            changed[key] = _same_or({k: _gemini_schema(v) for k, v in schema[key].items()}, schema[key])
    for key in SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            changed[key] = _same_or([_gemini_schema(v) for v in schema[key]], schema[key])
    for key in SCHEMA_ONE:
        if key in schema:
            changed[key] = _gemini_schema(schema[key])
    if "const" in schema:
        changed["enum"] = [schema["const"]]
        changed.setdefault("type", schema.get("type") or _json_type(schema["const"]))
    elif all(changed[k] is schema[k] for k in changed):
        return schema
    return {**{k: v for k, v in schema.items() if k != "const"}, **changed}


def _same_or(new: Any, old: Any) -> Any:
    """`old` when walking it changed nothing (no copy), else `new`."""
    pairs = zip(new.values(), old.values()) if isinstance(new, dict) else zip(new, old)
    return old if all(a is b for a, b in pairs) else new


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return "number" if isinstance(value, float) else "string"


# -- messages and call ids ------------------------------------------------------------------
def _same_id(call_id: str) -> str:
    return call_id


def _openai_id(call_id: str) -> str:
    return call_id if ID_OK.match(call_id) else f"call_{_digest(call_id, 24)}"


def _mistral_id(call_id: str) -> str:
    return call_id if MISTRAL_ID_OK.match(call_id) else _digest(call_id, 9)


def _messages(messages: list[dict[str, Any]], names: dict[str, str], id_rule: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] | None = None
    for index, message in enumerate(messages):
        fixed = _message(message, names, id_rule)
        if fixed is not message and out is None:
            out = list(messages[:index])
        if out is not None:
            out.append(fixed)
    return messages if out is None else out


def _message(message: dict[str, Any], names: dict[str, str], id_rule: Any) -> dict[str, Any]:
    if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
        sent = id_rule(message["tool_call_id"])
        return message if sent == message["tool_call_id"] else {**message, "tool_call_id": sent}
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not calls:
        return message
    fixed = [_call(c, names, id_rule) for c in calls]
    return message if all(a is b for a, b in zip(fixed, calls)) else {**message, "tool_calls": fixed}


def _call(call: dict[str, Any], names: dict[str, str], id_rule: Any) -> dict[str, Any]:
    function = call.get("function") or {}
    name = str(function.get("name") or "")
    sent_name = names.get(name) or fit_name(name)
    sent_id = id_rule(str(call.get("id") or ""))
    if sent_name == name and sent_id == call.get("id"):
        return call
    return {**call, "id": sent_id, "function": {**function, "name": sent_name}}


def _digest(text: str, length: int) -> str:
    """`length` letters and digits derived from `text` alone (the same for a call and its result)."""
    number = int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")
    out = []
    for _ in range(length):
        number, rest = divmod(number, len(ALPHANUMERIC))
        out.append(ALPHANUMERIC[rest])
    return "".join(out)
