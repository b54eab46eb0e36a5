"""Shell commands in a bubblewrap sandbox (`sandbox = "auto" | "bwrap" | "off"`).

Inside: the workspace folder writable except its `.git` (read-only: a hook or `core.fsmonitor`
written there would run outside the sandbox on the user's next `git commit`); the system
read-only; hidden behind empty private folders: `$HOME` (a private, writable one instead),
the folder holding the project and its neighbours (other projects), coder-tui's config, data
and cache folders, `/run/user/UID` (the user's sockets) and `/tmp` (private). Their own process
namespace and /proc (so neither our environment nor any other process is visible), no network
unless the user allowed it for that command (the command asked for it and the user approved it;
allowing the tool for the session does not include the network) or `sandbox_network = true`. Every command, in
the sandbox or not, gets only the environment variables of an allow-list (`ENV_NAMES`, plus
`shell_env` in the user's config). `auto` uses bubblewrap when a probe run works and says once,
per session, when it cannot, and what is then not protected; `bwrap` refuses to run a command
without it; `off` runs commands as before. Either way our own process is made non-dumpable
(`protect_process`), so a same-user command cannot read our memory or environment in /proc.
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
from agent.tools.sandbox_guard import Guard

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
UNPROTECTED = ("they can read and change every file your user can (~/.ssh, other projects, coder-tui's config "
               "and sessions, the repository's .git hooks), reach the network and your sockets; only "
               "coder-tui's own memory and environment stay out of their reach")
ENV_NAMES = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ",
             "TMPDIR", "EDITOR", "VISUAL", "NO_COLOR", "FORCE_COLOR", "CI", "HOSTNAME", "VIRTUAL_ENV", "CONDA_PREFIX",
             "CONDA_DEFAULT_ENV", "PYTHONPATH", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE",
             "JAVA_HOME", "GOPATH", "GOROOT", "GOFLAGS", "GOCACHE", "GOMODCACHE", "CARGO_HOME", "RUSTUP_HOME",
             "RUSTUP_TOOLCHAIN", "NVM_DIR", "NODE_PATH", "PNPM_HOME", "GEM_HOME", "GEM_PATH", "PYENV_ROOT",
             "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
             "LIBRARY_PATH", "CPATH", "MANPATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
             "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
SYSTEM_DIRS = {"/", "/usr", "/usr/local", "/opt", "/var", "/etc", "/nix", "/snap", "/bin", "/sbin", "/lib",
               "/lib64", "/lib32", "/srv", "/mnt", "/media", "/tmp", "/var/tmp"}


@dataclass
class SandboxPolicy:
    mode: str = "auto"  # auto | bwrap | off
    network: bool = False  # config: commands always get the network
    gate: Any = None  # the session's ApprovalGate: which commands the user allowed the network
    env_names: tuple[str, ...] = ()  # config `shell_env`: more variables passed to commands (NAME or PREFIX*)
    sockets: tuple[str, ...] = ()  # config `sandbox_sockets`: system sockets (or their folders) commands may reach
    warned: bool = field(default=False, init=False)
    guard: Guard | None = field(default=None, init=False)  # what is kept read-only, what commands left


def configure(session: Any) -> SandboxPolicy:
    """Give a session's shell tools its sandbox settings and approval gate (front ends call this)."""
    config = session.config
    policy = SandboxPolicy(getattr(config, "sandbox", "auto"), bool(getattr(config, "sandbox_network", False)),
                           session.gate, tuple(getattr(config, "shell_env", None) or ()),
                           tuple(getattr(config, "sandbox_sockets", None) or ()))
    session.ctx.extras["sandbox"] = policy
    protect_process()
    return policy


@functools.cache
def protect_process() -> bool:
    """prctl(PR_SET_DUMPABLE, 0): processes of the same user (a command the model runs) can no
    longer read our /proc/PID/mem, environ or fds, sandbox or not. Linux only; once a process."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        return False


def command_env(ctx: ToolContext | None, sandboxed: bool, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a shell command: only the allow-listed variables (and `shell_env`)."""
    extra = policy_of(ctx).env_names if ctx is not None else ()
    names = (*ENV_NAMES, *extra)
    exact = {n for n in names if not n.endswith("*")}
    prefixes = tuple(n[:-1] for n in names if n.endswith("*"))
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if k in exact or (prefixes and k.startswith(prefixes))}
    env.setdefault("TERM", "dumb")
    env.update(PAGER="cat", GIT_PAGER="cat")
    if sandboxed:
        env["TMPDIR"] = "/tmp"
    return env


def policy_of(ctx: ToolContext) -> SandboxPolicy:
    policy = ctx.extras.get("sandbox")
    if not isinstance(policy, SandboxPolicy):
        policy = ctx.extras["sandbox"] = SandboxPolicy()
    return policy


def bwrap_args(root: Path, network: bool, kept: list[str] | None = None, sockets: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line up to (not including) the program to run. `kept`: more bind
    arguments over the workspace (agent/tools/sandbox_guard.py); `sockets`: what of /run to keep."""
    root = Path(os.path.realpath(root))
    root_text = str(root)
    hidden = hidden_folders(root)
    args = [_bwrap_path() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            *system_sockets_hidden(sockets)]
    for folder in (f for f in hidden if not f.is_relative_to(root)):  # after /tmp: a home under it still exists
        args += ["--tmpfs", str(folder)]
    args += ["--bind", root_text, root_text]
    for folder in (f for f in hidden if f.is_relative_to(root) and f != root):
        args += ["--tmpfs", str(folder)]
    for git_folder in _git_folders(root):
        args += ["--ro-bind", git_folder, git_folder]
    args += kept or []
    args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", root_text]
    if os.geteuid() == 0:
        args += ["--cap-drop", "ALL"]  # root inside could otherwise remount / read-write
    if not network:
        args.append("--unshare-net")
    return [*args, "--"]


# Folders of the system that hold programs, not sockets: kept when /run is hidden (NixOS runs from them).
RUN_KEPT = ("/run/current-system", "/run/booted-system", "/run/wrappers", "/run/opengl-driver")


def system_sockets_hidden(allowed: tuple[str, ...] = ()) -> list[str]:
    """bwrap arguments that hide the system's sockets: /run (the docker socket, the system bus,
    databases, systemd; /var/run leads there) becomes an empty folder, but for what programs need
    (the resolver's file when /etc/resolv.conf leads into /run, NixOS's system folders) and the
    sockets or folders the user allowed by path (`sandbox_sockets` in config.toml). /tmp (X11's
    sockets) is private already; sockets without a path are out of reach without the network."""
    args = ["--tmpfs", "/run"]
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        args += ["--tmpfs", "/var/run"]
    resolver = os.path.realpath("/etc/resolv.conf")
    kept = [p for p in (*RUN_KEPT, resolver) if p.startswith(("/run/", "/var/run/")) and os.path.exists(p)]
    for path in kept:
        args += ["--ro-bind", path, path]
    for path in allowed:
        if os.path.isabs(path) and os.path.exists(path):
            args += ["--bind", path, path]
    return args


def hidden_folders(root: Path) -> list[Path]:
    """Folders replaced by empty private ones: $HOME and the account's own home folder (the password
    database's, when $HOME says another), the project's neighbours, our own folders, the user's
    runtime folder (sockets). Outermost first; a folder is hidden once."""
    home = Path(os.path.realpath(os.path.expanduser("~")))
    top = _project_top(root)
    candidates = [home, top.parent, paths.config_dir(), paths.data_dir(), paths.cache_dir(),
                  Path(f"/run/user/{os.getuid()}"), *_account_home()]
    chosen: list[Path] = []
    for folder in sorted({Path(os.path.realpath(c)) for c in candidates}, key=lambda p: len(p.parts)):
        if str(folder) in SYSTEM_DIRS or root.is_relative_to(folder) and folder != home and folder != top.parent:
            continue
        nested = any(folder.is_relative_to(c) and not folder.is_relative_to(root) for c in chosen)
        if folder == root or nested and folder != home:  # $HOME is always there, empty and writable
            continue
        if folder.is_dir():
            chosen.append(folder)
    return chosen


def _account_home() -> list[Path]:
    import pwd

    try:
        return [Path(pwd.getpwuid(os.getuid()).pw_dir)]
    except (KeyError, OSError):
        return []


def _project_top(root: Path) -> Path:
    """The folder holding the repository the workspace is in (the workspace when there is none)."""
    for folder in (root, *root.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return root


def _git_folders(root: Path) -> list[str]:
    """What is mounted read-only over the writable workspace: the repository's `.git` (and, for a
    subfolder of a repository, the one above), and the git folders of a `--clone` worktree."""
    folders: list[str] = []
    top = _project_top(root)
    marker = top / ".git"
    if os.path.lexists(marker):
        real = Path(os.path.realpath(marker))
        if real == marker or real.is_relative_to(root):
            folders.append(str(real))
    return [*folders, *_clone_git_dirs(top)]


def _clone_git_dirs(root: Path) -> list[str]:
    """The git folders of a linked worktree (a `--clone` session's, in our cache, or one made by
    `git worktree add` whose repository names this folder back), mounted read-only so that git
    can read history inside. A `.git` file naming any other folder (~/.ssh) gets nothing bound.
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
    try:
        linked = Path((gitdir / "gitdir").read_text().strip()).resolve() == marker.resolve()
    except OSError:
        linked = False
    if not (gitdir.is_relative_to(cache) or linked):
        return []
    return sorted(str(f) for f in folders if f.is_dir())


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
    """Run the probe (once) and the workspace walk off the event loop, before `wrap` needs them."""
    root = ctx.workspace.root
    policy = policy_of(ctx)
    if policy.mode != "off" and root is not None:
        await asyncio.to_thread(probe, str(root))
        if policy.guard is None or policy.guard.root != Path(root):
            policy.guard = Guard(Path(root))
        await policy.guard.ready()


def begin(ctx: ToolContext) -> None:
    """A sandboxed process starts (what `wrap` made): missing protected names stay unmakeable until
    the last one ends."""
    guard = policy_of(ctx).guard
    if guard is not None:
        guard.begin()


async def end(ctx: ToolContext, ended: bool = True) -> str:
    """A sandboxed process ended (`ended`), or a command in a shell that stays open did: what
    commands left that coder-tui disabled, as lines for the command's result (and warnings)."""
    guard = policy_of(ctx).guard
    if guard is None:
        return ""
    guard.warn = lambda message: ctx.emit(WarningEvent(message=message))
    return "".join(f"note: {message}\n" for message in await guard.end(ended))


async def close(ctx: ToolContext) -> None:
    """The session ends: the last walk finishes (its warnings said), no mount point stays behind."""
    guard = policy_of(ctx).guard
    if guard is not None:
        await guard.close()


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
        kept = policy.guard.binds() if policy.guard is not None else []
        return [*bwrap_args(Path(root), network, kept, policy.sockets), *argv], True
    if policy.mode == "bwrap":
        raise ToolError(f"sandbox = \"bwrap\" but {why}; {INSTALL_HINT}, or set sandbox = \"off\"")
    if not policy.warned:
        policy.warned = True
        ctx.emit(WarningEvent(message=f"shell commands run without a sandbox: {why}; {UNPROTECTED}. {INSTALL_HINT}"))
    return argv, False


def network_note(requested: bool, granted: bool) -> str:
    if requested and not granted:
        return ("note: this command ran without network access: the user did not allow it for this "
                "command (allow mode and allowing a tool for the session never grant it; "
                "`sandbox_network = true` in config.toml does)\n")
    return ""
