"""Desktop notifications from the app: a run ended or an approval waits while the terminal is not focused.

The terminal tells the app when it loses and regains the focus (focus reporting, which Textual
turns on: `AppBlur` / `AppFocus`); a terminal that does not report it never looks unfocused, so
nothing is ever sent to someone looking at the app. How it is sent, by the `notifications`
setting:

- `terminal`: an escape sequence the terminal turns into a desktop notification: OSC 99 for
  kitty, OSC 777 `notify` for foot, Ghostty and VTE terminals, OSC 9 (iTerm2, WezTerm, Windows
  Terminal and others) otherwise; inside tmux it is passed through to the outer terminal.
- `desktop`: `notify-send` (libnotify), where a desktop session runs (a D-Bus session bus).
- `auto` (default): the terminal's sequence when the terminal is one known to show it, else
  `notify-send` when there is a desktop session, else OSC 9 (terminals ignore sequences they
  do not know).
- `off`.

`coder-tui run`, `serve` and `acp` never notify: their caller is a program or an editor.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Callable, Mapping
from typing import Any

TITLE = "coder-tui"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _clean(text: str, limit: int = 180) -> str:
    """One line without control or bidi characters (an escape sequence cannot be ended early)."""
    text = " ".join(_UNSAFE.sub(" ", text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def flavour(environ: Mapping[str, str]) -> str:
    """Which sequence this terminal shows: "99" (kitty), "777" (foot, Ghostty, VTE) or "9"; "" unknown."""
    term, program = environ.get("TERM", ""), environ.get("TERM_PROGRAM", "")
    if "kitty" in term or environ.get("KITTY_WINDOW_ID"):
        return "99"
    if term.startswith("foot") or program == "ghostty" or "ghostty" in term or environ.get("VTE_VERSION"):
        return "777"
    if program in ("iTerm.app", "WezTerm", "vscode") or environ.get("WT_SESSION") or "wezterm" in term:
        return "9"
    return ""


def sequence(title: str, body: str, environ: Mapping[str, str]) -> str:
    """The escape sequence that shows `title` and `body` as a notification in this terminal."""
    title, body = _clean(title, 60), _clean(body)
    kind = flavour(environ) or "9"
    if kind == "99":
        text = f"\x1b]99;i=coder-tui:d=0;{title}\x1b\\\x1b]99;i=coder-tui:p=body;{body}\x1b\\"
    elif kind == "777":
        text = f"\x1b]777;notify;{title.replace(';', ',')};{body}\x1b\\"
    else:
        text = f"\x1b]9;{title}: {body}\x07"
    if environ.get("TMUX"):  # tmux passes a DCS-wrapped sequence on (with allow-passthrough on)
        text = "\x1bPtmux;" + text.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return text


def desktop_session(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("DBUS_SESSION_BUS_ADDRESS")) and shutil.which("notify-send") is not None


def channel(setting: str, environ: Mapping[str, str]) -> str:
    """"terminal", "desktop" or "off" for the setting in this environment."""
    if setting in ("off", "terminal"):
        return setting
    if setting == "desktop":
        return "desktop" if desktop_session(environ) else "terminal"
    if flavour(environ):
        return "terminal"
    return "desktop" if desktop_session(environ) else "terminal"


class Notifier:
    """Watches the app's focus and its agent events; notifies about the ones that wait for the user."""

    def __init__(self, setting: Callable[[], str], write: Callable[[str], None],
                 environ: Mapping[str, str] | None = None) -> None:
        self.setting = setting  # read at each send: the config loads after the first frame
        self.write = write
        self.environ = environ if environ is not None else os.environ
        self.focused = True  # until the terminal says otherwise
        self.sent: list[tuple[str, str]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def of_app(cls, app: Any) -> Notifier:
        """The app's notifier: its `notifications` setting, sequences written after the app's frames."""
        def write(text: str) -> None:
            driver = app._driver
            if driver is not None:
                driver.write(text)
                driver.flush()

        return cls(lambda: app.config.notifications if app.config is not None else "auto", write)

    def event(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "approval_required":
            what = event.command or event.summary or event.tool
            self.notify("Approval needed", f"{event.tool}: {what}")
        elif kind == "complete":
            answer = (event.final_response or "").strip().split("\n", 1)[0]
            head = {"answered": "Finished", "stopped": "Stopped"}.get(event.completion_reason,
                                                                        f"Ended ({event.completion_reason})")
            self.notify(head, answer or head)

    def notify(self, title: str, body: str) -> None:
        if self.focused:
            return
        how = channel(self.setting(), self.environ)
        if how == "off":
            return
        self.sent.append((title, body))
        if how == "terminal":
            self.write(sequence(f"{TITLE}: {title}", body, self.environ))
            return
        task = asyncio.get_running_loop().create_task(_notify_send(f"{TITLE}: {title}", body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _notify_send(title: str, body: str) -> None:
    """`notify-send TITLE BODY`, waited for at most 5 s; a failure is not the user's problem now."""
    try:
        proc = await asyncio.create_subprocess_exec("notify-send", "--app-name=coder-tui", _clean(title, 60),
                                                    _clean(body), stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    except OSError:
        return
    try:
        await asyncio.wait_for(proc.wait(), 5)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
