"""`coder-tui run --attach ID "prompt"`: `run`, as a client of the session host.

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

from pydantic import ValidationError

from agent import events as ev
from agent.client.commands import Answer, Note, Prompt, Reply, Stop
from agent.client.hosted import HostedHandle, HostRefused, HostUnavailable, open_in_host
from agent.frontends.common import UsageError, handle_ctrl_c
from agent.frontends.printing import JsonPrinter, TextPrinter
from agent.frontends.stdin import SHORTHAND, DecisionLine
from agent.session.ports import SessionOptions
from agent.secrets import redact
from agent.textsafe import json_line, visible

UNANSWERED = 3
CLOSED = "stdin is closed, so nobody here can answer approvals; answer on stdin, from another front end, or use --mode allow"


IN_PROCESS = -1  # main's answer when no host can be used: the caller runs `run` in-process


async def run_attached(options: SessionOptions, ref: str) -> int:
    attached = Attached(options)
    try:
        return await attached.run(ref)
    except HostUnavailable as exc:
        print(f"coder-tui: the session host is not available ({visible(str(exc))}); running in-process",
              file=sys.stderr)
        return IN_PROCESS
    except (ConnectionError, TimeoutError):  # the host went away while the session was opened
        print("coder-tui: error: the session host stopped (connection lost); `coder-tui run --attach ID` or "
              "`run --resume ID` continues the session from its record", file=sys.stderr)
        return 1
    finally:
        if attached.handle is not None:
            await attached.handle.close(detach=True)


def _open_options(options: SessionOptions) -> dict[str, Any]:
    values = options.model_dump(exclude_none=True, exclude={"json_output", "prompt", "resume"})
    if options.workspace:
        values["workspace"] = os.path.abspath(options.workspace)
    if options.api_key is not None:
        values["api_key"] = options.api_key
    return values


class Attached:
    """`run --attach`: one `HostedHandle` (agent/client/hosted.py), printed as `run` prints."""

    def __init__(self, options: SessionOptions) -> None:
        self.options = options
        self.handle: HostedHandle | None = None
        self.printer: Any = JsonPrinter(sys.stdout) if options.json else TextPrinter(sys.stdout, sys.stderr)
        self.mine = False  # this command's turn is the running one
        self.early: list[dict[str, Any]] = []  # answers typed before their approval came
        self.stdin_closed = False
        self.unanswered = 0
        self.session_id = ""
        self.complete: ev.Complete | None = None
        self.pending: list[str] = []  # approval ids waiting, oldest first
        self._totals: Any = None
        self._ended: asyncio.Future[int] | None = None  # the host closing, or the turn waited for ending
        self.name = f"run --attach (pid {os.getpid()})"

    async def run(self, ref: str) -> int:
        if ref == "new" and not self.options.workspace:
            self.options = self.options.model_copy(update={"workspace": os.getcwd()})
        try:
            self.handle = handle = await open_in_host(ref, self.name, _open_options(self.options))
        except HostRefused as exc:
            raise UsageError(f"--attach: {exc}") from None
        self._ended = asyncio.get_running_loop().create_future()
        handle.listen(self._item)  # no await since the replay: nothing is missed
        self.session_id = handle.session_id
        if handle.started_host:
            self.printer.notice("started the session host (it stays for the next front end)")
        self._replay(handle)
        running = bool(handle.state.get("running") or handle.state.get("queued"))
        if not self.options.prompt.strip() and not running:
            return 0
        self._listen_stdin()
        _interrupt(self)
        return await self._until_done(handle)

    def _replay(self, handle: HostedHandle) -> None:
        """The session so far: printed whole in JSON mode; in text mode, one line and what waits."""
        history = handle.history()
        self.pending = handle.pending
        if self.options.json:
            for item in history:
                self._item(item, live=False)
            self._print_host(handle.state)
            return
        others = ", ".join(handle.state.get("clients", [])) or "nobody else"
        self.printer.notice(f"attached to session {self.session_id} ({len(history)} earlier lines; attached: {others})")
        asked = {item.approval_id: item for item in history if isinstance(item, ev.ApprovalRequired)}
        for approval_id in self.pending:
            if approval_id in asked:
                self.printer.handle(asked[approval_id])

    async def _until_done(self, handle: HostedHandle) -> int:
        """This command's prompt's turn (or, without one, the turn running now) to its end."""
        assert self._ended is not None
        lost = asyncio.ensure_future(handle.lost.wait())
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
                    loop.call_soon_threadsafe(self._line, text)
            except (OSError, ValueError):
                pass
            loop.call_soon_threadsafe(self._closed)

        if sys.stdin is None:
            self.stdin_closed = True
            return
        threading.Thread(target=read, name="attach-stdin", daemon=True).start()

    def _line(self, text: str) -> None:
        text = text.strip()
        if not text:
            return
        try:
            answer = _parse(text)
        except ValueError as exc:
            self.printer.handle(ev.ErrorEvent(message=f"ignored stdin line: {exc}", recoverable=True))
            return
        if answer.get("approval_id") is None and not self.pending:
            self.early.append(answer)
            return
        self._send(answer)

    def _asked(self, approval_id: str) -> None:
        self.pending.append(approval_id)
        if self.early:
            self._send({**self.early.pop(0), "approval_id": approval_id})
        elif self.stdin_closed and self.mine:
            self.unanswered += 1
            self._send({"approval_id": approval_id, "decision": "deny", "feedback": CLOSED})

    def _closed(self) -> None:
        self.stdin_closed = True
        if self.mine:
            for approval_id in list(self.pending):
                self.unanswered += 1
                self._send({"approval_id": approval_id, "decision": "deny", "feedback": CLOSED})

    def _send(self, answer: dict[str, Any]) -> None:
        async def send() -> None:
            assert self.handle is not None
            reply = await self.handle.submit(Answer(answer.get("approval_id"), answer["decision"], answer.get("feedback")))
            if not reply.ok and reply.kind != "unavailable":
                self.printer.handle(ev.ErrorEvent(message=f"ignored decision: {reply.error}", recoverable=True))
        asyncio.get_running_loop().create_task(send())

    def stop(self) -> None:
        if self.handle is not None:
            asyncio.get_running_loop().create_task(self.handle.submit(Stop()))


def _parse(text: str) -> dict[str, Any]:
    if not text.startswith("{"):
        word, _, feedback = text.partition(" ")
        if word.lower() in SHORTHAND:
            return {"approval_id": None, "decision": SHORTHAND[word.lower()], "feedback": feedback.strip() or None}
        raise ValueError(f"expected a JSON decision object or y / a / n [feedback] / s, got {text[:60]!r}")
    try:
        line = DecisionLine.model_validate_json(text)
    except ValidationError as exc:
        raise ValueError(f"invalid decision ({exc.errors()[0]['msg']})") from None
    return {"approval_id": line.approval_id, "decision": line.decision, "feedback": line.feedback}


def _totals(event: ev.Usage) -> Any:
    from agent.loop import Totals

    totals = Totals()
    totals.restore(event.model_dump())
    return totals


def _interrupt(attached: Attached) -> None:
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
