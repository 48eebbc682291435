"""Where a measured CapacityProfile lives outside a session: the `capacity_profiles` table.

Why a table and not a session: a probe belongs to a model, not to a conversation. `vak probe`
runs with no session at all, and the background probe is detached from the turn that started
it, so its result must be readable by every session and by `vak profile`. The table sits in the
ledger's database, is insert-only (triggers refuse UPDATE and DELETE) and keeps every probe
with the Activity that produced it; the newest by `probed_at` is the one in force. When a
session next binds the model, the runtime appends that profile and its Activity to the session
as ordinary ledger entries, so the chain still shows what each request was planned against.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from vak_desktop.context.codec import from_json_value, to_json_value
from vak_desktop.context.payloads import Activity, CapacityProfile
from vak_desktop.ledger.canonical import canonical_text, utc_now
from vak_desktop.ledger.sqlite_import import sqlite_utils


@dataclass(frozen=True)
class StoredProfile:
    """A recorded probe result: the profile and the Activity that measured it."""

    profile: CapacityProfile
    activity: Activity


class ProfileStore:
    """The capacity_profiles table of one ledger database (same thread as the ledger)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    def record(self, profile: CapacityProfile, activity: Activity) -> None:
        probed_at = str(profile.provenance.get("probed_at") or "")
        self._db.execute(
            "INSERT INTO capacity_profiles (provider, model, quantisation, probed_at, profile,"
            " activity, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                profile.provider,
                profile.model,
                profile.quantisation,
                probed_at,
                canonical_text(to_json_value(profile)),
                canonical_text(to_json_value(activity)),
                utc_now(),
            ],
        )

    def latest(
        self, provider: str, model: str, quantisation: str | None = None
    ) -> StoredProfile | None:
        """The newest profile for the key; `quantisation=None` matches any quantisation."""
        sql = "SELECT profile, activity FROM capacity_profiles WHERE provider = ? AND model = ?"
        params = [provider, model]
        if quantisation is not None:
            sql += " AND quantisation = ?"
            params.append(quantisation)
        row = self._db.execute(
            sql + " ORDER BY probed_at DESC, seq DESC LIMIT 1", params
        ).fetchone()
        if row is None:
            return None
        return StoredProfile(
            from_json_value(CapacityProfile, json.loads(row[0])),
            from_json_value(Activity, json.loads(row[1])),
        )

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM capacity_profiles").fetchone()[0])
