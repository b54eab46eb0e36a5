"""Tool argument schemas kept in a file between runs (issue 32: nothing slow before the first request).

Pydantic derives a tool's JSON schema from its `Args` model in milliseconds per tool, and building
each model's validator at import costs as much again; with 25 tools that is a noticeable part of a
cold `run`. So the argument models defer their validators to the first call they check, and the
schemas the model is offered are read from `tool-schemas.json` in the cache folder. An entry is
used only while its key matches: the Python and pydantic versions and, for the model, every class
its schema is made of (its bases and the models and enums its fields name), each by its source
file's size and modification time. A model made at run time (no source file) is never kept.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import typing
from pathlib import Path
from typing import Any

import pydantic

from agent.paths import cache_dir, private_dir

FILE_NAME = "tool-schemas.json"
# cache folder -> model name -> {"key": ..., "schema": ...}: the folder is looked up each time, so
# a process whose XDG_CACHE_HOME changes (the test suite) reads and writes the one it names now
_entries: dict[Path, dict[str, dict[str, Any]]] = {}
_pending: set[Path] = set()  # folders with entries kept since their last write
_at_exit = False


def _classes(model: type) -> set[type]:
    """The classes `model`'s schema is made of: its own bases and what its fields name, recursively."""
    found: set[type] = set()
    todo: list[Any] = [model]
    while todo:
        item = todo.pop()
        if isinstance(item, type) and item not in found and item.__module__ not in ("builtins", "typing"):
            found.add(item)
            if issubclass(item, pydantic.BaseModel):
                todo += [base for base in item.__mro__ if issubclass(base, pydantic.BaseModel)]
                todo += [field.annotation for field in item.model_fields.values()]
        todo += typing.get_args(item)
    return {cls for cls in found if not cls.__module__.startswith("pydantic")}


def key(model: type[pydantic.BaseModel]) -> str | None:
    """What the cached schema of `model` depends on, or None when it cannot be kept."""
    parts = [sys.version, pydantic.VERSION]
    for cls in sorted(_classes(model), key=lambda c: (c.__module__, c.__qualname__)):
        source = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if source is None or "<locals>" in cls.__qualname__:
            return None
        try:
            stat = os.stat(source)
        except OSError:
            return None
        parts.append(f"{cls.__module__}.{cls.__qualname__}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def _name(model: type) -> str:
    return f"{model.__module__}.{model.__qualname__}"


def _load() -> dict[str, dict[str, Any]]:
    folder = cache_dir()
    if folder not in _entries:
        try:
            loaded = json.loads((folder / FILE_NAME).read_text(encoding="utf-8"))
            _entries[folder] = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):  # none yet, or unreadable: schemas are derived and written anew
            _entries[folder] = {}
    return _entries[folder]


def lookup(model: type[pydantic.BaseModel], model_key: str | None) -> dict[str, Any] | None:
    """The schema kept for `model` under `model_key`, or None."""
    if model_key is None:
        return None
    entry = _load().get(_name(model))
    if isinstance(entry, dict) and entry.get("key") == model_key and isinstance(entry.get("schema"), dict):
        return entry["schema"]
    return None


def store(model: type[pydantic.BaseModel], model_key: str | None, schema: dict[str, Any]) -> None:
    """Keep `schema` for the next run (written by `flush`, or when this process ends)."""
    global _at_exit
    if model_key is None:
        return
    _load()[_name(model)] = {"key": model_key, "schema": schema}
    _pending.add(cache_dir())
    if not _at_exit:
        _at_exit = True
        atexit.register(flush)


def flush() -> None:
    """Write what was kept since the last write (the offered tools' schemas come in one burst: a
    long-lived process need not wait for its exit). Atomically: a run reading at the same time
    sees the old file or the new."""
    while _pending:
        folder = _pending.pop()
        try:
            private_dir(folder)
            temporary = folder / f"{FILE_NAME}.{os.getpid()}.tmp"
            temporary.write_text(json.dumps(_entries[folder]), encoding="utf-8")
            os.replace(temporary, folder / FILE_NAME)
        except OSError:  # a read-only or full cache folder: the schemas are derived again next time
            continue
