"""The capacity_profiles table: insert-only, the newest probe per key wins."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from vak_desktop.context.capacity.profile import metadata_profile
from vak_desktop.context.payloads import Activity, CapacityProfile
from vak_desktop.ledger import Ledger


def _probed(at: str, quantisation: str = "Q4_K_M", tokens: int = 9_000) -> CapacityProfile:
    base = metadata_profile("ollama", "m", 32_768, quantisation=quantisation)
    horizon = dataclasses.replace(base.instruction_horizon, tokens=tokens)
    provenance = {"source": "probe", "probed_at": at}
    return dataclasses.replace(base, instruction_horizon=horizon, provenance=provenance)


def test_the_newest_probe_wins_and_rows_are_never_rewritten(ledger: Ledger) -> None:
    store = ledger.profiles()
    assert store.latest("ollama", "m") is None
    newer = _probed("2026-11-30T10:00:00.000000Z", tokens=8_000)
    store.record(newer, Activity(type="capacity_probe", message="second"))
    store.record(_probed("2026-11-29T10:00:00.000000Z"), Activity(type="capacity_probe"))
    found = store.latest("ollama", "m", "Q4_K_M")
    assert found is not None and found.profile == newer
    assert found.activity.message == "second"
    assert store.latest("ollama", "m", "Q8_0") is None
    assert store.latest("ollama", "m") == found  # any quantisation
    for statement in ("UPDATE capacity_profiles SET model = 'x'", "DELETE FROM capacity_profiles"):
        with pytest.raises(sqlite3.IntegrityError, match="insert-only"):
            ledger._db.execute(statement)
    assert store.count() == 2
