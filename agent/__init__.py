"""coder-tui agent core: the tool loop, workspaces, approvals and sessions.

Nothing here imports Textual or the `tui` package, and importing `agent` is cheap:
heavy modules (litellm, GitPython, pycrdt) load only where they are used.
"""

__version__ = "0.1.0"
