"""Shell commands in a bubblewrap sandbox (`sandbox = "auto" | "bwrap" | "off"`).

Inside: the workspace folder writable, the rest of the file system read-only, a private /tmp,
their own process namespace and /proc (so neither our environment nor any other process is
visible), no network unless the user allowed it for that command (the command asked for it
and the user approved it, or allowed the tool for the session) or `sandbox_network = true`.
`auto` uses bubblewrap when a probe run works and says once, per session, when it cannot;
`bwrap` refuses to run a command without it; `off` runs commands as before.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent import paths
from agent.events import WarningEvent
from agent.tools.base import ToolContext, ToolError

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


@dataclass
class SandboxPolicy:
    mode: str = "auto"  # auto | bwrap | off
    network: bool = False  # config: commands always get the network
    gate: Any = None  # the session's ApprovalGate: which commands the user allowed the network
    warned: bool = field(default=False, init=False)


def configure(session: Any) -> SandboxPolicy:
    """Give a session's shell tools its sandbox settings and approval gate (front ends call this)."""
    config = session.config
    policy = SandboxPolicy(getattr(config, "sandbox", "auto"), bool(getattr(config, "sandbox_network", False)),
                           session.gate)
    session.ctx.extras["sandbox"] = policy
    return policy


def policy_of(ctx: ToolContext) -> SandboxPolicy:
    policy = ctx.extras.get("sandbox")
    if not isinstance(policy, SandboxPolicy):
        policy = ctx.extras["sandbox"] = SandboxPolicy()
    return policy


def bwrap_args(root: Path, network: bool) -> list[str]:
    """The bubblewrap command line up to (not including) the program to run."""
    root_text = str(root)
    args = [_bwrap_path() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--bind", root_text, root_text, "--unshare-pid", "--unshare-ipc",
            "--die-with-parent", "--chdir", root_text]
    for folder in _clone_git_dirs(root):
        args += ["--bind", folder, folder]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]  # root inside could otherwise remount / read-write
    if not network:
        args.append("--unshare-net")
    return [*args, "--"]


def _clone_git_dirs(root: Path) -> list[str]:
    """The git folders of a `--clone` session's worktree, which live outside it in our cache.

    git in the sandbox (a commit, an add) writes there. Only folders under coder-tui's own cache
    are bound: a `.git` file in any other folder could name ~/.ssh as its "git dir".
    """
    marker = root / ".git"
    try:
        text = marker.read_text(errors="replace").strip() if marker.is_file() else ""
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = (root / text.removeprefix("gitdir:").strip()).resolve()
    folders = {gitdir}
    try:
        folders.add((gitdir / (gitdir / "commondir").read_text().strip()).resolve())
    except OSError:
        pass
    cache = paths.cache_dir().resolve()
    return sorted(str(f) for f in folders if f.is_dir() and f.is_relative_to(cache))


@functools.cache
def _bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def probe(root: str) -> str | None:
    """None when bubblewrap runs here; otherwise why not (checked once per folder and process)."""
    if _bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        done = subprocess.run([*bwrap_args(Path(root), False), "true"], capture_output=True, text=True,
                              timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not start ({exc})"
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"bubblewrap does not work here ({detail})"
    return None


async def ready(ctx: ToolContext) -> None:
    """Run the probe (once) off the event loop, before `wrap` needs its answer."""
    root = ctx.workspace.root
    if policy_of(ctx).mode != "off" and root is not None:
        await asyncio.to_thread(probe, str(root))


def wants_network(ctx: ToolContext, tool: str, command: str, asked: bool) -> bool:
    """Whether this command gets the network: config says so, or the user allowed it."""
    policy = policy_of(ctx)
    if policy.network:
        return True
    if not asked or policy.gate is None:
        return False
    return bool(policy.gate.network_allowed(tool, command))


def wrap(ctx: ToolContext, argv: list[str], network: bool) -> tuple[list[str], bool]:
    """argv to run (inside the sandbox when it applies) and whether it is sandboxed."""
    policy = policy_of(ctx)
    root = ctx.workspace.root
    if policy.mode == "off" or root is None:
        return argv, False
    why = probe(str(root))
    if why is None:
        return [*bwrap_args(Path(root), network), *argv], True
    if policy.mode == "bwrap":
        raise ToolError(f"sandbox = \"bwrap\" but {why}; {INSTALL_HINT}, or set sandbox = \"off\"")
    if not policy.warned:
        policy.warned = True
        ctx.emit(WarningEvent(message=f"shell commands run without a sandbox: {why}; {INSTALL_HINT}"))
    return argv, False


def network_note(requested: bool, granted: bool) -> str:
    if requested and not granted:
        return ("note: this command ran without network access: the user did not allow it for this "
                "command (allow mode never grants it; `sandbox_network = true` in config.toml does)\n")
    return ""
