"""The transcript: one session's shown branch as message widgets in a scroll area.

Given the `ChatService`, the view connects itself to its signals and shows what they say: the
directive, the answer as it streams (Markdown, collapsed thinking, collapsed tool calls), how the
turn ended and its receipt line; at the end of a turn it reads that turn from the ledger (through
the service) for its cards and receipts. A loaded session is drawn from the ledger's turns the
same way. It never streams, plans or talks HTTP itself.

Streaming stays cheap: a chunk is appended as plain text at once, and a single-shot timer
(`RENDER_MS`) renders the live part of the answer as Markdown at most once per tick, however many
chunks arrived in between (see `ui/parts/markdown.py` for what "live part" means).

Edit, regenerate and the version switcher call the service, which appends new entries beside
the old ones; card clicks (👍 / 👎 / dismiss / restore) become ledger entries the same way.

Edit / regenerate / versions are `ChatBranches` (ui/chat/chat_branches.py), the cards and their clicks
`ChatCards` (ui/chat/chat_cards.py), a folder dropped on the chat `ChatDrops` (ui/chat/chat_drops.py),
a search hit marked in view `ChatHighlight` (ui/chat/chat_highlight.py): mixins over this view's
widgets.

Just over 400 lines: the view's streaming and rebuild, which share its scroll and render state;
what could go (branches, cards, drops) is in the mixins named above.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from vak_desktop.context.payloads import (
    AssistantStep,
    Presentation,
    Receipt,
    ToolResult,
    Usage,
)
from vak_desktop.context.planning.turns import Turn
from vak_desktop.ledger import DamagedEntry
from vak_desktop.runtime.events import (
    StepFinished,
    ToolCallRequested,
    ToolResultReady,
    TurnFinished,
    TurnStarted,
)
from vak_desktop.runtime.presentations import CardState
from vak_desktop.ui.cards import DismissedStub
from vak_desktop.ui.cards.frame import CardFrame
from vak_desktop.ui.chat.chat_branches import ChatBranches
from vak_desktop.ui.chat.chat_cards import ChatCards
from vak_desktop.ui.chat.chat_drops import ChatDrops
from vak_desktop.ui.chat.chat_highlight import ChatHighlight
from vak_desktop.ui.chat.chat_service import ChatService, Transcript
from vak_desktop.ui.chat.message_widgets import AssistantMessage, UserMessage
from vak_desktop.ui.chat.session_browsing import damage_words
from vak_desktop.ui.chat.turn_words import answer_notice, closing_message
from vak_desktop.ui.parts import theme

RENDER_MS = 40  # Markdown of a streaming answer is rendered at most this often


class ChatView(ChatDrops, QScrollArea, ChatBranches, ChatCards, ChatHighlight):
    """Shows one session's messages and streams the answer being written."""

    folderDropped = Signal(str)  # a folder dropped on the chat: for this chat's file tools

    def __init__(self, service: ChatService | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setAccessibleName("Conversation")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._service = service
        self._column = QWidget()
        self._column.setObjectName("chatColumn")
        self._layout = QVBoxLayout(self._column)
        self._layout.setContentsMargins(18, 14, 18, 14)
        self._layout.setSpacing(10)
        self._layout.addStretch(1)
        self.setWidget(self._column)
        self._items: list[QWidget] = []
        self._turns: dict[str, tuple[UserMessage | None, AssistantMessage | None]] = {}
        self._pending_user: UserMessage | None = None
        self._answer: AssistantMessage | None = None
        self._turn_id = ""
        self._receipts: list[Receipt] = []
        self._cards: dict[str, tuple[QWidget, AssistantMessage, Presentation]] = {}
        self._card_states: dict[str, CardState] = {}
        self._follow = True  # keep the newest text in view unless the user scrolled up
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_MS)
        self._render_timer.timeout.connect(self.render_pending)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        if service is not None:
            self._connect(service)
        self.setAcceptDrops(True)
        self.show_placeholder()

    # -- wiring -----------------------------------------------------------------------------

    def _connect(self, service: ChatService) -> None:
        service.sessionOpened.connect(self._open)
        service.directiveSubmitted.connect(self.add_user)
        service.turnRefused.connect(self._refused)
        service.turnStarted.connect(self._turn_started)
        service.textChunk.connect(self.append_text)
        service.thinkingChunk.connect(self.append_thinking)
        service.toolCallRequested.connect(self._tool_call)
        service.toolResultReady.connect(self._tool_result)
        service.stepFinished.connect(self._step_finished)
        service.turnFinished.connect(self._turn_finished)

    def _open(self, session: str) -> None:
        if session and self._service is not None:
            try:
                transcript = self._service.transcript(session)
            except DamagedEntry as exc:  # changed by another program while it was shown
                self.show_placeholder(damage_words(session, exc))
                return
            self.show_transcript(transcript)
        else:
            self.show_placeholder()

    def reload(self) -> None:
        """Draw the shown session again from the ledger (its shown branch)."""
        if self._service is not None:
            self._open(self._service.session or "")

    # -- whole transcript -------------------------------------------------------------------

    def clear(self) -> None:
        self._render_timer.stop()
        for item in self._items:
            self._layout.removeWidget(item)
            item.deleteLater()
        self._items = []
        self._turns = {}
        self._cards = {}
        self._card_states = {}
        self._pending_user, self._answer, self._turn_id = None, None, ""
        self._receipts = []

    def show_placeholder(
        self, message: str = "Start a conversation: type below and press Enter."
    ) -> None:
        self.clear()
        label = QLabel(message)
        label.setObjectName("chatPlaceholder")
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        theme.follow_theme(
            label, lambda _: f"color: {theme.SUBTLE}; font-size: large; margin-top: 80px;"
        )
        self._add(label)

    def show_turns(self, turns: list[Turn]) -> None:
        """Render turns with no card clicks and no versions known (see `show_transcript`)."""
        self.show_transcript(Transcript(turns, {}, {}))

    def show_transcript(self, transcript: Transcript) -> None:
        """Render a loaded branch: every turn, with a marker on those that did not complete,
        its cards as the user's clicks left them, and ‹ n/m › on directives with versions."""
        if not transcript.turns:
            self.show_placeholder()
            return
        self.clear()
        for turn in transcript.turns:
            version = transcript.versions.get(turn.turn_id, (1, 1))
            self._show_turn(turn, transcript.cards, version)
        self._follow = True
        QTimer.singleShot(0, self._scroll_to_end)

    def _show_turn(
        self, turn: Turn, states: dict[str, CardState], version: tuple[int, int]
    ) -> None:
        directive = turn.directive
        user = self._user_message(turn.turn_id, directive.text, directive.images, version)
        self._add(user)
        answer = AssistantMessage(turn.directive.model)
        self._add(answer)
        receipts: list[Receipt] = []
        for entry in turn.entries:
            payload = entry.payload
            if isinstance(payload, AssistantStep):
                if payload.thinking:
                    answer.add_thinking(payload.thinking)
                if payload.text:
                    answer.add_markdown(payload.text)
                for call in payload.tool_calls:
                    answer.add_tool_call(call.id, call.name, call.arguments)
            elif isinstance(payload, ToolResult):
                answer.set_tool_result(
                    payload.tool_call_id,
                    payload.tool_name,
                    payload.chars,
                    payload.is_error,
                    payload.evidence,
                    payload.content,
                )
            elif isinstance(payload, Receipt):
                receipts.append(payload)
            elif isinstance(payload, Presentation):
                self._add_card(answer, entry.id, payload, states.get(entry.id, CardState()))
        answer.set_outcome(turn.outcome, closing_message(turn))
        answer.set_notice(answer_notice(turn))
        answer.set_receipts(receipts, turn.usage())
        self._add_answer_actions(answer, turn.turn_id)
        self._turns[turn.turn_id] = (user, answer)

    # -- one exchange (also the API a caller without a service drives) -----------------------

    def add_user(self, text: str, images: tuple[str, ...] = ()) -> None:
        self._clear_placeholder()
        self._pending_user = UserMessage(text, images)
        self._add(self._pending_user)
        self._scroll_to_end()

    def begin_answer(self, model: str) -> None:
        """Open the assistant's message; chunks go at its end until `finish_answer`."""
        self._clear_placeholder()
        self._answer = AssistantMessage(model)
        self._answer.stats.setText("Writing…")  # replaced by the receipt line
        self._receipts = []
        self._add(self._answer)

    def append_text(self, chunk: str) -> None:
        if self._answer is None or not chunk:
            return
        self._answer.append_text(chunk)
        if not self._render_timer.isActive():
            self._render_timer.start()

    def append_thinking(self, chunk: str) -> None:
        if self._answer is not None and chunk:
            self._answer.append_thinking(chunk)

    def append_tool_call(self, name: str, arguments: dict[str, Any], call_id: str = "") -> None:
        if self._answer is not None:
            self.render_pending()
            self._answer.add_tool_call(call_id, name, arguments)

    def append_tool_result(
        self,
        name: str,
        chars: int,
        is_error: bool,
        evidence: str = "",
        call_id: str = "",
        preview: str = "",
    ) -> None:
        if self._answer is not None:
            self._answer.set_tool_result(call_id, name, chars, is_error, evidence, preview)

    def render_pending(self) -> None:
        """Render the streaming answer's Markdown now (the timer calls this)."""
        self._render_timer.stop()
        if self._answer is not None and self._answer.live_markdown is not None:
            self._answer.live_markdown.render_pending()

    def finish_answer(self, outcome: str, error: str = "", usage: Usage | None = None) -> None:
        """The answer ended: render what is left and mark how it ended."""
        if self._answer is None:
            return
        self._render_timer.stop()
        self._answer.finish()
        self._answer.set_outcome(outcome, error)
        self._answer.set_receipts(self._receipts, usage)

    def add_problem(self, message: str) -> None:
        """A line that is not a message: why a turn could not start."""
        self._clear_placeholder()
        if self._pending_user is not None:  # nothing was written for it
            self._remove(self._pending_user)
            self._pending_user = None
        label = QLabel(f"✕ {message}")
        label.setObjectName("chatProblem")
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        theme.follow_theme(label, lambda _: f"color: {theme.DANGER};")
        self._add(label)
        self._scroll_to_end()

    def toPlainText(self) -> str:
        """Everything the transcript shows, as text."""
        parts = []
        for item in self._items:
            if isinstance(item, (UserMessage, AssistantMessage)):
                parts.append(item.plain_text())
            elif isinstance(item, QLabel):
                parts.append(item.text())
        return "\n".join(parts)

    @property
    def messages(self) -> list[QWidget]:
        return list(self._items)

    def cards(self) -> list[CardFrame]:
        """The cards shown (not dismissed), in transcript order."""
        return [w for w, _a, _p in self._cards.values() if isinstance(w, CardFrame)]

    def dismissed_cards(self) -> list[DismissedStub]:
        return [w for w, _a, _p in self._cards.values() if isinstance(w, DismissedStub)]

    def user_message(self, turn_id: str) -> UserMessage | None:
        return self._turns.get(turn_id, (None, None))[0]

    def answer_message(self, turn_id: str) -> AssistantMessage | None:
        return self._turns.get(turn_id, (None, None))[1]

    # -- the service's events ---------------------------------------------------------------

    def _turn_started(self, event: TurnStarted) -> None:
        for item in list(self._items):  # "Pick a model first" is not true any more
            if item.objectName() == "chatProblem":
                self._remove(item)
        pending = self._pending_user
        self._turn_id = event.turn_id
        if pending is not None and self._service is not None:
            # now that the directive is an entry, its message can offer Edit and versions
            directive = self._service.directive(event.turn_id)
            user = self._user_message(event.turn_id, directive.text, directive.images)
            index = self._items.index(pending)
            self._layout.insertWidget(index, user)
            self._items[index] = user
            self._layout.removeWidget(pending)
            pending.deleteLater()
            self._pending_user = None
            self._turns[event.turn_id] = (user, None)
        self.begin_answer(event.model)

    def _refused(self, message: str) -> None:
        """Nothing was written: show the session as it is (an edit's old branch included)."""
        if self._service is not None and self._service.session:
            self.reload()
        self.add_problem(message)

    def _tool_call(self, event: ToolCallRequested) -> None:
        self.append_tool_call(event.name, event.arguments, event.id)

    def _tool_result(self, event: ToolResultReady) -> None:
        self.append_tool_result(
            event.name, event.chars, event.is_error, event.evidence, event.id, event.preview
        )

    def _step_finished(self, event: StepFinished) -> None:
        self._receipts.append(event.receipt)
        if self._answer is not None:
            self._answer.set_receipts(self._receipts)

    def _turn_finished(self, event: TurnFinished) -> None:
        answer = self._answer
        self.finish_answer(event.outcome, event.error, event.usage)
        self._answer = None
        if answer is None or self._service is None:
            return
        try:
            transcript = self._service.transcript(event.session)
        except DamagedEntry:  # the answer says how the turn ended; the next open says why
            return
        turn = next((t for t in transcript.turns if t.turn_id == event.turn_id), None)
        if turn is None:
            return
        states = transcript.cards
        receipts = [e.payload for e in turn.entries if isinstance(e.payload, Receipt)]
        for entry in turn.entries:
            if isinstance(entry.payload, Presentation):
                self._add_card(answer, entry.id, entry.payload, states.get(entry.id, CardState()))
        answer.set_notice(answer_notice(turn))
        answer.set_receipts(receipts, event.usage)
        self._add_answer_actions(answer, turn.turn_id)
        user = self._turns.get(turn.turn_id, (None, None))[0]
        self._turns[turn.turn_id] = (user, answer)

    # -- internals --------------------------------------------------------------------------

    def _add(self, widget: QWidget) -> None:
        self._layout.insertWidget(self._layout.count() - 1, widget)  # above the stretch
        self._items.append(widget)

    def _remove(self, widget: QWidget) -> None:
        self._layout.removeWidget(widget)
        self._items.remove(widget)
        for turn_id, (user, answer) in list(self._turns.items()):
            if widget in (user, answer):
                self._turns.pop(turn_id)
        for entry_id, (_w, answer, _p) in list(self._cards.items()):
            if answer is widget:
                self._cards.pop(entry_id)
        widget.deleteLater()

    def _clear_placeholder(self) -> None:
        for item in list(self._items):
            if item.objectName() == "chatPlaceholder":
                self._remove(item)

    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 4

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._follow = True
