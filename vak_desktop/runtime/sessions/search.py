"""Finding earlier conversations: BM25 over the TurnCards of every session.

A TurnCard stores its index terms when it is written, so a search reads stored cards and
counts the query's words against their terms; no transcript is re-read. A hit names the
session, the turn, what was asked and the score, best first. Archived sessions are searched
too (archiving hides a session, it does not forget it) and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.relevance import bm25_scores, card_terms, words
from vak_desktop.ledger import Ledger


@dataclass(frozen=True)
class SessionHit:
    session: str
    title: str
    archived: bool
    turn_id: str
    asked: str
    narration: str
    score: float


def search_sessions(ledger: Ledger, query: str, limit: int = 20) -> list[SessionHit]:
    """The turns of all sessions whose cards best match `query`, best first (score > 0)."""
    terms = words(query)
    if not terms:
        return []
    infos = {info.id: info for info in ledger.sessions(include_archived=True)}
    found = [
        (entry.payload, entry.session)
        for entry in ledger.entries_of_kind(TurnCard.KIND)
        if isinstance(entry.payload, TurnCard) and entry.session in infos
    ]
    if not found:
        return []
    scores = bm25_scores(terms, [card_terms(card) for card, _ in found], always_positive=True)
    ranked = sorted(
        (i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i)
    )
    hits = []
    for i in ranked[:limit]:
        card, session = found[i]
        info = infos[session]
        hits.append(
            SessionHit(
                session=session,
                title=info.title,
                archived=info.archived,
                turn_id=card.turn_id,
                asked=card.asked,
                narration=card.answered.narration,
                score=scores[i],
            )
        )
    return hits
