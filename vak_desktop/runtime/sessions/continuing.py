"""Continue in a new chat: a new session whose history is one branch of another, up to a turn.

Any message version can be carried on apart from its chat: the new session gets a copy of
every entry on that version's branch from the root to the end of its turn (the directive, its
steps, tool results, receipts, card and closing activity; not the turns after it, nor other
branches), appended afresh, so it is a chain of its own that verifies on its own and can be
deleted on its own; a directive or step keeps the time it was said (`said_at`). Entry ids include their session, so each copy has a new id; a payload field
that named an old id (a tool result's evidence, a card's turn, a summary's range) names the
copy instead. The new session's `derived_from` is the old one, fixed for its life: deleting
the old one asks to delete it too (`ledger/deletion.py`). Written in one transaction: a
failure leaves no half-copied chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vak_desktop.context.codec import decode_payload, to_json_value
from vak_desktop.context.payloads import Directive
from vak_desktop.ledger import Entry, Ledger, SessionInfo
from vak_desktop.runtime.sessions.branches import chain_from, newest_leaf


def history_through_turn(entries: Sequence[Entry], entry_id: str) -> list[Entry]:
    """The branch of `entry_id` from the root to the end of its turn: where the next
    directive on that branch (its newest continuation) would begin."""
    chain = chain_from(entries, newest_leaf(entries, entry_id))
    at = next(i for i, e in enumerate(chain) if e.id == entry_id)
    for i in range(at + 1, len(chain)):
        if isinstance(chain[i].payload, Directive):
            return chain[:i]
    return chain


def continued_title(title: str) -> str:
    return f"{title or 'Untitled'} (continued)"


def continue_in_new_chat(ledger: Ledger, session: str, entry_id: str) -> SessionInfo:
    """A new session holding `entry_id`'s branch of `session` through its turn, derived from
    `session`. KeyError when the entry is not one of the session's."""
    source = ledger.session(session)
    entries = list(ledger.entries(session))
    history = history_through_turn(entries, entry_id)
    renamed: dict[str, str] = {}
    with ledger.transaction():
        made = ledger.create_session(continued_title(source.title), derived_from=session)
        for entry in history:
            value = _renamed(to_json_value(entry.payload), renamed)
            if value.get("said_at") == "":  # the copy keeps when it was said, not copied
                value["said_at"] = entry.created_at
            payload = decode_payload(entry.kind, value)
            parent = renamed[entry.parent] if entry.parent is not None else None
            renamed[entry.id] = ledger.append(made.id, payload, parent=parent).id
    return made


def _renamed(value: Any, renamed: dict[str, str]) -> Any:
    """`value` with every string that is an old entry id replaced by its copy's id."""
    if isinstance(value, str):
        return renamed.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, renamed) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, renamed) for k, v in value.items()}
    return value
