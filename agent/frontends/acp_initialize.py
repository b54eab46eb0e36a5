"""`coder-tui acp` answers the editor's `initialize` before it imports the ACP SDK (issue 22).

The SDK's schema (pydantic models of the whole protocol) takes most of a second to import; the
editor's first request needs none of it. So the first line on stdin is read here: an
`initialize` request is answered at once, in the bytes the SDK would send
(tests/acp/test_acp_initialize.py compares them), and the SDK then takes the rest of stdin as
usual. Any other first line (or one that is not a well-formed request) is left to the SDK whole.
Outside the `agent.frontends.acp` package on purpose: importing that package imports the SDK.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from agent import __version__

PROTOCOL_VERSION = 1  # acp.PROTOCOL_VERSION of the SDK we were checked against (the test compares)
MAX_FIRST_LINE = 1 << 20


@dataclass
class Early:
    rest: bytes  # stdin read past the answered line (or all of it, unanswered): the SDK reads it first
    client_fs: tuple[bool, bool] | None = None  # (fs/read_text_file, fs/write_text_file); None: not answered


def answer_initialize(options: Any, fd_in: int = 0, fd_out: int = 1) -> Early:
    """Read the first line of fd_in; when it is `initialize`, answer it on fd_out."""
    data = _first_line(fd_in)
    line, newline, rest = data.partition(b"\n")
    request = _initialize(line) if newline else None
    if request is None:
        return Early(data)
    fs = request["params"].get("clientCapabilities") or {}
    fs = fs.get("fs") if isinstance(fs, dict) else None
    fs = fs if isinstance(fs, dict) else {}
    client_fs = (fs.get("readTextFile") is True, fs.get("writeTextFile") is True)
    os.write(fd_out, (json.dumps(response(request, takes_images(options)), separators=(",", ":")) + "\n").encode())
    return Early(rest, client_fs)


def response(request: dict[str, Any], image: bool) -> dict[str, Any]:
    """What the SDK sends for our InitializeResponse (agent/frontends/acp/__init__.py `initialize`)."""
    capabilities = {"loadSession": True, "promptCapabilities": {"image": image, "audio": False, "embeddedContext": True},
                    "mcpCapabilities": {"http": True, "sse": False}, "sessionCapabilities": {"list": {}}}
    version = min(request["params"]["protocolVersion"], PROTOCOL_VERSION)
    return {"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": version, "agentCapabilities": capabilities,
        "agentInfo": {"name": "coder-tui", "title": "coder-tui", "version": __version__}}}


def takes_images(options: Any) -> bool:
    """The `image` capability: the `vision` setting of the config the flags choose, else litellm's
    model table (agent/frontends/acp/__init__.py `_takes_images`, without waiting for any import)."""
    from agent.config import ConfigError, load_config
    from agent.images import accepts

    try:
        config = load_config(None, {"model": options.model, "api_base": options.api_base})
    except ConfigError:
        return False
    if not config.model:
        return False
    return accepts(config.model, config.vision)


def _first_line(fd: int) -> bytes:
    data = b""
    while b"\n" not in data and len(data) < MAX_FIRST_LINE:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


def _initialize(line: bytes) -> dict[str, Any] | None:
    """The request when `line` is a well-formed `initialize` this module can answer as the SDK would."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize" or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)) or not isinstance(params, dict):
        return None
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 65535:
        return None
    capabilities, info = params.get("clientCapabilities"), params.get("clientInfo")
    if capabilities is not None and not _plain_capabilities(capabilities):
        return None
    if info is not None and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and isinstance(info.get("version"), str)):
        return None
    return message


def _plain_capabilities(capabilities: Any) -> bool:
    """Client capabilities the SDK would accept without a question (anything else: the SDK decides)."""
    if not isinstance(capabilities, dict):
        return False
    fs = capabilities.get("fs")
    if fs is None:
        return True
    return isinstance(fs, dict) and all(isinstance(fs.get(k, False), bool) for k in ("readTextFile", "writeTextFile"))
