"""Options several `coder-tui` commands share (argparse only, so --help stays fast)."""

from __future__ import annotations

import argparse

MODES = ("plan", "ask", "allow")


def connection_options(parser: argparse.ArgumentParser, model_help: str = "") -> None:
    """--model, --api-base and --api-key: which model, through which server, with which key."""
    parser.add_argument("--model", metavar="MODEL", help=model_help or "litellm model string, e.g. openai/gpt-4.1")
    parser.add_argument("--api-base", metavar="URL", help="OpenAI-compatible server address (proxy, Ollama, ...)")
    parser.add_argument("--api-key", metavar="KEY", help="API key (prefer the provider's environment variable)")


def workspace_option(parser: argparse.ArgumentParser, text: str = "folder (default: .)") -> None:
    parser.add_argument("--workspace", metavar="DIR", default=".", help=text)
