"""The append-only ledger: storage, identity (content-addressed ids) and the hash chain.

The names are imported on first use (`__getattr__`): `ledger.location` (where the data lives)
costs no SQLite, which keeps the window's cold start short.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vak_desktop.lazy_exports import lazy_exports

if TYPE_CHECKING:
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

_WHERE = {
    "Deletion": "vak_desktop.ledger.deletion",
    "HasDerivedSessions": "vak_desktop.ledger.deletion",
    "DamagedEntry": "vak_desktop.ledger.errors",
    "LedgerError": "vak_desktop.ledger.errors",
    "StorageError": "vak_desktop.ledger.errors",
    "data_dir": "vak_desktop.ledger.location",
    "ProfileStore": "vak_desktop.ledger.profiles",
    "StoredProfile": "vak_desktop.ledger.profiles",
    "Entry": "vak_desktop.ledger.store",
    "LEDGER_FILENAME": "vak_desktop.ledger.store",
    "Ledger": "vak_desktop.ledger.store",
    "SessionInfo": "vak_desktop.ledger.store",
    "UnknownEntry": "vak_desktop.ledger.store",
    "UnknownSession": "vak_desktop.ledger.store",
    "BrokenLink": "vak_desktop.ledger.verification",
    "VerifyReport": "vak_desktop.ledger.verification",
    "SessionBusy": "vak_desktop.ledger.writers",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


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
