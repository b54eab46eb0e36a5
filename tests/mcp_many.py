"""A stdio MCP server with many tools (`python -m tests.mcp_many N`): `svc_0` ... `svc_{N-1}`, each
"Look up item K of the catalogue", plus `weather_forecast` ("The weather forecast for a city")
at the end. Every call is answered with what it received. Plain JSON-RPC over stdin/stdout."""

from __future__ import annotations

import json
import sys
from typing import Any


def tools(count: int) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"key": {"type": "string"}}}
    made = [{"name": f"svc_{k}", "description": f"Look up item {k} of the catalogue.", "inputSchema": schema}
            for k in range(count)]
    made.append({"name": "weather_forecast", "description": "The weather forecast for a city.",
                 "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}})
    return made


def answer(request: dict[str, Any], count: int) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None
    if method == "initialize":
        result: dict[str, Any] = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                                  "capabilities": {"tools": {}}, "serverInfo": {"name": "many", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools(count)}
    elif method == "tools/call":
        text = f"{params.get('name')} {json.dumps(params.get('arguments') or {}, sort_keys=True)}"
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    for line in sys.stdin:
        if line.strip() and (reply := answer(json.loads(line), count)) is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
