"""Removing widgets without leaving their rendered lines behind.

Textual's StylesCache memoises `get_inner_outer` with an lru_cache on the instance method, so up to
1,024 caches of removed widgets (each with every line it rendered) stay referenced after the
widgets are gone. The transcript and timeline remove widgets on every turn; emptying their
caches first keeps a long session's memory flat.
"""

from __future__ import annotations

from textual.widget import Widget


def remove_released(widgets: list[Widget]) -> None:
    for widget in widgets:
        for node in widget.walk_children(with_self=True):
            if isinstance(node, Widget):
                node._styles_cache.clear()
        widget.remove()
