"""The one rule by which config layers merge, field by field (user file < workspace file <
environment < command line; what an untrusted workspace file may contribute at all is `policy`'s).

A later layer replaces a plain setting; tables merge by key, so that a layer which sets one
entry does not replace the others: `[tools.NAME]` merges per tool and per field (a workspace's
`[tools.read_file] timeout = 30` leaves the user's `[tools.bash_exec] enabled = false` as it is),
`[lsp.NAME]` per server and per field (a later file's `timeout` keeps an earlier one's `command`),
`[room]`, `[fleet]` and `keymap` per key, `[mcp_servers.NAME]` per server (a server is replaced whole);
permission rules and hooks of every layer add up, each remembering the file it came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

PER_FIELD = ("tools", "lsp")  # tables of tables: merged per entry and per field
PER_KEY = ("room", "keymap", "folder_trust", "mcp_servers", "fleet")  # tables merged per entry (an entry replaced whole)
ADDED = ("permissions", "hooks")  # lists per action or event: every layer's entries add up


@dataclass
class Merged:
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # key (tools.NAME, mcp_servers.NAME) -> layer
    rule_sources: dict[str, str] = field(default_factory=dict)  # "allow RULE" -> the layer it came from
    hook_sources: dict[str, list[str]] = field(default_factory=dict)  # event -> the layer of each hook


def merge(layers: Iterable[tuple[str, dict[str, Any]]]) -> Merged:
    """The layers (lowest first) merged by the rule above."""
    merged = Merged()
    for source, values in layers:
        for key, value in values.items():
            _one(merged, source, key, value)
    return merged


def _one(merged: Merged, source: str, key: str, value: Any) -> None:
    values = merged.values
    if key in ADDED:
        table = values.setdefault(key, {})
        for name, items in dict(value).items():
            present = table.setdefault(name, [])
            for item in items:
                if key == "hooks":
                    present.append(item)
                    merged.hook_sources.setdefault(name, []).append(source)
                elif item not in present:
                    present.append(item)
                    merged.rule_sources.setdefault(f"{name} {item}", source)
        return
    if key in PER_FIELD or key in PER_KEY:
        table = values.setdefault(key, {})
        for name, entry in dict(value).items():
            if key in PER_FIELD and isinstance(table.get(name), dict) and isinstance(entry, dict):
                entry = {**table[name], **entry}
            table[name] = entry
            merged.sources[f"{key}.{name}"] = source
        merged.sources[key] = source
        return
    values[key] = value
    merged.sources[key] = source
