"""A command-palette provider that offers the calling screen's own actions.

A screen lists it in `COMMANDS`; the palette then shows every binding that is active on that
screen's focus chain (the footer's keys, and the hidden ones), plus any extra commands the
screen returns from `palette_commands()` (e.g. one "Judge: ..." entry per judge). App-wide
commands come from the app's own provider, so app bindings are left out here. While labelling
(the app's label mode) the extras and any binding that opens another screen are left out too:
labelling is blind, and the app refuses those screens anyway (CopalApp.action_open).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

Command = tuple[str, str, Callable[[], Any]]


class ScreenCommands(Provider):
    def _commands(self) -> list[Command]:
        screen, app = self.screen, self.app
        labelling = getattr(app, "mode", None) == "label"
        out: list[Command] = []
        extra = getattr(screen, "palette_commands", None)
        if callable(extra) and not labelling:
            out.extend(extra())
        seen: set[str] = set()
        for key, active in screen.active_bindings.items():
            binding = active.binding
            if active.node is app or not active.enabled or not binding.description:
                continue
            if labelling and binding.action.split("(")[0].rsplit(".", 1)[-1] == "open":
                continue
            ident = binding.id or f"{id(active.node)}:{binding.action}"
            if ident in seen:
                continue
            seen.add(ident)
            keys = app.get_key_display(binding) or key
            out.append((binding.description, f"{keys}  ({binding.id or binding.action})",
                        partial(app.run_action, binding.action, active.node)))
        return out

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
