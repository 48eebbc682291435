"""The append-only ledger: storage, identity (content-addressed ids) and the hash chain.

The names are imported on first use (`__getattr__`): `ledger.location` (where the data lives)
costs no SQLite, which keeps the window's cold start short.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    """`from vak_desktop.ledger import X`: X from its module, imported now and kept."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
