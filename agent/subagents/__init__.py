"""Subagents: child sessions a parent hands tasks to (the `agent` tool), and goals (`run --until`)."""
