"""The system prompt of the shown chat, for the window (a mixin of `ChatService`).

A chat with entries gets its prompt as a ledger `Activity` (runtime/sessions/system_prompts.py)
the moment it is set; a new chat holds it until its first message creates the session, then
writes it before the first directive. A new chat starts from the default preset when there is
one, else from the runner's built-in prompt (which writes nothing: it is the runner's default).
"""

from __future__ import annotations

from typing import Any

from vak_desktop.ledger import Ledger
from vak_desktop.runtime import TurnRunner
from vak_desktop.runtime.sessions.system_prompts import (
    PresetStore,
    check_prompt,
    set_system_prompt,
    system_prompt_of,
)


class SessionPrompts:
    """The shown chat's system prompt and the presets (a mixin of `ChatService`)."""

    _ledger: Ledger
    _session: str | None
    systemPromptChanged: Any  # Signal(str), declared on ChatService

    @property
    def runner(self) -> TurnRunner:
        raise NotImplementedError

    def _init_prompts(self) -> None:
        self.presets: PresetStore | None = None
        self._pending_prompt: tuple[str, str] | None = None  # a new chat's (text, preset)

    def use_presets(self, store: PresetStore) -> None:
        """Read presets (and the default a new chat starts with) from `store`."""
        self.presets = store
        self.systemPromptChanged.emit(self.system_prompt)

    @property
    def builtin_prompt(self) -> str:
        return self.runner.system_prompt

    @property
    def system_prompt(self) -> str:
        """The system prompt the shown chat's next turn sends."""
        if self._session is not None:
            return system_prompt_of(self._ledger.chain_to_root(self._session), self.builtin_prompt)
        if self._pending_prompt is not None:
            return self._pending_prompt[0]
        if self.presets is not None:
            return self.presets.default_text(self.builtin_prompt)
        return self.builtin_prompt

    def set_system_prompt(self, text: str, preset: str = "") -> bool:
        """Give the shown chat `text` as its system prompt from its next turn on (ValueError
        for an empty or oversized one). False when it has that prompt already."""
        text = check_prompt(text)
        if self._session is None:
            if text == self.system_prompt:
                return False
            self._pending_prompt = (text, preset)
        elif not set_system_prompt(self._ledger, self._session, text, self.builtin_prompt, preset):
            return False
        self.systemPromptChanged.emit(text)
        return True

    def _forget_pending_prompt(self) -> None:
        self._pending_prompt = None

    def _write_new_chat_prompt(self, session: str) -> None:
        """A new chat became `session`: its prompt (chosen, or the default preset's) goes in
        before the first directive, so the first turn already sends it."""
        if self._pending_prompt is not None:
            text, preset = self._pending_prompt
        elif self.presets is not None:
            text, preset = self.presets.default_text(self.builtin_prompt), self.presets.default
        else:
            return
        self._pending_prompt = None
        if text != self.builtin_prompt:
            set_system_prompt(self._ledger, session, text, self.builtin_prompt, preset)
