"""The read side of the chat service: sessions, the branch shown of each, and card clicks.

`SessionBrowsing` is a base of `ChatService`. It reads the ledger for what the chat view draws
(the shown branch's turns, every clicked card's state, each directive's versions), switches
between the alternatives an edit or a regeneration made (nothing is written), starts a new
alternative through the service's `_start`, and writes card clicks as ledger facts. It also
adds a chat's own workspace folders (a `workspace_added` entry) and runs the side call that names
a new chat after its first answer (runtime/turn/titles.py). The signals it emits are declared
on `ChatService`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.turns import Turn, split_turns
from vak_desktop.ledger import DamagedEntry, Ledger
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime import (
    ModelBinding,
    SessionSummary,
    TurnRunner,
    session_summaries,
    session_turns,
)
from vak_desktop.runtime.presentations import (
    CardState,
    presentation_states,
    record_feedback,
    set_selection,
)
from vak_desktop.runtime.sessions.branches import (
    alternatives,
    branch_parent,
    chain_from,
    newest_leaf,
    version_positions,
)
from vak_desktop.runtime.sessions.continuing import continue_in_new_chat
from vak_desktop.runtime.tools.workspace import WorkspaceError, add_workspace_folder
from vak_desktop.runtime.turn.titles import wants_title, write_title

log = logging.getLogger(__name__)


def damage_words(session: str, exc: DamagedEntry) -> str:
    """The one line the window says of a chat that no longer reads back: its entry's seq and
    where to learn more, short enough for the status bar (~90 characters); the cause is
    logged."""
    log.info("session %s cannot be shown: %s", session, exc)
    which = f"entry {exc.seq}" if exc.seq is not None else "an entry"
    return (
        f"Cannot open this chat: {which} was changed outside Vak; `vak ledger verify` tells more."
    )


@dataclass(frozen=True)
class Transcript:
    """What the chat view draws for a session, from one read of its entries: the shown
    branch's turns, every clicked card's state, each directive's (position, count) among its
    versions."""

    turns: list[Turn]
    cards: dict[str, CardState]
    versions: dict[str, tuple[int, int]]


class SessionBrowsing:
    """Sessions, branches and cards over the service's ledger (a mixin of `ChatService`)."""

    _ledger: Ledger
    _session: str | None
    _shown: dict[str, str]  # session -> the leaf of the branch shown, if not head
    _opening: tuple[str, Transcript] | None = None  # read by open_session, while it emits
    branchChanged: Any  # Signal(str), declared on ChatService
    presentationsChanged: Any  # Signal(str), declared on ChatService

    sessionOpened: Any  # Signal(str), declared on ChatService
    sessionsChanged: Any  # Signal(), declared on ChatService
    notice: Any  # Signal(str), declared on ModelSelection
    _keep_alive: Callable[[str], str | int | None]
    _write_new_chat_prompt: Callable[[str], None]  # SessionPrompts'

    @property
    def busy(self) -> bool:
        raise NotImplementedError

    def _start(self, text: str, images: tuple[str, ...], parent: str | None) -> bool:
        raise NotImplementedError

    def open_session(self, session: str | None) -> bool:
        raise NotImplementedError  # ChatService's

    # -- a chat's own folders and its title ------------------------------------------------

    def add_chat_folder(self, folder: str) -> str:
        """Let this chat's file tools read `folder` (a `workspace_added` entry); a new chat is
        written now to hold it. Returns why not, or ''."""
        if self.busy:
            return "Wait for the answer to finish before adding a folder."
        if self._session is None:
            self._session = self._ledger.create_session().id
            self._write_new_chat_prompt(self._session)
            self.sessionOpened.emit(self._session)
        try:
            add_workspace_folder(self._ledger, self._session, folder)
        except WorkspaceError as exc:
            return str(exc)
        self.sessionsChanged.emit()
        self.notice.emit(f"This chat's file tools can read {folder} now.")
        return ""

    async def _title(
        self, session: str, runner: TurnRunner, binding: ModelBinding, model: str
    ) -> None:
        """The side call that names a new chat (runtime/turn/titles.py); the turn is over and
        never waits for it. A failure leaves the first words as the title."""
        if wants_title(self._ledger, session) is None:
            return
        try:
            title = await write_title(
                self._ledger,
                session,
                runner.provider,
                binding,
                keep_alive=self._keep_alive(model),
            )
        except ProviderError as exc:
            log.info("no title for %s: %s", session, exc)
            return
        if title:
            self.sessionsChanged.emit()

    # -- sessions ---------------------------------------------------------------------------

    def sessions(self) -> list[SessionSummary]:
        """Every session, the most recently active first."""
        return session_summaries(self._ledger)

    def _read_to_open(self, session: str) -> str:
        """Read `session`'s transcript before it is shown; why it cannot be, or ''. An entry
        changed outside Vak no longer reads back (the ledger's DamagedEntry names its seq):
        every later read of it would fail alike. The transcript read here is the one the chat
        view draws while `sessionOpened` is emitted (`_opening`), so the check costs no second
        read (85 ms for 2,000 entries)."""
        try:
            self._opening = (session, self.transcript(session))
        except DamagedEntry as exc:
            return damage_words(session, exc)
        return ""

    def open_turn(self, session: str, turn_id: str) -> bool:
        """Open `session` on the branch that holds turn `turn_id` (a search hit in an older
        version opens that version, with the newest conversation that followed it); the
        default branch when the turn is on it. Nothing is written."""
        if self.busy:
            return False
        entries = list(self._ledger.entries(session))
        if not any(e.id == turn_id for e in entries):
            return self.open_session(session)
        on_head = any(e.id == turn_id for e in chain_from(entries, None))
        if on_head:
            self._shown.pop(session, None)
        else:
            self._shown[session] = newest_leaf(entries, turn_id)
        return self.open_session(session)

    def turns(self, session: str) -> list[Turn]:
        """The turns of the branch of `session` that is shown (the newest one by default)."""
        head = self._shown.get(session)
        if head is None:
            return session_turns(self._ledger, session)
        return split_turns(self._ledger.chain_to_root(session, head))

    def directive(self, turn_id: str) -> Directive:
        """The directive entry `turn_id` (what the user asked, with its images)."""
        payload = self._ledger.entry(turn_id).payload
        if not isinstance(payload, Directive):
            raise ValueError(f"{turn_id} is not a directive")
        return payload

    def transcript(self, session: str) -> Transcript:
        """The shown branch of `session` with its card states and versions (one ledger read)."""
        opening = self._opening
        if opening is not None and opening[0] == session:
            return opening[1]
        entries = list(self._ledger.entries(session))
        chain = chain_from(entries, self._shown.get(session))
        return Transcript(
            split_turns(chain), presentation_states(entries), version_positions(entries)
        )

    # -- branches ---------------------------------------------------------------------------

    def alternatives(self, turn_id: str) -> tuple[int, int]:
        """(position, count) of a turn among its alternatives (edits and regenerations), 1-based."""
        if self._session is None:
            return (1, 1)
        siblings = alternatives(list(self._ledger.entries(self._session)), turn_id)
        return (siblings.index(turn_id) + 1, len(siblings))

    def show_alternative(self, turn_id: str, step: int) -> bool:
        """Show the alternative `step` places after (or before) `turn_id`, with the newest
        conversation that followed it. Nothing is written. Refused while a turn runs."""
        session = self._session
        if session is None or self.busy:
            return False
        entries = list(self._ledger.entries(session))
        siblings = alternatives(entries, turn_id)
        target = siblings.index(turn_id) + step
        if not 0 <= target < len(siblings):
            return False
        leaf = newest_leaf(entries, siblings[target])
        head = self._ledger.head(session)
        if head is not None and head.id == leaf:
            self._shown.pop(session, None)
        else:
            self._shown[session] = leaf
        self.branchChanged.emit(session)
        return True

    def edit(self, turn_id: str, text: str, images: tuple[str, ...] = ()) -> bool:
        """Send `text` as a new alternative of turn `turn_id`; the old turn and all that
        followed it stay in the ledger, on their own branch."""
        return self._branch(turn_id, text.strip(), images)

    def regenerate(self, turn_id: str) -> bool:
        """Ask again: the same directive as a new alternative of `turn_id`, answered anew by
        the selected model."""
        session = self._session
        if session is None:
            return False
        directive = self._ledger.entry(turn_id).payload
        if not isinstance(directive, Directive):
            return False
        return self._branch(turn_id, directive.text, directive.images)

    def _branch(self, turn_id: str, text: str, images: tuple[str, ...]) -> bool:
        session = self._session
        if session is None or not text or self.busy:
            return False
        head = self._shown.get(session)
        parent = branch_parent(self._ledger.chain_to_root(session, head), turn_id)
        return self._start(text, images, parent)

    def continue_in_new_chat(self, turn_id: str) -> str:
        """A new chat holding this turn's version and what led to it (`continuing.py`),
        opened at once. Returns the new session, or '' when refused (a turn is running)."""
        session = self._session
        if session is None or self.busy:
            return ""
        made = continue_in_new_chat(self._ledger, session, turn_id)
        self.sessionsChanged.emit()
        self.open_session(made.id)
        return made.id

    # -- cards ------------------------------------------------------------------------------

    def presentation_states(self, session: str | None = None) -> dict[str, CardState]:
        """Every clicked card of `session` (default: the shown one) and what the clicks say."""
        session = session or self._session
        if session is None:
            return {}
        return presentation_states(self._ledger.entries(session))

    def rate_presentation(self, presentation_id: str, verdict: str) -> None:
        """Record 👍 ("up"), 👎 ("down") or taking it back ("clear") as a ledger fact."""
        self._card_fact(
            lambda session: record_feedback(self._ledger, session, presentation_id, verdict),
            presentation_id,
        )

    def select_presentation(self, presentation_id: str, action: str) -> None:
        """Record that a card was dismissed or restored."""
        self._card_fact(
            lambda session: set_selection(self._ledger, session, presentation_id, action),
            presentation_id,
        )

    def _card_fact(self, write: Callable[[str], object], presentation_id: str) -> None:
        """Write a click on a card (as a ledger fact in the card's own session)."""
        session = self._ledger.entry(presentation_id).session  # UnknownEntry: no such card
        write(session)  # ValueError: not a card, or not a verdict/action
        self.presentationsChanged.emit(session)
