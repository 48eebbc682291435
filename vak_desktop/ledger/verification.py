"""`vak ledger verify`: every entry id and chain link recomputed, then removals looked for.

The chain shows a changed byte; the head anchor (`anchor.py`) and the sessions table show what
was removed: a session's anchored head gone or rewritten, fewer entries than anchored, a
session without its row. `ledger_events` adds what happened to the ledger itself, deletions
through Vak included (counted, never named).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vak_desktop.ledger.anchor import AnchorPoint, read_anchor, read_events
from vak_desktop.ledger.canonical import entry_id, envelope_bytes
from vak_desktop.ledger.deletion import SESSION_COMPACTED, deletions, markers_left
from vak_desktop.ledger.integrity import ANCHOR_MISSING, ANCHOR_STARTED, events, events_digest
from vak_desktop.ledger.sqlite_import import sqlite_utils


@dataclass(frozen=True)
class BrokenLink:
    seq: int
    id: str
    session: str
    reason: str


@dataclass(frozen=True)
class VerifyReport:
    """`first_broken`: the first entry whose id or chain link fails; `removed`: what the head
    anchor says is gone (a truncated or rewritten tail, a removed session or sessions row);
    `notes`: what happened to the ledger itself (triggers restored, the anchor started)."""

    entries: int
    sessions: int
    first_broken: BrokenLink | None
    removed: tuple[BrokenLink, ...] = ()
    notes: tuple[str, ...] = ()
    anchor_lost: bool = False  # the anchor file went missing once: a removal before is unseen
    events_changed: str = ""  # why `ledger_events` no longer matches what the anchor recorded
    deletions: int = 0  # sessions deleted for good through Vak (`deletion.py`), as recorded
    markers_left: int = 0  # deletion markers written outside Vak: their sessions are unguarded

    @property
    def ok(self) -> bool:
        return (
            self.first_broken is None
            and not self.removed
            and not self.anchor_lost
            and not self.events_changed
            and not self.markers_left
        )


def verify_ledger(db: sqlite_utils.Database, anchor: Path | None) -> VerifyReport:
    """Recompute every entry id and check every chain link, in append order; then what the
    head anchor and the sessions table say is gone."""
    seen: dict[str, str] = {}  # id -> session
    sessions = set()
    first_broken: BrokenLink | None = None
    count = 0
    cursor = db.execute(
        # payload as raw bytes: a tampered byte need not even be valid UTF-8
        "SELECT seq, id, parent, session, kind, CAST(payload AS BLOB), created_at"
        " FROM entries ORDER BY seq"
    )
    for seq, id_, parent, session, kind, payload, created_at in cursor:
        count += 1
        sessions.add(session)
        if first_broken is None:
            reason = _check_entry(seen, id_, parent, session, kind, payload, created_at)
            if reason:
                first_broken = BrokenLink(seq, id_, session, reason)
        seen[id_] = session
    return VerifyReport(
        entries=count,
        sessions=len(sessions),
        first_broken=first_broken,
        removed=tuple(_removed(db, anchor)),
        notes=tuple(
            f"{at}: {text}"
            for at, kind, text in events(db)
            if kind not in (ANCHOR_STARTED, SESSION_COMPACTED)
        ),
        anchor_lost=bool(events(db, ANCHOR_MISSING)),
        events_changed=_events_changed(db, anchor),
        deletions=deletions(db),
        markers_left=markers_left(db),
    )


def _events_changed(db: sqlite_utils.Database, anchor: Path | None) -> str:
    """Why the `ledger_events` rows are not the ones the anchor last counted ('' if they are):
    recomputed from the rows, since a row is what an attacker can write (`anchor.py`)."""
    for counted in read_events(anchor) if anchor is not None else []:
        have, digest = events_digest(db, counted.count)
        if have < counted.count:
            return (
                f"{counted.count - have} of the {counted.count} ledger events the anchor"
                " counted were removed"
            )
        if digest != counted.digest:
            return f"the ledger events were rewritten: the first {counted.count} no longer match"
    return ""


def _removed(db: sqlite_utils.Database, anchor: Path | None) -> Iterator[BrokenLink]:
    """What the head anchor and the sessions table say is gone from the entries."""
    orphans = db.execute(
        "SELECT session, MIN(seq), MIN(id) FROM entries"
        " WHERE session NOT IN (SELECT id FROM sessions) GROUP BY session"
    ).fetchall()
    for session, seq, id_ in orphans:
        yield BrokenLink(seq, id_, session, "the session's row was removed (entries remain)")
    points = read_anchor(anchor) if anchor is not None else None
    for point in (points or {}).values():
        reason = _anchor_mismatch(db, point)
        if reason:
            yield BrokenLink(point.seq, point.head, point.session, reason)


def _anchor_mismatch(db: sqlite_utils.Database, point: AnchorPoint) -> str:
    if db.execute("SELECT 1 FROM sessions WHERE id = ?", [point.session]).fetchone() is None:
        has_entries = db.execute(
            "SELECT 1 FROM entries WHERE session = ? LIMIT 1", [point.session]
        ).fetchone()
        if has_entries is None:
            return f"session {point.session} was removed ({point.count} anchored entries)"
        return ""  # reported above as an orphan
    row = db.execute("SELECT id, session FROM entries WHERE seq = ?", [point.seq]).fetchone()
    if row is None or tuple(row) != (point.head, point.session):
        return (
            f"the session's anchored head #{point.seq} {point.head} is gone or rewritten:"
            " its tail was removed or replaced"
        )
    (count,) = db.execute(
        "SELECT COUNT(*) FROM entries WHERE session = ? AND seq <= ?",
        [point.session, point.seq],
    ).fetchone()
    if count != point.count:
        return (
            f"{point.count - count} of the session's {point.count} anchored entries up to"
            f" #{point.seq} were removed"
        )
    return ""


def _check_entry(
    seen: dict[str, str],
    id_: str,
    parent: str | None,
    session: str,
    kind: str,
    payload: bytes,
    created_at: str,
) -> str:
    """Why this stored row is not a valid link of its chain, or '' when it is."""
    envelope = envelope_bytes(
        created_at=created_at, kind=kind, parent=parent, payload=payload, session=session
    )
    if entry_id(envelope) != id_:
        return "content does not match its id (the entry was altered after it was written)"
    if parent is not None:
        if parent not in seen:
            return f"parent {parent} does not precede it in the ledger"
        if seen[parent] != session:
            return f"parent {parent} belongs to another session"
    return ""
