"""coder-tui's own process looks for no pydantic plugins.

The first time any pydantic model builds its validator, pydantic looks for plugins: it imports
importlib.metadata and reads the entry points of every installed distribution (the `pydantic`
group). That is tens of milliseconds of every launch (the app, `run`, `serve`, `acp`, the host),
spent before a first answer (issue 22). Plugins observe an application's own models (logfire and
the like); none is meant for this tool's internals. PYDANTIC_DISABLE_PLUGINS would do the same,
but every command the agent runs would inherit it, and it does not spare the import.

`skip()` stands in for pydantic's plugin loader before it is imported: `get_plugins()` finds
none, and any other name is read from the real module, loaded then.
"""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

LOADER = "pydantic.plugin._loader"


def skip() -> None:
    """No plugin search in this process (a no-op once pydantic's loader was imported)."""
    if LOADER in sys.modules:
        return
    stand_in = types.ModuleType(LOADER, "pydantic's plugin loader, finding none (agent/pydantic_plugins.py)")
    setattr(stand_in, "get_plugins", _no_plugins)  # noqa: B010 - names a module gets at run time
    setattr(stand_in, "__getattr__", _from_real)  # noqa: B010
    sys.modules[LOADER] = stand_in


def _no_plugins() -> tuple[()]:
    return ()


def _from_real(name: str) -> object:
    """A name of pydantic's own loader other than get_plugins (none in pydantic 2.14): read there.
    (Dunder names are the import system's questions about the module itself: not there.)"""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_real(), name)


@functools.cache
def _real() -> types.ModuleType:
    """pydantic's own loader, loaded once, under another name (the stand-in keeps its own)."""
    import importlib.util

    import pydantic

    path = Path(pydantic.__file__).parent / "plugin" / "_loader.py"
    spec = importlib.util.spec_from_file_location("pydantic.plugin._loader_itself", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"pydantic's plugin loader is not at {path}")
    real = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(real)
    return real
