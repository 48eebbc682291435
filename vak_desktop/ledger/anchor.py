"""The head anchor: a file beside the database recording each session's head and entry count.

The hash chain shows any *changed* byte, but not a *removed* tail: delete a session's last
entries (or rewrite them and recompute their ids, or delete a whole session) and what is left
is still a valid chain. So after every commit the ledger appends one line per touched session
to `<ledger>.anchor`:

    {"count": 7, "head": "b3:…", "seq": 42, "session": "1f0c…"}

(`count` = the session's entries up to and including `seq`). `vak ledger verify` takes the
newest line of each session (largest seq) and checks the database still holds that head, at
that seq, in that session, with that many entries up to it, and a `sessions` row for it.

What it detects, from an edit of the database alone: removing or rewriting (even re-hashed) any
entry at or before a session's anchored head — its last entry, its last turn, any branch tip —
removing a whole session or its `sessions` row, or replacing the database with an older copy.

The anchor also holds one line for the database's own history, `ledger_events` (triggers
restored, the anchor started or found missing):

    {"digest": "b3:…", "events": 5}

written whenever an open records an event: `events` rows, hashed in order (`events_digest`).
Each such line commits to a prefix of the events and every one is kept (compaction too), so
verify recomputes each digest from the rows rather than trusting them: an event rewritten or
removed (even with the triggers dropped, even by REPLACE) fails verify: the note "the anchor
went missing" cannot be quietly overwritten. A ledger whose migrations show it started an anchor
at an earlier open, but has neither the file nor the event, is also recorded as one whose anchor
went missing (its `anchor_started` row was removed with the file).

What it cannot detect, by design or by nature:
- a consistent edit of both files (whoever can rewrite every file can rewrite everything; a
  keyed HMAC would only move the problem to wherever the key is kept): e.g. delete an entry,
  then rewrite the anchor's lines to match;
- entries committed after the newest anchor line: a process killed between its commit and the
  anchor write (a few microseconds) leaves at most its last entry unanchored;
- a ledger rewound to look like one from a build before the anchor: triggers dropped, the
  anchor file, `ledger_events` and the `_vak_migrations` rows from 0004 on all removed, and the
  schema those migrations made dropped too — it then migrates as an old ledger would;
- the sessions' title and archive flag, which are the user's metadata and not hashed; and
  `capacity_profiles` rows appended from outside (insert-only, but not chained: a forged
  profile is a new row, and the next probe's row wins);
- a dropped trigger put back exactly as written before the next open (nothing then records
  that it was gone; what was done meanwhile is still the anchor's to detect);
- a kill between migration 0004's commit and the first anchor write of that same open (a few
  milliseconds, once per ledger's life) makes the next open report the anchor missing: a false
  alarm on the safe side.
After a power loss (WAL with synchronous=NORMAL may lose the last commits) verify names the lost
entries as missing, which is the truth.

Lines are appended with one `write` on an O_APPEND descriptor, so processes sharing a ledger
interleave whole lines; a line torn by a kill mid-write is skipped. The file is compacted (one
line per session, written to a temporary file and renamed) when it grows past `COMPACT_BYTES`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ANCHOR_SUFFIX = ".anchor"
COMPACT_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)  # slots: one is made on every append
class AnchorPoint:
    """A session's head as it was committed: the entry, its seq, and the session's count."""

    session: str
    seq: int
    head: str
    count: int

    def line(self) -> bytes:
        # formatted by hand (this runs on every append): ids and sessions are hex, but a
        # session id from elsewhere is still written as a JSON string
        session = self.session if self.session.isalnum() else json.dumps(self.session)[1:-1]
        return (
            f'{{"count":{self.count},"head":"{self.head}","seq":{self.seq},'
            f'"session":"{session}"}}\n'
        ).encode()


@dataclass(frozen=True, slots=True)
class EventsPoint:
    """How many `ledger_events` rows there were at a commit, and the digest of them in order."""

    count: int
    digest: str

    def line(self) -> bytes:
        return f'{{"digest":"{self.digest}","events":{self.count}}}\n'.encode()


def anchor_path(ledger_path: Path) -> Path:
    return ledger_path.with_name(ledger_path.name + ANCHOR_SUFFIX)


def read_anchor(path: Path) -> dict[str, AnchorPoint] | None:
    """The newest point of each session, or None when the file does not exist."""
    read = _read(path)
    return None if read is None else read[0]


def read_events(path: Path) -> list[EventsPoint]:
    """Every events line of the file, in the order written (none when there is no file)."""
    read = _read(path)
    return [] if read is None else read[1]


def _read(path: Path) -> tuple[dict[str, AnchorPoint], list[EventsPoint]] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    points: dict[str, AnchorPoint] = {}
    counted: list[EventsPoint] = []
    for raw in data.split(b"\n"):
        try:
            fields = json.loads(raw)
            if "events" in fields:
                counted.append(EventsPoint(int(fields["events"]), str(fields["digest"])))
                continue
            point = AnchorPoint(
                str(fields["session"]),
                int(fields["seq"]),
                str(fields["head"]),
                int(fields["count"]),
            )
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line, or an empty one
        known = points.get(point.session)
        if known is None or point.seq > known.seq:
            points[point.session] = point
    return points, counted


class HeadAnchor:
    """The writer of one ledger's anchor file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def exists(self) -> bool:
        return self.path.exists()

    def record(self, points: Iterable[AnchorPoint]) -> None:
        self._write(b"".join(p.line() for p in points))

    def record_one(self, point: AnchorPoint) -> None:
        """`record([point])` without the join: this runs after every single append."""
        if self._fd is None or self._replaced():
            self._write(point.line())
        else:
            os.write(self._fd, point.line())

    def _replaced(self) -> bool:
        """Whether another connection renamed a new file over ours (a deletion's rewrite, a
        compaction): our descriptor then writes to an unlinked file. One fstat (~1 µs)."""
        if self._fd is not None and os.fstat(self._fd).st_nlink == 0:
            self.close()
            return True
        return False

    def _write(self, data: bytes) -> None:
        if not data:
            return
        if self._fd is None or self._replaced():
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(self._fd, data)

    def compact_if_large(self) -> None:
        """Rewrite the file as one line per session once it outgrows `COMPACT_BYTES`."""
        try:
            if self.path.stat().st_size < COMPACT_BYTES:
                return
        except FileNotFoundError:
            return
        points, counted = _read(self.path) or ({}, [])
        self.replace(points.values(), counted)

    def record_events(self, counted: EventsPoint) -> None:
        self._write(counted.line())

    def replace(self, points: Iterable[AnchorPoint], counted: Iterable[EventsPoint] = ()) -> None:
        """Write the file anew with exactly `points` (and the events lines), atomically
        (temporary file, fsync, rename)."""
        self.close()
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as out:
            out.write(b"".join(p.line() for p in points) + b"".join(c.line() for c in counted))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
