"""The footer every screen shows: Textual's, rebuilt only when the keys it shows change."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    """Textual's footer, rebuilt only when the keys it shows change.

    Textual's footer recomposes (a widget per key, each styled) on every binding-change
    signal, and a screen's start sends several (mount, focus, the first page): four to six
    rebuilds of the same keys before the first screen settles, tens of milliseconds each. Here
    one pending rebuild covers a burst, and it is skipped when the keys are the same."""

    _rebuild_pending = False
    _shown: tuple[object, ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    def _keys_shown(self) -> tuple[object, ...]:
        # Everything Footer.compose reads from the bindings, in its order.
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple(
            (key, binding.key, binding.action, binding.description, binding.group, enabled,
             tooltip, self.app.get_key_display(binding))
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette) + (self.show_command_palette, self.compact)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        if not self.is_attached:
            return
        shown = self._keys_shown()
        if shown != self._shown:
            self._shown = shown
            await self.recompose()
