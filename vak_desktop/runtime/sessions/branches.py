"""Branches of a session, read from its entries.

An edit or a regenerate never rewrites anything: it appends a new `Directive` whose parent is
the entry the original directive followed, so the two directives are *alternatives* of one
turn. Which branch a person is looking at is a choice of leaf; the ledger's own head (its
newest entry) is the default. These functions only read entries; they write nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from vak_desktop.context.payloads import Directive
from vak_desktop.ledger.store import Entry

ROOT = ""  # the parent to pass to `TurnRunner.run` for an alternative of a session's first turn


def branch_parent(chain: Sequence[Entry], directive_id: str) -> str:
    """The entry an alternative of `directive_id` must follow (ROOT for the first entry)."""
    for entry in chain:
        if entry.id == directive_id:
            return entry.parent or ROOT
    raise KeyError(f"{directive_id} is not on this branch")


def alternatives(entries: Sequence[Entry], directive_id: str) -> list[str]:
    """Every directive that shares `directive_id`'s parent (itself included), oldest first.

    `entries` is all of a session's entries in append order (`Ledger.entries`)."""
    parent: str | None = None
    found = False
    for entry in entries:
        if entry.id == directive_id:
            parent, found = entry.parent, True
            break
    if not found:
        raise KeyError(f"{directive_id} is not an entry of this session")
    return [e.id for e in entries if e.parent == parent and isinstance(e.payload, Directive)]


def newest_leaf(entries: Sequence[Entry], entry_id: str) -> str:
    """The newest entry at or below `entry_id`: where that branch's conversation stands."""
    below = {entry_id}
    newest = entry_id
    for entry in entries:  # append order: a child always comes after its parent
        if entry.parent in below:
            below.add(entry.id)
            newest = entry.id
    return newest


def chain_from(entries: Sequence[Entry], leaf: str | None) -> list[Entry]:
    """The entries from the root to `leaf` (None: the newest entry), from one read of a
    session's entries — what `Ledger.chain_to_root` returns, without reading them again."""
    if not entries:
        return []
    by_id = {e.id: e for e in entries}
    cursor: str | None = leaf if leaf is not None else entries[-1].id
    if cursor not in by_id:
        raise KeyError(f"{cursor} is not an entry of this session")
    chain: list[Entry] = []
    while cursor is not None:
        entry = by_id[cursor]
        chain.append(entry)
        cursor = entry.parent
    chain.reverse()
    return chain


def version_positions(entries: Sequence[Entry]) -> dict[str, tuple[int, int]]:
    """Every directive's (position, count) among its alternatives, 1-based, oldest first."""
    siblings: dict[str | None, list[str]] = {}
    for entry in entries:
        if isinstance(entry.payload, Directive):
            siblings.setdefault(entry.parent, []).append(entry.id)
    return {
        directive: (n, len(group))
        for group in siblings.values()
        for n, directive in enumerate(group, start=1)
    }
