"""The cards of the chat view and the user's clicks on them (a mixin of `ChatView`).

👍 / 👎, dismiss and restore go to the service as ledger entries (`PresentationFeedback`,
`PresentationSelection`); the view only redraws the card in its new state.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from vak_desktop.context.payloads import Presentation
from vak_desktop.runtime.presentations import CardState
from vak_desktop.ui.cards import card_widget
from vak_desktop.ui.cards.frame import CardFrame
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.chat.message_widgets import AssistantMessage


class ChatCards:
    """Cards in answers, and their clicks (a mixin of `ChatView`)."""

    _service: ChatService | None
    _cards: dict[str, tuple[QWidget, AssistantMessage, Presentation]]
    _card_states: dict[str, CardState]

    # -- cards ------------------------------------------------------------------------------

    def _add_card(
        self, answer: AssistantMessage, entry_id: str, presentation: Presentation, state: CardState
    ) -> None:
        widget = card_widget(
            entry_id,
            presentation,
            verdict=state.verdict,
            dismissed=state.dismissed,
            on_verdict=self._rate,
            on_selection=self._select,
        )
        answer.cards.addWidget(widget)
        self._cards[entry_id] = (widget, answer, presentation)
        self._card_states[entry_id] = state

    def _rate(self, presentation_id: str, verdict: str) -> None:
        if self._service is None:
            return
        self._service.rate_presentation(presentation_id, verdict)
        old_state = self._card_states.get(presentation_id, CardState())
        shown = "" if verdict == "clear" else verdict
        self._card_states[presentation_id] = CardState(shown, old_state.dismissed)
        widget = self._cards[presentation_id][0]
        if isinstance(widget, CardFrame):
            widget.set_verdict(shown)

    def _select(self, presentation_id: str, action: str) -> None:
        if self._service is None:
            return
        self._service.select_presentation(presentation_id, action)
        old, answer, presentation = self._cards[presentation_id]
        verdict = self._card_states.get(presentation_id, CardState()).verdict
        state = CardState(verdict, action == "dismiss")
        self._card_states[presentation_id] = state
        new = card_widget(
            presentation_id,
            presentation,
            verdict=state.verdict,
            dismissed=state.dismissed,
            on_verdict=self._rate,
            on_selection=self._select,
        )
        answer.cards.replaceWidget(old, new)
        old.deleteLater()
        self._cards[presentation_id] = (new, answer, presentation)
