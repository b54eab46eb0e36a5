"""Display errors: kept in a log file with their traceback, shown to the user as one line."""

from __future__ import annotations

import time
import traceback
from pathlib import Path


def record(exc: BaseException) -> Path:
    """Append the exception's traceback to the app's error log; returns the log's path."""
    from agent import paths
    from agent.secrets import redact

    path = paths.data_dir() / "tui-errors.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as log:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
            log.write(redact("".join(traceback.format_exception(exc))))
    except OSError:
        pass
    return path
