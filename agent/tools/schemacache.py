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
from typing import Any

import pydantic

from agent.paths import cache_dir, private_dir

FILE_NAME = "tool-schemas.json"
_entries: dict[str, dict[str, Any]] | None = None  # name -> {"key": ..., "schema": ...}
_pending = False


def _path() -> str:
    return os.path.join(cache_dir(), FILE_NAME)


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
    global _entries
    if _entries is None:
        try:
            with open(_path(), encoding="utf-8") as file:
                loaded = json.load(file)
            _entries = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):  # none yet, or unreadable: schemas are derived and written anew
            _entries = {}
    return _entries


def lookup(model: type[pydantic.BaseModel], model_key: str | None) -> dict[str, Any] | None:
    """The schema kept for `model` under `model_key`, or None."""
    if model_key is None:
        return None
    entry = _load().get(_name(model))
    if isinstance(entry, dict) and entry.get("key") == model_key and isinstance(entry.get("schema"), dict):
        return entry["schema"]
    return None


def store(model: type[pydantic.BaseModel], model_key: str | None, schema: dict[str, Any]) -> None:
    """Keep `schema` for the next run (written once, when this process ends)."""
    global _pending
    if model_key is None:
        return
    _load()[_name(model)] = {"key": model_key, "schema": schema}
    if not _pending:
        _pending = True
        atexit.register(save)


def save() -> None:
    """Write the entries (atomically: a run reading at the same time sees the old file or the new)."""
    global _pending
    _pending = False
    if not _entries:
        return
    try:
        folder = private_dir(cache_dir())
        temporary = folder / f"{FILE_NAME}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(_entries), encoding="utf-8")
        os.replace(temporary, folder / FILE_NAME)
    except OSError:  # a read-only or full cache folder: the schemas are derived again next time
        pass
