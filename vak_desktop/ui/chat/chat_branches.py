"""Edit, regenerate, the version switcher and "New chat from here" of the chat view (a mixin
of `ChatView`).

Each calls the service, which appends new entries beside the old ones (`parent=`): nothing is
overwritten. The view removes the turn and what followed it (they are on the old branch now) and
draws the new one as it streams; the switcher redraws the session's other branch.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from vak_desktop.ui.chat.chat_service import ChatService, Transcript
from vak_desktop.ui.chat.message_widgets import AssistantMessage, BranchSwitcher, UserMessage
from vak_desktop.ui.parts.message_sections import small_button


class ChatBranches:
    """Edit, regenerate, versions and Copy (a mixin of `ChatView`)."""

    _service: ChatService | None
    _items: list[QWidget]
    _turns: dict[str, tuple[UserMessage | None, AssistantMessage | None]]

    def show_transcript(self, transcript: Transcript) -> None:
        raise NotImplementedError

    def reload(self) -> None:
        raise NotImplementedError

    def _remove(self, widget: QWidget) -> None:
        raise NotImplementedError

    # -- edit, regenerate, versions ---------------------------------------------------------

    def _user_message(
        self,
        turn_id: str,
        text: str,
        images: tuple[str, ...],
        version: tuple[int, int] | None = None,
    ) -> UserMessage:
        service = self._service
        if service is None:
            return UserMessage(text, images)
        position, count = version or service.alternatives(turn_id)
        switcher = None
        if count > 1:
            switcher = BranchSwitcher(
                position, count, lambda step: self.show_alternative(turn_id, step)
            )
        return UserMessage(
            text, images, on_edit=lambda new: self.edit_turn(turn_id, new), switcher=switcher
        )

    def _add_answer_actions(self, answer: AssistantMessage, turn_id: str) -> None:
        copy = small_button("Copy", "Copy this answer as Markdown", "copyAnswer")
        copy.clicked.connect(lambda: self._copy_answer(turn_id))
        answer.add_action(copy)
        if self._service is not None:
            again = small_button("↻ Regenerate", "Ask again for a new answer", "regenerateButton")
            again.clicked.connect(lambda: self.regenerate_turn(turn_id))
            answer.add_action(again)
            onward = small_button(
                "⤴ New chat from here",
                "Continue this version in a new chat: it keeps this turn and what led to it",
                "continueButton",
            )
            onward.clicked.connect(lambda: self.continue_turn(turn_id))
            answer.add_action(onward)

    def edit_turn(self, turn_id: str, text: str) -> bool:
        """Send `text` as a new version of turn `turn_id` (the old one stays in the ledger)."""
        return self._branch(turn_id, lambda service: service.edit(turn_id, text))

    def regenerate_turn(self, turn_id: str) -> bool:
        """Ask again: a new version of turn `turn_id` with the same words."""
        return self._branch(turn_id, lambda service: service.regenerate(turn_id))

    def continue_turn(self, turn_id: str) -> str:
        """Continue the shown version of turn `turn_id` in a new chat (opened at once)."""
        service = self._service
        if service is None or turn_id not in self._turns:
            return ""
        return service.continue_in_new_chat(turn_id)

    def show_alternative(self, turn_id: str, step: int) -> bool:
        service = self._service
        if service is None or not service.show_alternative(turn_id, step):
            return False
        self.show_transcript(service.transcript(service.session or ""))
        return True

    def _branch(self, turn_id: str, start: Any) -> bool:
        service = self._service
        if service is None or service.busy or turn_id not in self._turns:
            return False
        user, _answer = self._turns[turn_id]
        if user is None:
            return False
        cut = self._items.index(user)
        for item in self._items[cut:]:  # that turn and what followed are on the old branch now
            self._remove(item)
        if not start(service):
            self.reload()
            return False
        return True

    def _copy_answer(self, turn_id: str) -> None:
        clipboard = QGuiApplication.clipboard()
        service = self._service
        if clipboard is None or service is None or service.session is None:
            return
        for turn in service.turns(service.session):
            if turn.turn_id == turn_id:
                clipboard.setText(turn.answer)
