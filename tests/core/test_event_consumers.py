"""The one typed way to consume events: a method per event class, checked by mypy.

Every consumer (the app's presenter, the printers, the replay, the front-end servers) subclasses
`agent.consumer.EventHandler`; these tests check that each event class reaches its own method,
that the type checker accepts every consumer in the tree, and that it rejects a method annotated
with the wrong event class (so the check is not a formality).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import typing
from pathlib import Path
from typing import Any

import pytest

from agent import events as ev
from agent.consumer import HANDLERS, EventHandler
from tests.conftest import ROOT

EVENT_CLASSES = typing.get_args(typing.get_args(ev.Event)[0])
# A module is a consumer when a class in it derives from EventHandler, directly or through another
# consumer: found from the source, so a consumer that moves (agent/frontends/) or a new front end
# is checked without editing this file.
CLASS = re.compile(r"^class (\w+)\((?:[\w.]+\.)?(\w+)\)", re.MULTILINE)
KNOWN_CONSUMERS = ("class Presenter(", "class JsonPrinter(", "class TextPrinter(", "class RoomPrinter(",
                   "class _Recorder(", "class _TimelineReplay(", "class PlanChat(")
# Our modules are followed (errors reported only in the files named); the big libraries behind the
# app and the clients are skipped (their types are Any here), which halves the time of a cold run.
MYPY_CONFIG = """[mypy]
follow_imports = silent
ignore_missing_imports = True
show_error_codes = True
[mypy-textual.*,rich.*,litellm.*,pycrdt.*,git.*,github.*,aiohttp.*,socketio.*,engineio.*]
follow_imports = skip
"""


def _sources() -> list[Path]:
    return sorted((ROOT / "agent").rglob("*.py")) + sorted((ROOT / "tui").rglob("*.py"))


def _consumer_modules() -> list[Path]:
    classes = {path: CLASS.findall(path.read_text(encoding="utf-8")) for path in _sources()}
    handlers, modules = {"EventHandler"}, set()
    grown = True
    while grown:
        grown = False
        for path, found in classes.items():
            for name, base in found:
                if base in handlers and name not in handlers:
                    handlers.add(name)
                    modules.add(path)
                    grown = True
    return sorted(modules)


def _mypy(paths: list[Path], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(cache / "mypy.ini"), "--cache-dir",
                           str(cache), *(str(p) for p in paths)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for this file's mypy runs: the second run reuses what the first analysed."""
    cache = tmp_path_factory.mktemp("mypy-cache")
    (cache / "mypy.ini").write_text(MYPY_CONFIG, encoding="utf-8")
    return cache


def test_every_event_class_dispatches_to_its_own_method() -> None:
    assert set(HANDLERS) == set(EVENT_CLASSES)
    assert len(set(HANDLERS.values())) == len(EVENT_CLASSES)  # one method per class, none shared
    calls: list[str] = []

    def recorder(name: str) -> Any:
        return lambda self, event: calls.append(name)

    everything = type("Everything", (EventHandler,), {name: recorder(name) for name in HANDLERS.values()})()
    for cls in EVENT_CLASSES:
        calls.clear()
        everything.handle(cls.model_construct())
        assert calls == [f"on_{cls.model_fields['type'].default}"], cls.__name__


def test_events_without_their_method_go_to_unhandled() -> None:
    seen: list[tuple[str, Any]] = []

    class OnlyText(EventHandler):
        def on_text_delta(self, event: ev.TextDelta) -> None:
            seen.append(("text", event.text))

        def unhandled(self, event: ev.Event) -> None:
            seen.append(("other", event.type))

    handler = OnlyText()
    handler.handle(ev.TextDelta(text="hi"))
    handler.handle(ev.WarningEvent(message="careful"))
    handler.handle(ev.StepStarted(iteration=2))
    assert seen == [("text", "hi"), ("other", "warning"), ("other", "step_started")]


def test_the_known_consumers_are_found() -> None:
    text = "".join(path.read_text(encoding="utf-8") for path in _consumer_modules())
    assert [name for name in KNOWN_CONSUMERS if name not in text] == []


def test_no_consumer_chooses_by_the_type_name() -> None:
    """`event.type` is wire format: behaviour is chosen by the event's class, not by its name."""
    pattern = re.compile(r"\bevent\.type\s*(==|!=|(not\s+)?in\b)|match\s+event\.type\b|\w+\s*=\s*event\.type\s*$"
                         r"|getattr\([^)]*event\.type|_on_\{")
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in _sources()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []


def test_mypy_accepts_every_consumer(mypy_cache: Path) -> None:
    modules = [ROOT / "agent" / "consumer.py", *_consumer_modules()]
    started = time.monotonic()
    result = _mypy(modules, mypy_cache)
    print(f"mypy over {len(modules)} modules: {time.monotonic() - started:.1f} s")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_rejects_a_method_that_takes_the_wrong_event(tmp_path: Path, mypy_cache: Path) -> None:
    wrong = tmp_path / "wrong_consumer.py"
    wrong.write_text(
        "from agent.consumer import EventHandler\n"
        "from agent.events import ToolCallEvent\n\n\n"
        "class Wrong(EventHandler):\n"
        "    def on_text_delta(self, event: ToolCallEvent) -> None:\n"
        "        print(event.tool)\n", encoding="utf-8")
    result = _mypy([wrong], mypy_cache)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"wrong_consumer\.py:6: error: Argument 1 of \"on_text_delta\" is incompatible with "
                     r"supertype \"(agent\.consumer\.)?EventHandler\".*\[override\]", result.stdout), result.stdout
