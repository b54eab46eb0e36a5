"""`run`'s one driver: a `SessionHandle` (agent/client) printed as `run` prints it, its approvals
answered from stdin lines, Ctrl+C a `Stop`. `coder-tui run --attach ID "prompt"` drives a handle of
a session in the session host with it.

The session (ID, a prefix, `last`, or `new`) is opened in the host or joined there if it is live;
the prompt is queued behind any running turn, and this command prints that turn like `run` does
(readable text, or with --json every line: the events in `run --json` shapes and the host's own
lines). Approvals are answered on stdin as `run` takes them; any attached front end may answer
first. When stdin closes, the approvals of this command's own turn are denied (exit code 3), as
`run` does; other front ends' turns are theirs to answer. When no host can be used, the command
runs in-process (`run --resume ID`, started by tui/cli.py on `IN_PROCESS`) and says so once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any

from agent import events as ev
from agent.approval import Decision
from agent.client.commands import Answer, Note, Prompt, Reply, Stop
from agent.client.handle import SessionHandle
from agent.client.hosted import HostedHandle, HostRefused, HostUnavailable, open_in_host
from agent.frontends.common import UsageError, handle_ctrl_c
from agent.frontends.printing import JsonPrinter, TextPrinter
from agent.frontends.stdin import parse_answer
from agent.session.ports import SessionOptions
from agent.secrets import redact
from agent.textsafe import json_line, visible

UNANSWERED = 3
CLOSED = "stdin is closed, so nobody here can answer approvals; answer on stdin, from another front end, or use --mode allow"


IN_PROCESS = -1  # main's answer when no host can be used: the caller runs `run` in-process


async def run_attached(options: SessionOptions, ref: str) -> int:
    """`run --attach ref`: the session opened or joined in the session host, driven by `RunDriver`."""
    if ref == "new" and not options.workspace:
        options = options.model_copy(update={"workspace": os.getcwd()})
    name = f"run --attach (pid {os.getpid()})"
    handle: HostedHandle | None = None
    try:
        try:
            handle = await open_in_host(ref, name, _open_options(options))
        except HostRefused as exc:
            raise UsageError(f"--attach: {exc}") from None
        driver = RunDriver(handle, options, joined=handle.state)
        if handle.started_host:
            driver.printer.notice("started the session host (it stays for the next front end)")
        return await driver.run()
    except HostUnavailable as exc:
        print(f"coder-tui: the session host is not available ({visible(str(exc))}); running in-process",
              file=sys.stderr)
        return IN_PROCESS
    except (ConnectionError, TimeoutError):  # the host went away while the session was opened
        print("coder-tui: error: the session host stopped (connection lost); `coder-tui run --attach ID` or "
              "`run --resume ID` continues the session from its record", file=sys.stderr)
        return 1
    finally:
        if handle is not None:
            await handle.close(detach=True)


def _open_options(options: SessionOptions) -> dict[str, Any]:
    values = options.model_dump(exclude_none=True, exclude={"json_output", "prompt", "resume"})
    if options.workspace:
        values["workspace"] = os.path.abspath(options.workspace)
    if options.api_key is not None:
        values["api_key"] = options.api_key
    return values


class RunDriver:
    """`run` over one `SessionHandle`: its items printed as `run` prints them, stdin's answers and
    Ctrl+C sent as commands, the exit code of this command's prompt's turn. `joined`: what the
    session was doing when this handle joined it (`running`, `queued`, the `clients` attached)."""

    def __init__(self, handle: SessionHandle, options: SessionOptions, joined: dict[str, Any] | None = None,
                 printer: Any = None) -> None:
        self.options, self.handle, self.joined = options, handle, dict(joined or {})
        self.printer: Any = printer or (JsonPrinter(sys.stdout) if options.json else TextPrinter(sys.stdout, sys.stderr))
        self.mine = False  # this command's turn is the running one
        self.early: list[Decision] = []  # answers typed before their approval came
        self.stdin_closed = False
        self.unanswered = 0
        self.session_id = handle.session_id
        self.complete: ev.Complete | None = None
        self.pending: list[str] = []  # approval ids waiting, oldest first
        self._totals: Any = None
        self._ended: asyncio.Future[int] | None = None  # the handle closing, or the turn waited for ending
        self.name = handle.name

    async def run(self, read_stdin: bool = True) -> int:
        """Print the session so far, then drive this command's prompt (or the running turn) to its end."""
        self._ended = asyncio.get_running_loop().create_future()
        self.handle.listen(self._item)  # no await since the handle opened: nothing is missed
        self._replay()
        running = bool(self.joined.get("running") or self.joined.get("queued"))
        if not self.options.prompt.strip() and not running:
            return 0
        if read_stdin:
            self._listen_stdin()
            _interrupt(self)
        return await self._until_done()

    def _replay(self) -> None:
        """The session so far: printed whole in JSON mode; in text mode, one line and what waits."""
        history = self.handle.history()
        self.pending = self.handle.pending
        if self.options.json:
            for item in history:
                self._item(item, live=False)
            self._print_host({"type": "replay_end", **self.joined})
            return
        others = ", ".join(self.joined.get("clients", [])) or "nobody else"
        self.printer.notice(f"attached to session {self.session_id} ({len(history)} earlier lines; attached: {others})")
        asked = {item.approval_id: item for item in history if isinstance(item, ev.ApprovalRequired)}
        for approval_id in self.pending:
            if approval_id in asked:
                self.printer.handle(asked[approval_id])

    async def _until_done(self) -> int:
        """This command's prompt's turn (or, without one, the turn running now) to its end."""
        assert self._ended is not None
        handle = self.handle
        lost = asyncio.ensure_future(_closed(handle))
        waits: set[asyncio.Future[Any]] = {self._ended, lost}
        if self.options.prompt.strip():
            waits.add(asyncio.ensure_future(handle.submit(Prompt(self.options.prompt))))
        done, rest = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiting in rest:
            waiting.cancel()
        if self._ended in done:
            return self._ended.result()
        result = None if lost in done else next(iter(done)).result()
        if not isinstance(result, Reply) or result.kind == "unavailable":
            print(f"coder-tui: error: the session host stopped (connection lost); session {self.session_id} "
                  f"is recorded up to its last event: `coder-tui run --resume {self.session_id}` or "
                  f"`--attach {self.session_id}` continues it", file=sys.stderr)
            return 1
        if not result.ok:
            raise UsageError(f"--attach: {result.error}")
        if result.data.get("dropped"):
            return 1  # said as the prompts_dropped line came
        return self._exit_code(result.data)

    def _exit_code(self, done: dict[str, Any]) -> int:
        """The verdict, then the summary that agrees with it (as `run` ends: ✗ denied after the error)."""
        complete, code = self.complete, 0 if done.get("success") else 1
        if self.unanswered:
            self.printer.handle(ev.ErrorEvent(recoverable=False, message=(
                f"{self.unanswered} approval(s) denied because stdin closed before an answer came (exit code "
                f"{UNANSWERED}). Answer on stdin (e.g. `echo y |`), from another front end, or use --mode allow.")))
            code = UNANSWERED
            if complete is not None:
                complete = complete.model_copy(update={"success": False, "completion_reason": "denied"})
        if complete is not None and not self.options.json:
            from agent.loop import Totals

            self.printer.summary(complete, self._totals or Totals(), self.session_id)
        return code

    def _item(self, item: object, live: bool = True) -> None:
        if isinstance(item, Note):
            self._note(item.data, live)
            return
        event: Any = item
        if live and isinstance(event, ev.ApprovalRequired):
            self._asked(event.approval_id)
        elif live and isinstance(event, ev.ApprovalResolved) and event.approval_id in self.pending:
            self.pending.remove(event.approval_id)
        if isinstance(event, ev.Complete) and self.mine:
            self.complete = event
        if isinstance(event, ev.Usage):
            self._totals = _totals(event)
        self.printer.handle(event)

    def _note(self, line: dict[str, Any], live: bool) -> None:
        self._print_host(line)
        kind = line.get("type")
        if not live:
            return
        if kind == "turn_started":
            self.mine = line.get("by") == self.name
        elif kind == "turn_done" and not self.options.prompt.strip():
            self._end(self._exit_code(line))  # no prompt of its own: the turn running when it attached
        elif kind == "prompts_dropped" and any(p.get("by") == self.name for p in line.get("prompts", [])):
            print(f"coder-tui: stopped: {visible(str(line['by']))} stopped the run, and this command's prompt, "
                  f"queued behind it, was dropped (session {self.session_id})", file=sys.stderr)
        elif kind == "host_closing":
            print(f"coder-tui: error: the session host is closing; session {self.session_id} is recorded",
                  file=sys.stderr)
            self._end(1)

    def _end(self, code: int) -> None:
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(code)

    def _print_host(self, line: dict[str, Any]) -> None:
        if self.options.json:
            sys.stdout.write(json_line(redact(json.dumps(line, ensure_ascii=False))) + "\n")
            sys.stdout.flush()
            return
        kind = line["type"]
        mine = line.get("by") == self.name
        if kind == "client_joined" and line["client"] != self.name:
            self.printer.notice(f"· {line['client']} attached")
        elif kind == "client_left":
            self.printer.notice(f"· {line['client']} left")
        elif kind == "prompt_queued" and mine:
            self.printer.notice(f"· queued behind {line['ahead']} turn(s)")
        elif kind == "turn_started" and not mine:
            self.printer.notice(f"▶ {line['by']}: {line['prompt']}")
        elif kind == "approval_answered":
            self.printer.notice(f"  answered by {line['by']}")
        elif kind == "mode_changed":
            self.printer.notice(f"· {line['by']} set the mode to {str(line['mode']).upper()}")
        elif kind == "prompts_dropped" and not any(p.get("by") == self.name for p in line.get("prompts", [])):
            self.printer.notice(f"· {line['by']} stopped the run; {len(line['tickets'])} queued prompt(s) dropped")

    # -- answers on stdin ---------------------------------------------------------------------
    def _listen_stdin(self) -> None:
        loop = asyncio.get_running_loop()

        def read() -> None:
            try:
                for text in sys.stdin:
                    loop.call_soon_threadsafe(self.line, text)
            except (OSError, ValueError):
                pass
            loop.call_soon_threadsafe(self.closed)

        if sys.stdin is None:
            self.stdin_closed = True
            return
        threading.Thread(target=read, name="attach-stdin", daemon=True).start()

    def line(self, text: str) -> None:
        """One line of stdin: an answer (a shorthand or a JSON decision), or an error saying why not."""
        text = text.strip()
        if not text:
            return
        try:
            approval_id, decision = parse_answer(text)
        except ValueError as exc:
            self.printer.handle(ev.ErrorEvent(message=f"ignored stdin line: {exc}", recoverable=True))
            return
        if approval_id is None and not self.pending:
            self.early.append(decision)
            return
        self._send(approval_id, decision)

    def _asked(self, approval_id: str) -> None:
        self.pending.append(approval_id)
        if self.early:
            self._send(approval_id, self.early.pop(0))
        elif self.stdin_closed and self.mine:
            self.unanswered += 1
            self._send(approval_id, Decision("deny", CLOSED))

    def closed(self) -> None:
        """stdin closed: the approvals of this command's turn, now and later, are denied."""
        self.stdin_closed = True
        if self.mine:
            for approval_id in list(self.pending):
                self.unanswered += 1
                self._send(approval_id, Decision("deny", CLOSED))

    def _send(self, approval_id: str | None, decision: Decision) -> None:
        """The answer as an `Answer` command (None: the oldest approval waiting); a refusal is said."""
        answer = Answer(approval_id, decision.decision, decision.feedback, decision.rejected_hunks, decision.edited)

        async def send() -> None:
            reply = await self.handle.submit(answer)
            if not reply.ok and reply.kind != "unavailable":
                self.printer.handle(ev.ErrorEvent(message=f"ignored decision: {reply.error}", recoverable=True))
        asyncio.get_running_loop().create_task(send())

    def stop(self) -> None:
        if self.handle is not None:
            asyncio.get_running_loop().create_task(self.handle.submit(Stop()))


def _totals(event: ev.Usage) -> Any:
    from agent.loop import Totals

    totals = Totals()
    totals.restore(event.model_dump())
    return totals


async def _closed(handle: SessionHandle) -> None:
    """Returns when the handle's items end: it closed, or the session host went away."""
    async for _item in handle.events():
        pass


def _interrupt(attached: RunDriver) -> None:
    presses = {"count": 0}

    def on_interrupt() -> None:
        presses["count"] += 1
        if presses["count"] == 1:
            attached.printer.notice("stopping the run… (press Ctrl+C again to leave it to the host)")
            attached.stop()
            return
        os._exit(130)

    handle_ctrl_c(asyncio.get_running_loop(), on_interrupt)


def main(args: Any) -> int:
    """`coder-tui run --attach ID` with its parsed arguments (IN_PROCESS: no host can be used)."""
    from agent.frontends.common import run_command

    ref = str(args.attach)
    return run_command(lambda options: run_attached(options, ref), SessionOptions.from_args(args))
