"""The states of a scheduled task (agent/knowledge/tasks.py), apart so that the tools' argument
models can name them without importing the task store (sqlite3) on every start."""

from __future__ import annotations

from typing import Literal

Status = Literal["pending", "in-progress", "completed", "failed", "cancelled"]
STATUSES: tuple[str, ...] = ("pending", "in-progress", "completed", "failed", "cancelled")
