"""The key hints at the foot of the screen, made again only when what they show changed.

Textual's Footer makes all its keys again (new widgets, each styled and laid out) whenever the
screen says its bindings were updated: on every focus change, every widget mounted with bindings,
every mode change. While the app starts that happened some fourteen times before the first answer,
about 0.15 s of the interpreter spent on identical hints (issue 22). This one compares what would
be shown first.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeyHints(Footer):
    """A Footer that skips a recompose when the shown bindings, their state and its own look are unchanged."""

    _shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    def shown(self) -> tuple[Any, ...]:
        """What compose() would draw from: each shown binding with its state, and the footer's look."""
        hints = tuple((key, binding.key, binding.action, binding.description, binding.key_display,
                       binding.group, bool(enabled), tooltip)
                      for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
                      if binding.show)
        return (hints, self.compact, self.show_command_palette)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        if self.shown() != self._shown:
            await self.recompose()

    async def recompose(self) -> None:
        self._shown = self.shown() if self.is_attached and self._bindings_ready else None
        await super().recompose()
