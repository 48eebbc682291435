"""The machine's idleness is measured, not guessed (`runtime/capacity/idle.py`): on this POSIX
machine from the load average per core, compared against the threshold the caller gives."""

from __future__ import annotations

import os

import pytest

from vak_desktop.runtime.capacity.idle import is_idle, machine_load


@pytest.mark.skipif(not hasattr(os, "getloadavg"), reason="POSIX load average")
async def test_the_load_is_the_load_average_per_core() -> None:
    load = await machine_load()
    expected = os.getloadavg()[0] / (os.cpu_count() or 1)
    assert load is not None and load >= 0.0
    assert abs(load - expected) < 1.0  # the same 1-minute figure, read a moment apart
    assert await is_idle(threshold=float("inf")) is True
    assert await is_idle(threshold=0.0) is False  # no load is below zero
