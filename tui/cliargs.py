"""Options several `coder-tui` commands share (argparse only, so --help stays fast)."""

from __future__ import annotations

import argparse

MODES = ("plan", "ask", "allow")
REASONING = ("off", "low", "medium", "high")  # agent/llm/reasoning.py LEVELS (not imported: --help stays fast)
WORKFLOWS = ("auto", "direct", "structured")  # agent/planning/models.py (not imported: --help stays fast)


def _whole(text: str, least: int, need: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {need}, got {value}")
    return value


def room_id(text: str) -> str:
    """A room id as the host shared it: not empty, no spaces or control characters."""
    value = text.strip()
    if not value:
        raise argparse.ArgumentTypeError("the room id is empty: give the id the host shared from their editor")
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a room id (it has spaces or control characters)")
    return value


def positive(text: str) -> int:
    return _whole(text, 1, "at least 1")


def max_steps_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, per: str) -> None:
    parser.add_argument("--max-steps", type=positive, metavar="N", help=f"most model turns {per} (default: 50)")


def connection_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, model_help: str = "",
                       reasoning: bool = True) -> None:
    """--model, --api-base and --api-key: which model, through which server, with which key
    (and --reasoning: how hard it thinks, for the commands that run the agent)."""
    parser.add_argument("--model", metavar="MODEL", help=model_help or "litellm model string, e.g. openai/gpt-4.1")
    parser.add_argument("--api-base", metavar="URL", help="OpenAI-compatible server address (proxy, Ollama, ...)")
    parser.add_argument("--api-key", metavar="KEY", help="API key (prefer the provider's environment variable)")
    if reasoning:
        parser.add_argument("--reasoning", choices=REASONING,
                            help="reasoning effort of models that think (default: off, or the config's)")


def workspace_option(parser: argparse.ArgumentParser, text: str = "folder (default: .)") -> None:
    parser.add_argument("--workspace", metavar="DIR", default=".", help=text)


SERVE_HELP = """Serve the agent over HTTP for editors (the SSE protocol of AgentSmithy, seed 002).

Routes (all but /api/health and the /view page need the header `Authorization: Bearer TOKEN`):
  POST /api/chat            {"messages": [...], "context": {"current_file": {...}, "open_files": [...]},
                            "stream": true, "apply": "server"|"client", "session_id": "..."}
                            answered as text/event-stream: data: {"content"} {"type": "diff", ...}
                            {"type": "classification", ...} {"error"} ... and {"done": true} last
                            ("stream": false: one JSON object with the text and the diffs)
  POST /api/approvals/ID    {"decision": "allow_once"|"allow_all"|"deny"|"stop", "feedback": "..."}
  POST /api/sessions/ID/plan  {"decision": "approve"|"edit"|"feedback"|...}: answer a plan review
  GET  /api/sessions        the live sessions, whether they run, and their pending approvals
  GET  /api/health          {"status": "ok"}
  GET  /view                a browser page (a phone on the same network too, with --host and --token):
                            follow a session, answer its approvals, send a prompt; it asks for the
                            token (or takes it from the address: /view#token=TOKEN, as the banner prints)
"apply": "client" writes nothing on the server: edits go to an in-memory copy seeded from the
request's file contents, and the diff events carry them for the editor to apply. A conversation
continues when a request carries the session_id of the first response (X-Session-Id header, or
the first event). A streaming client that disconnects has --reconnect-grace seconds (30 by
default) to come back with Last-Event-ID and its session; its run goes on meanwhile (approvals wait)
and is stopped when nobody came back. A "stream": false request or a WebSocket that closes stops its
run at once. See docs/serve.md.
"""


def _count(text: str) -> int:
    """A whole number, 0 or more."""
    return _whole(text, 0, "0 or more")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {value}")
    return value


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coder-tui serve", description=SERVE_HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workspace", nargs="?", default=".", metavar="DIR", help="folder to work in (default: .)")
    parser.add_argument("--github", metavar="OWNER/REPO[@REF]", help="work on a GitHub repository through the API")
    parser.add_argument("--clone", action="store_true", help="with --github: work in a blobless clone")
    server = parser.add_argument_group("server")
    server.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: 127.0.0.1; any other needs --token or CODER_TUI_SERVE_TOKEN)")
    server.add_argument("--port", type=_port, default=8765, help="port (default: 8765; 0 picks a free one)")
    server.add_argument("--token", metavar="TOKEN",
                        help="the bearer token clients send (default: CODER_TUI_SERVE_TOKEN, else a new one is printed)")
    server.add_argument("--max-body", type=positive, default=8 * 1024 * 1024, metavar="BYTES",
                        help="largest request body accepted; larger ones get 413 (default: 8 MiB)")
    server.add_argument("--rate-limit", type=_count, default=30, metavar="N",
                        help="turns (POST /api/chat) one client may start a minute; more get 429 with "
                             "Retry-After (default: 30; 0: no limit)")
    server.add_argument("--reconnect-grace", type=_count, default=30, metavar="SECONDS",
                        help="how long a streamed turn goes on after its client disconnected, for the client "
                             "to reconnect with Last-Event-ID (default: 30; 0: stop at once)")
    server.add_argument("--no-host", action="store_true",
                        help="keep sessions in this process instead of the session host (by default they live in "
                             "the host, started on demand, where `coder-tui sessions` and `run --attach` see them)")
    agent = parser.add_argument_group("agent")
    agent.add_argument("--mode", choices=MODES,
                       help="approval mode (default: ask, or the config's); ask sends approval_required events")
    connection_options(agent)
    agent.add_argument("--workflow", choices=WORKFLOWS, help="as for `coder-tui run`")
    max_steps_option(agent, "per request")
    agent.add_argument("--profile", metavar="NAME", help="agent profile (`coder-tui profiles` lists them)")
    agent.add_argument("--trust", action="store_true", help="trust this folder's .coder-tui.toml (as for `run`)")
    agent.add_argument("--sandbox", choices=("auto", "bwrap", "off"), help="shell sandbox (as for `run`)")
    return parser
