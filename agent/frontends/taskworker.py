"""`coder-tui tasks worker` and `coder-tui tasks install`: due tasks run without a live app.

The worker runs the workspace's due tasks, then waits until the next one is due (at most
`--interval` seconds, so tasks scheduled meanwhile by another process are seen) until Ctrl+C.
`install` writes a systemd user timer (or, with --cron, a crontab line) that calls `tasks run-due`
for this workspace every few minutes; it shows what it writes first and writes only with --yes or
after a "y" on a terminal.
"""

from __future__ import annotations

import asyncio
import hashlib
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agent.frontends.common import UsageError


async def run_worker(options: Any, due: Any = None) -> int:
    """The worker loop; `due` runs the due tasks (default: here, `run_due`; the fleet's with --fleet)."""
    from agent.frontends.knowledge import Reporter, _stop_on_signals, open_workspace
    from agent.session.tasks import task_store

    if options.interval <= 0:
        raise UsageError("--interval must be more than 0 seconds")
    reporter = Reporter(options.json)
    workspace, config = await open_workspace(options, reporter)
    if due is None:
        from agent.session.tasks import run_due as due

        config.require_model()
    stop = asyncio.Event()
    _stop_on_signals(stop, reporter)
    reporter.notice(f"running due tasks of {workspace.label} (Ctrl+C stops)")
    failed = 0
    try:
        while not stop.is_set():
            finished = await due(workspace, config, reporter.notice, github=getattr(workspace, "launch", None))
            failed += sum(t.status == "failed" for t in finished)
            for task in finished if options.json else ():
                reporter.event({"type": "task_finished", **task.to_json()})
            store = task_store(workspace)
            try:
                upcoming = [t.due for t in store.list("pending") if t.due is not None]
            finally:
                store.close()
            wait = min([options.interval, *(max(0.0, due - time.time()) for due in upcoming)])
            try:
                await asyncio.wait_for(stop.wait(), timeout=max(0.05, wait))
            except TimeoutError:
                pass
    finally:
        await workspace.close()
    reporter.result(f"worker stopped ({failed} task(s) failed)" if failed else "worker stopped")
    return 0


def unit_name(root: Path) -> str:
    return f"coder-tui-tasks-{hashlib.sha256(str(root).encode()).hexdigest()[:8]}"


def command_line(root: Path, mode: str) -> str:
    exe = shutil.which("coder-tui") or f"{sys.executable} -m tui.cli"
    return f"{exe} tasks run-due --workspace {shlex.quote(str(root))} --mode {mode}"


def systemd_files(root: Path, every: int, mode: str) -> dict[Path, str]:
    from agent import paths

    folder = paths.config_dir().parent / "systemd" / "user"
    name = unit_name(root)
    service = (f"[Unit]\nDescription=coder-tui scheduled tasks of {root}\n\n[Service]\nType=oneshot\n"
               f"WorkingDirectory={root}\nExecStart={command_line(root, mode)}\n")
    timer = (f"[Unit]\nDescription=coder-tui scheduled tasks of {root}, every {every} min\n\n[Timer]\n"
             f"OnCalendar=*:0/{every}\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n")
    return {folder / f"{name}.service": service, folder / f"{name}.timer": timer}


def cron_line(root: Path, every: int, mode: str) -> str:
    return f"*/{every} * * * * {command_line(root, mode)} >> {shlex.quote(str(Path.home() / '.cache' / 'coder-tui-tasks.log'))} 2>&1"


# Characters a unit file or a crontab line would read as more than a path: a line end adds a
# directive or an entry, `%` is a systemd specifier and cron's line end, `$` and `\` expand, quotes close.
UNSAFE = frozenset('%$\\"\'`')


def check_path(root: Path) -> None:
    """Refuse a folder whose name a systemd unit or a crontab line cannot hold as written."""
    from agent.textsafe import visible

    bad = sorted({ch for ch in str(root) if ch in UNSAFE or not ch.isprintable()})
    if bad:
        shown = ", ".join(visible(ch) if not ch.isprintable() else repr(ch) for ch in bad)
        raise UsageError(f"the folder's path holds {shown}, which a systemd unit or a crontab line would read as "
                         f"more than a path: {visible(str(root))}; rename the folder (or run `coder-tui tasks "
                         "worker` in it) to run its tasks")


def install(options: Any) -> int:
    root = Path(options.workspace or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    check_path(root)
    if not 1 <= options.every <= 59:
        raise UsageError("--every is minutes, 1 to 59")
    mode = options.mode or "allow"
    if options.cron:
        line = cron_line(root, options.every, mode)
        print(f"This line will be added to your crontab:\n\n{line}\n")
        if not _confirmed(options):
            return 1
        return _add_cron(line)
    files = systemd_files(root, options.every, mode)
    for path, text in files.items():
        print(f"# {path}\n{text}")
    if not _confirmed(options):
        return 1
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    timer = next(p.name for p in files if p.suffix == ".timer")
    print(f"Written. Start it with: systemctl --user daemon-reload && systemctl --user enable --now {timer}")
    return 0


def _confirmed(options: Any) -> bool:
    if options.yes:
        return True
    if not sys.stdin.isatty():
        print("Nothing written: run again with --yes to write it.", file=sys.stderr)
        return False
    if input("Write it? [y/N] ").strip().lower() in ("y", "yes"):
        return True
    print("Nothing written.")
    return False


def _add_cron(line: str) -> int:
    if shutil.which("crontab") is None:
        print("coder-tui: error: there is no `crontab` command here; use the systemd timer (without --cron)",
              file=sys.stderr)
        return 2
    current = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    existing = current.stdout if current.returncode == 0 else ""
    if line in existing.splitlines():
        print("The line is in your crontab already.")
        return 0
    text = existing + ("" if not existing or existing.endswith("\n") else "\n") + line + "\n"
    done = subprocess.run(["crontab", "-"], input=text, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"coder-tui: error: crontab refused it: {done.stderr.strip()}", file=sys.stderr)
        return 1
    print("Added to your crontab.")
    return 0
