"""The append-only ledger: storage, identity (content-addressed ids) and the hash chain."""

import vak_desktop.ledger.sqlite_import  # noqa: F401  (first: sqlite-utils without numpy)
from vak_desktop.ledger.deletion import Deletion, HasDerivedSessions
from vak_desktop.ledger.errors import DamagedEntry, LedgerError, StorageError
from vak_desktop.ledger.location import data_dir
from vak_desktop.ledger.profiles import ProfileStore, StoredProfile
from vak_desktop.ledger.store import (
    LEDGER_FILENAME,
    Entry,
    Ledger,
    SessionInfo,
    UnknownEntry,
    UnknownSession,
)
from vak_desktop.ledger.verification import BrokenLink, VerifyReport
from vak_desktop.ledger.writers import SessionBusy

__all__ = [
    "LEDGER_FILENAME",
    "BrokenLink",
    "DamagedEntry",
    "Deletion",
    "Entry",
    "HasDerivedSessions",
    "Ledger",
    "LedgerError",
    "ProfileStore",
    "SessionBusy",
    "SessionInfo",
    "StorageError",
    "StoredProfile",
    "UnknownEntry",
    "UnknownSession",
    "VerifyReport",
    "data_dir",
]
