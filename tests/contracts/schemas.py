"""The providers' own request schemas, strict: a body with a key they do not define is invalid.

- OpenAI (Chat Completions, Responses): the component schemas of OpenAI's published OpenAPI document,
  vendored in openai_requests.json (its `source` says from where). OpenAPI 3.1 schemas are JSON
  Schema 2020-12; `nullable: true` (left from 3.0) is read as "or null", `oneOf` as a union (`anyOf`:
  some of its unions overlap, e.g. an input message is both an easy and a full message). Unknown keys: every object
  schema that lists `properties` (and every `allOf` composition) gets `unevaluatedProperties: false`,
  except the parts of an `allOf`, which the composition checks as a whole.
- Anthropic (Messages): the `anthropic` SDK's request types (`MessageCreateParamsStreaming` and every
  TypedDict it reaches), validated by pydantic with extra keys forbidden.
"""

from __future__ import annotations

import functools
import json
import typing
from pathlib import Path
from typing import Any

import typing_extensions

VENDORED = Path(__file__).with_name("openai_requests.json")


def _parts_of_compositions(schemas: dict[str, Any]) -> set[str]:
    """Names of the schemas that are (through `$ref`) a part of some `allOf`."""
    names: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for part in value.get("allOf") or []:
                if isinstance(part, dict) and isinstance(part.get("$ref"), str):
                    names.add(part["$ref"].rsplit("/", 1)[-1])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(schemas)
    return names


def _strict(value: Any, loose: bool = False) -> Any:
    """`value` with nullable read and unknown keys forbidden (not in `loose` parts of an allOf)."""
    if isinstance(value, list):
        return [_strict(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "properties" and isinstance(item, dict):
            out[key] = {name: _strict(sub) for name, sub in item.items()}
        elif key == "allOf":
            out[key] = [_strict(part, loose=True) for part in item]
        elif key == "oneOf":  # a union, as OpenAI's SDKs read it (some of its unions overlap)
            out["anyOf"] = _strict(item)
        elif key != "nullable":
            out[key] = _strict(item)
    composed = "properties" in value or "allOf" in value
    if composed and not loose and "additionalProperties" not in value and "unevaluatedProperties" not in value:
        out["unevaluatedProperties"] = False
    if value.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


@functools.cache
def _openai_document() -> dict[str, Any]:
    schemas = json.loads(VENDORED.read_text())["schemas"]
    parts = _parts_of_compositions(schemas)
    return {name: _strict(schema, loose=name in parts) for name, schema in schemas.items()}


def openai_errors(root: str, body: dict[str, Any]) -> list[str]:
    """What OpenAI's schema `root` (CreateChatCompletionRequest, CreateResponse) finds wrong in `body`."""
    from jsonschema import Draft202012Validator

    schema = {"$ref": f"#/components/schemas/{root}", "components": {"schemas": _openai_document()}}
    validator = Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message[:300]}"
            for e in sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path)))]


def _forbid_extra(kind: Any, seen: set[int], models: list[Any]) -> None:
    """Every TypedDict reachable from `kind` made to refuse keys it does not define, and so every
    SDK model (the request types also take the response blocks, whose models allow any key)."""
    from pydantic import BaseModel

    if id(kind) in seen:
        return
    seen.add(id(kind))
    if typing_extensions.is_typeddict(kind):
        kind.__pydantic_config__ = {"extra": "forbid", "arbitrary_types_allowed": True}  # type: ignore[attr-defined]
        for hint in typing.get_type_hints(kind, include_extras=True).values():
            _forbid_extra(hint, seen, models)
        return
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        kind.model_config["extra"] = "forbid"
        models.append(kind)
        for field in kind.model_fields.values():
            _forbid_extra(field.annotation, seen, models)
        return
    for arg in typing.get_args(kind):
        _forbid_extra(arg, seen, models)


@functools.cache
def _anthropic_adapter() -> Any:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming
    from pydantic import TypeAdapter

    models: list[Any] = []
    _forbid_extra(MessageCreateParamsStreaming, set(), models)
    for model in reversed(models):  # the innermost first
        model.model_rebuild(force=True)
    return TypeAdapter(MessageCreateParamsStreaming)


def anthropic_errors(body: dict[str, Any]) -> list[str]:
    """What the anthropic SDK's MessageCreateParamsStreaming finds wrong in `body` (unknown keys included)."""
    from pydantic import ValidationError

    try:
        _drained(_anthropic_adapter().validate_python(body, strict=False))
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:20]]
    return []


def _drained(value: Any) -> Any:
    """Every lazily validated iterable (the SDK types its lists as `Iterable`) read to its end, so
    that its items are validated too."""
    if isinstance(value, dict):
        return {k: _drained(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_drained(v) for v in value]
    if type(value).__name__ == "ValidatorIterator":
        return [_drained(v) for v in value]
    return value
