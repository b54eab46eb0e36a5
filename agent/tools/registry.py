"""The tool registry: which tools exist, which a workspace offers, their schemas, argument parsing."""

from __future__ import annotations

import difflib
import json
from functools import cache
from typing import Any

from pydantic import ValidationError

from agent import argrepair
from agent.tools import schemacache
from agent.tools.base import Tool, ToolArgs
from agent.workspaces.base import Workspace


class ArgumentError(Exception):
    """The model's arguments do not fit the tool; the message says what is expected."""


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve $ref/$defs and drop titles: some providers reject references in tool schemas."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].split("/")[-1]])
            return {k: walk(v) for k, v in node.items() if k not in ("$defs", "title")}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(schema)


@cache
def _built_schema(args_model: type[ToolArgs]) -> dict[str, Any]:
    """Built once per argument model (pydantic's schema generation costs milliseconds), and kept in
    the cache folder for the next run (agent/tools/schemacache.py)."""
    key = schemacache.key(args_model)
    if (kept := schemacache.lookup(args_model, key)) is not None:
        return kept
    schema = _inline_refs(args_model.model_json_schema())
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    schemacache.store(args_model, key, schema)
    return schema


@cache
def _schema_text(args_model: type[ToolArgs]) -> str:
    return json.dumps(_built_schema(args_model))


def parameters_schema(args_model: type[ToolArgs]) -> dict[str, Any]:
    # A fresh copy (callers and adapters may change what they send without touching the cache),
    # from JSON text: several times faster than deepcopy, and the tools are offered every step.
    return json.loads(_schema_text(args_model))


@cache
def describe_parameters(args_model: type[ToolArgs]) -> str:
    schema = _built_schema(args_model)
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema["properties"].items():
        kind = prop.get("type") or "/".join(p.get("type", "?") for p in prop.get("anyOf", []))
        parts.append(f"{name} ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) or "no parameters"


def describe_tool(tool: Tool) -> str:
    """What a tool does, its parameters and its examples, as `/help TOOL` shows it."""
    lines = [f"{tool.name} ({tool.kind}): {tool.description}", f"parameters: {describe_parameters(tool.Args)}"]
    lines += [f"example: {json.dumps(example)}" for example in tool.examples]
    return "\n".join(lines)


class ToolRegistry:
    def __init__(self, tools: list[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self.disabled: set[str] = set()  # config `[tools.NAME] enabled = false`: never offered nor run
        self.defaults: dict[str, dict[str, Any]] = {}  # tool -> argument values used when the model gives none
        for tool in tools:
            self.register(tool)

    def configure(self, settings: dict[str, Any]) -> list[str]:
        """Apply `[tools.NAME]` settings (objects with `enabled` and `timeout`); the names that match
        no tool here (MCP tools, `mcp__SERVER__TOOL`, come later and are not listed)."""
        unknown = []
        for name, given in settings.items():
            if not given.enabled:
                self.disabled.add(name)
            if given.timeout is not None:
                self.defaults.setdefault(name, {})["timeout"] = given.timeout
            if name not in self._tools and not name.startswith("mcp__"):
                unknown.append(name)
        return unknown

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name} registered twice")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def offered(self, workspace: Workspace) -> list[Tool]:
        return [tool for tool in self._tools.values() if tool.available(workspace) and tool.name not in self.disabled]

    def schemas(self, workspace: Workspace) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": parameters_schema(tool.Args),
                },
            }
            for tool in self.offered(workspace)
        ]

    def parse(self, tool: Tool, raw: str) -> ToolArgs:
        text = raw.strip() or "{}"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            data = argrepair.repair(text)  # trailing commas, single quotes, unquoted keys
            if data is None:
                raise ArgumentError(
                    f"the arguments are not valid JSON ({argrepair.locate(text, exc)}); {_expected(tool)}"
                ) from None
        if not isinstance(data, dict):
            raise ArgumentError(
                f"the arguments must be a JSON object, got {type(data).__name__}; {_expected(tool)}")
        defaults = {k: v for k, v in self.defaults.get(tool.name, {}).items() if k in tool.Args.model_fields}
        try:
            return tool.Args.model_validate({**defaults, **data})
        except ValidationError as exc:
            problems = "; ".join(_problem(err, tool) for err in exc.errors()[:5])
            raise ArgumentError(f"invalid arguments: {problems}. {_expected(tool)}") from None


def _expected(tool: Tool) -> str:
    return f"{tool.name} expects: {describe_parameters(tool.Args)}"


def _problem(err: Any, tool: Tool) -> str:
    where = ".".join(str(p) for p in err["loc"]) or "arguments"
    if err["type"] == "missing":
        return f"`{where}` is required"
    if err["type"] == "extra_forbidden":
        close = difflib.get_close_matches(where, list(_built_schema(tool.Args)["properties"]), n=1)
        return f"`{where}` is not a parameter of this tool" + (f" (did you mean `{close[0]}`?)" if close else "")
    got = err.get("input")
    shown = json.dumps(got)[:80] if got is not None else "null"
    return f"`{where}`: {err['msg']} (got {shown})"
