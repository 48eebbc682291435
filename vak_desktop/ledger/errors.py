"""The ledger's errors: the base, an entry changed outside Vak, and what a failing disk or a
locked file becomes.

SQLite reports a full disk, a read-only file or a lock as an OperationalError whose text hides
among a traceback (and a ROLLBACK after a full disk used to raise "cannot rollback - no
transaction is active", hiding the cause). `storage` turns each into one line naming the cause
and the path.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator


class LedgerError(Exception):
    """Base of the ledger's errors."""


class DamagedEntry(LedgerError):
    """A stored entry that no longer reads back (not UTF-8, not JSON, not its kind's shape):
    its bytes were changed outside Vak. Named by its seq, never a traceback."""

    def __init__(self, seq: int | None, why: str) -> None:
        which = f"entry {seq}" if seq is not None else "an entry"
        super().__init__(
            f"{which} of the ledger cannot be read ({why}): it was changed outside Vak; "
            "`vak ledger verify` names every entry that was"
        )
        self.seq = seq


class StorageError(LedgerError):
    """The database file cannot be written or read: disk full, read-only, locked, I/O error.
    The message is one line naming the cause and the path; nothing was half-written."""

    def __init__(self, path: str, exc: sqlite3.Error | OSError) -> None:
        cause = os_cause(exc) if isinstance(exc, OSError) else str(exc)
        for needle, plain in _CAUSES:
            if needle in cause:
                cause = plain
                break
        super().__init__(f"cannot write the ledger {path}: {cause}")


def os_cause(exc: OSError) -> str:
    """An OSError as the few words a user acts on ("the disk is full")."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "the disk is full"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied (check the file's permissions)"
    if exc.errno == errno.EROFS:
        return "the disk is read-only"
    return exc.strerror or str(exc)


_CAUSES = (
    ("database or disk is full", "the disk is full"),
    ("readonly database", "it is read-only (check the permissions of the file and its folder)"),
    ("unable to open database", "it cannot be opened (check the folder exists and is writable)"),
    ("database is locked", "another program holds it locked (close it and try again)"),
    ("disk I/O error", "a disk I/O error (the disk may be full or failing)"),
)


@contextlib.contextmanager
def storage(path: str) -> Iterator[None]:
    """Turn SQLite's operational failures into one StorageError naming cause and path."""
    try:
        yield
    except (sqlite3.OperationalError, sqlite3.DatabaseError) as exc:
        if isinstance(exc, sqlite3.IntegrityError):
            raise
        raise StorageError(path, exc) from None
