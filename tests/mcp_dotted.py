"""A small stdio MCP server whose tools look like many real ones: dotted names, one longer than any
provider takes, two that clash once cleaned (`notes.add`, `notes_add`), and schemas with
`$schema`, `additionalProperties`, `$defs`/`$ref`, `const` and a string `format` (what zod and
pydantic produce). Plain JSON-RPC over stdin/stdout, so it depends on no SDK version.

    python -m tests.mcp_dotted     # or: python tests/mcp_dotted.py

Every call is answered with what it received, e.g. `workspace.files.read_text... {"path": "a"}`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

LONG = "workspace.files.read_text_with_a_name_long_enough_to_pass_the_sixty_four_character_limit"
DRAFT7 = "http://json-schema.org/draft-07/schema#"

TOOLS: list[dict[str, Any]] = [
    {"name": LONG, "description": "Read a text file of the workspace.",
     "inputSchema": {"$schema": DRAFT7, "type": "object", "additionalProperties": False,
                     "properties": {"path": {"type": "string", "description": "the file"},
                                    "options": {"$ref": "#/$defs/Options"}},
                     "required": ["path"],
                     "$defs": {"Options": {"type": "object", "additionalProperties": False,
                                           "properties": {"mode": {"const": "full"},
                                                          "source": {"type": "string", "format": "uri"}}}}}},
    {"name": "notes.add", "description": "Add a note.",
     "inputSchema": {"$schema": DRAFT7, "type": "object", "additionalProperties": False,
                     "properties": {"text": {"type": "string", "minLength": 1},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                    "extra": {"type": "object", "additionalProperties": {"type": "string"}}},
                     "required": ["text"]}},
    {"name": "notes_add", "description": "Add a note (the other server's spelling).",
     "inputSchema": {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}},
]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:  # a notification
        return None
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                                  "capabilities": {"tools": {}}, "serverInfo": {"name": "dotted", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        text = f"{params.get('name')} {json.dumps(params.get('arguments') or {}, sort_keys=True)}"
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
