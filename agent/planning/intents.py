"""The intent router's seed 001 intents: a scheduled task, start/stop of continuous exploration,
a repository switch. Rules recognise the clear phrasings in every workflow; under `auto` the small
model's classification may also say `schedule` (agent/planning/router.py).

A scheduling message is not stored here: the turn is steered to call `schedule_task` with the
parsed schedule, and the tool's approval is the user's confirmation. Exploration is the app's
(`/explore`) or `coder-tui explore`'s; a session only says so. A repository switch is handed to
the model with a note to call `set_repository_context`.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agent.attachments import NOTE_MARK  # replays leave the note out (agent/attachments.py typed_part)

if TYPE_CHECKING:
    from agent.events import TaskType

IntentKind = Literal["schedule", "explore_start", "explore_stop", "repository"]
MAX_RULE_CHARS = 300  # longer messages are work descriptions, not commands
DAYS = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 0}
PARTS = {"morning": 9, "day": 9, "evening": 18, "night": 22, "afternoon": 14}
UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "day": 86400}
_CLOCK = r"(?:at\s+(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>am|pm)?)"
# Compiled on first use (`_pattern`): five large patterns are milliseconds of every start, and a
# prompt without the words they need (`_CLUES`) is never matched against them.
_PATTERNS: dict[str, str] = {
    "every": r"(?:\b(?:every|each)\s+(?:(?P<count>\d+)\s+(?P<unit>minute|min|hour)s?"
             r"|(?P<what>morning|day|evening|night|afternoon|hour|week|weekday|" + "|".join(DAYS) + r"))"
             r"|\b(?P<daily>daily|hourly|weekly|nightly))\b(?:\s+" + _CLOCK + r")?",
    "delay": r"\bin\s+(?P<count>\d+|an?|one)\s+(?P<unit>second|sec|minute|min|hour|day)s?\b",
    "at": r"^(?:(?P<day>today|tomorrow)\s+)?" + _CLOCK + r"\b[,:]?|\b(?:(?P<day2>today|tomorrow)\s+)?"
          + _CLOCK.replace("?P<", "?P<e_") + r"\s*$",
    "explore": r"^(?:please\s+)?(?P<verb>start|begin|resume|stop|end|pause|halt)\s+(?:the\s+)?(?:continuous\s+)?"
               r"(?:exploring|exploration|explore)\b(?:\s+(?:the|this)\s+(?:repo|repository|codebase|code|project))?"
               r"(?:\s+(?:continuously|in the background))?[.! ]*$",
    "repo": r"^(?:please\s+)?(?:switch|change|move)\s+(?:(?:the\s+)?(?:repo|repository)\s+)?to\s+(?:(?:the\s+)?"
            r"(?:repo|repository)\s+)?(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:@(?P<ref>\S+?))?"
            r"(?:\s+(?:on\s+)?(?:branch\s+)(?P<branch>\S+?))?[.! ]*$",
}
# Words each pattern cannot match without (in the casefolded text): the cheap test before it.
_CLUES: dict[str, tuple[str, ...]] = {
    "every": ("every", "each", "daily", "hourly", "weekly", "nightly"), "delay": ("in",), "at": ("at",),
    "explore": ("explor",), "repo": ("/",),
}


@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name], re.IGNORECASE)


def _find(name: str, text: str, anchored: bool = False) -> re.Match[str] | None:
    """`name`'s match in `text` (at its start when `anchored`), None at once when a clue is missing."""
    folded = text.casefold()
    if not any(clue in folded for clue in _CLUES[name]):
        return None
    return _pattern(name).match(text) if anchored else _pattern(name).search(text)


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    task: str = ""  # schedule: what to do when due
    cron: str | None = None
    delay_seconds: int | None = None
    at: str | None = None
    phrase: str = ""  # schedule: the words that said when
    repository: str = ""
    ref: str | None = None

    def when(self) -> dict[str, Any]:
        """schedule_task's time argument."""
        if self.cron is not None:
            return {"cron": self.cron}
        if self.delay_seconds is not None:
            return {"delay_seconds": self.delay_seconds}
        return {"at": self.at}


def detect(text: str, now: dt.datetime | None = None) -> Intent | None:
    """The intent a rule recognises in a one-line command-like message, else None."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_RULE_CHARS or "\n" in stripped:
        return None
    if match := _find("explore", stripped, anchored=True):
        start = match.group("verb").lower() in ("start", "begin", "resume")
        return Intent("explore_start" if start else "explore_stop")
    if match := _find("repo", stripped, anchored=True):
        return Intent("repository", repository=match.group("repo"), ref=match.group("ref") or match.group("branch"))
    if stripped.endswith("?"):
        return None  # "what runs every morning?" asks; it does not schedule
    return _schedule(stripped, now or dt.datetime.now().astimezone())


def _schedule(text: str, now: dt.datetime) -> Intent | None:
    if match := _find("every", text):
        return Intent("schedule", task=_rest(text, match), cron=_cron(match), phrase=match.group(0).strip())
    if match := _find("delay", text):
        count = match.group("count").lower()
        number = int(count) if count.isdigit() else 1
        seconds = number * UNITS[match.group("unit").lower()]
        return Intent("schedule", task=_rest(text, match), delay_seconds=seconds, phrase=match.group(0).strip())
    if match := _find("at", text):
        prefix = "" if match.group("hour") else "e_"
        day = (match.group("day") or match.group("day2") or "").lower()
        hour, minute = _clock(match, prefix)
        if hour is None:
            return None
        when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if day == "tomorrow" or (not day and when <= now):
            when += dt.timedelta(days=1)
        return Intent("schedule", task=_rest(text, match), at=when.isoformat(timespec="minutes"),
                      phrase=match.group(0).strip(" ,:"))
    return None


def _clock(match: re.Match[str], prefix: str = "") -> tuple[int | None, int]:
    hour_text = match.group(f"{prefix}hour")
    if hour_text is None:
        return None, 0
    hour, minute = int(hour_text), int(match.group(f"{prefix}minute") or 0)
    ampm = (match.group(f"{prefix}ampm") or "").lower()
    if ampm == "pm" and hour < 12:
        hour += 12
    if ampm == "am" and hour == 12:
        hour = 0
    return (hour, minute) if hour < 24 and minute < 60 else (None, 0)


def _cron(match: re.Match[str]) -> str:
    hour, minute = _clock(match)
    if count := match.group("count"):
        return f"*/{int(count)} * * * *" if match.group("unit").lower().startswith("min") else f"0 */{int(count)} * * *"
    what = (match.group("what") or match.group("daily") or "").lower()
    if what in ("hour", "hourly"):
        return "0 * * * *"
    at_hour = hour if hour is not None else PARTS.get(what.replace("nightly", "night").replace("daily", "day"), 9)
    day = "*"
    if what in DAYS:
        day = str(DAYS[what])
    elif what in ("week", "weekly"):
        day = "1"
    elif what == "weekday":
        day = "1-5"
    return f"{minute} {at_hour} * * {day}"


def _rest(text: str, match: re.Match[str]) -> str:
    """The message without its schedule words: what to do when due."""
    rest = (text[:match.start()] + " " + text[match.end():]).strip()
    rest = re.sub(r"^(?:please\s+|,\s*|then\s+)+|[\s,.!]+$", "", rest, flags=re.IGNORECASE)
    return re.sub(r"\s{2,}", " ", rest).strip(" ,")


# -- what the turn becomes ---------------------------------------------------------------------------
def schedule_note(intent: Intent | None) -> str:
    """The note that steers the turn to `schedule_task` (None: the small model said `schedule`)."""
    if intent is None:
        how = "Work out the time from the message (a cron schedule for a repeating task)."
    else:
        args = ", ".join(f"{k}={v!r}" for k, v in intent.when().items())
        how = (f"The router read {intent.phrase!r} as {args}; the task: {intent.task or '(see the message)'!r}. "
               f"Call schedule_task with {args} and that description")
    return (f"{NOTE_MARK}This message asks for a scheduled task, not for the work now. "
            f"{how}. Use action explore, summarize or refresh_map instead of a prompt when the task is one "
            "of those. The user confirms the task through the tool's approval; do not do the task itself now.")


def repository_note(intent: Intent) -> str:
    ref = f" and ref {intent.ref!r}" if intent.ref else ""
    return (f"{NOTE_MARK}This message asks to switch the repository: call set_repository_context "
            f"with repository {intent.repository!r}{ref}.")


def explore_answer(intent: Intent) -> str:
    """What a session without the app says to an exploration request."""
    if intent.kind == "explore_start":
        return ("Continuous exploration runs in the app (/explore start, or say \"start exploring\") or with "
                "`coder-tui explore` in a terminal; this session does not start it.")
    return ("Continuous exploration is stopped in the app (/explore stop, or say \"stop exploring\") or with "
            "Ctrl+C in the terminal running `coder-tui explore`; this session does not run it.")


async def steer(session: Any, llm: Any, prompt: str) -> Any:
    """The turn a rule-recognised intent becomes (a Complete), or None for the usual routing."""
    from agent.attachments import typed_part
    from agent.events import ClassificationEvent, Complete, TextDelta

    intent = detect(typed_part(prompt)[0])  # attached files do not hide a command
    if intent is None:
        return None
    kind: TaskType = {"schedule": "schedule", "repository": "repository"}.get(intent.kind, "explore")  # type: ignore[assignment]
    session.emit(ClassificationEvent(task_type=kind))
    if intent.kind == "schedule":
        return await session.run_direct(llm, prompt + schedule_note(intent))
    if intent.kind == "repository":
        return await session.run_direct(llm, prompt + repository_note(intent))
    text = explore_answer(intent)
    session.emit(TextDelta(text=text))
    event = Complete(success=True, iterations=0, final_response=text, completion_reason="answered")
    session.emit(event)
    return event
