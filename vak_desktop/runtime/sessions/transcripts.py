"""Sessions and turns as the user saw them: what `vak sessions`, `vak show` and the window list."""

from __future__ import annotations

from dataclasses import dataclass

from vak_desktop.context.payloads import Presentation
from vak_desktop.context.planning.turns import Turn, split_turns
from vak_desktop.ledger import Ledger


@dataclass(frozen=True)
class SessionSummary:
    id: str
    title: str
    turns: int
    updated_at: str
    model: str
    archived: bool = False
    derived_from: str | None = None  # the chat it was continued from ("New chat from here")

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "turns": self.turns,
            "updated_at": self.updated_at,
            "model": self.model,
            "derived_from": self.derived_from,
        }


def session_summaries(ledger: Ledger, include_archived: bool = False) -> list[SessionSummary]:
    """Every session, the most recently active first."""
    out = []
    for info in ledger.sessions(include_archived=include_archived):
        chain = ledger.chain_to_root(info.id)
        turns = split_turns(chain)
        out.append(
            SessionSummary(
                id=info.id,
                title=info.title or "Untitled",
                turns=len(turns),
                updated_at=chain[-1].created_at if chain else info.created_at,
                model=turns[-1].directive.model if turns else "",
                archived=info.archived,
                derived_from=info.derived_from,
            )
        )
    return out


def session_turns(ledger: Ledger, session: str) -> list[Turn]:
    """The turns of the session's current branch. Raises UnknownSession."""
    return split_turns(ledger.chain_to_root(session))


def presentations_of(turn: Turn) -> list[dict[str, str]]:
    """The cards the turn showed, in the order they were written: each Presentation's entry id,
    semantic type, title and payload digest (the payload itself is one `recall` away)."""
    return [
        {
            "id": e.id,
            "type": e.payload.semantic_type,
            "title": e.payload.title,
            "payload_digest": e.payload.payload_digest,
        }
        for e in turn.entries
        if isinstance(e.payload, Presentation)
    ]


def turn_to_json(turn: Turn) -> dict[str, object]:
    return {
        "turn_id": turn.turn_id,
        "directive": turn.directive.text,
        "answer": turn.answer,
        "presentations": presentations_of(turn),
        "outcome": turn.outcome,
    }
