"""Built-in tools. `default_tools()` returns one instance of each."""

from __future__ import annotations

from agent.tools.base import Tool


def default_tools() -> list[Tool]:
    from agent.tools.files import FILE_TOOLS
    from agent.tools.knowledge import KNOWLEDGE_TOOLS
    from agent.tools.lines import LINE_TOOLS
    from agent.tools.lsp import LSP_TOOLS
    from agent.tools.planning import PLANNING_TOOLS
    from agent.tools.scratchpad import SCRATCHPAD_TOOLS
    from agent.tools.search import SEARCH_TOOLS
    from agent.tools.shell import SHELL_TOOLS
    from agent.tools.web import WebFetch

    classes = [*FILE_TOOLS, *LINE_TOOLS, *SEARCH_TOOLS, *PLANNING_TOOLS, *SCRATCHPAD_TOOLS, *SHELL_TOOLS, WebFetch, *KNOWLEDGE_TOOLS, *LSP_TOOLS]
    return [cls() for cls in classes]
