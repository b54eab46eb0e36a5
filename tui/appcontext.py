"""Textual's context around what the agent's side calls into the app; work handed to workers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any, Generic, ParamSpec, TypeVar

from textual._context import active_app

P = ParamSpec("P")
T = TypeVar("T")


@contextmanager
def in_context(app: Any) -> Iterator[None]:
    """Textual's context (its `active_app`) around code the agent's side calls, whichever
    task or callback calls it. A timer set or a widget mounted outside that context starts a
    task without it: the transcript's flush timer, set by an answer's first text, then died
    on its first tick (LookupError: active_app) and the error surfaced when the app stopped
    its timers at exit."""
    try:
        current = active_app.get()
    except LookupError:
        current = None
    if current is app:
        yield
        return
    with app._context():
        yield


class _Later(Generic[T]):
    def __init__(self, make: Callable[[], Awaitable[T]]) -> None:
        self._make = make

    def __await__(self) -> Generator[Any, Any, T]:
        return self._make().__await__()


def later(make: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> Awaitable[T]:
    """`make(*args)` as work for `run_worker`, its coroutine made only when the worker starts: an
    exclusive worker replaced before it started left its coroutine "never awaited" (a warning at
    exit, seen in the suite's output)."""
    return _Later(lambda: make(*args, **kwargs))
