"""Whether the machine is idle enough to retry a probe's undecided rungs (issue #22).

Why it exists: a probe that ran out of time on a busy machine measured the machine, not the
model; it is retried only when the load has gone, and the load must be measured, not guessed.

    POSIX     the 1-minute load average (`os.getloadavg`) per CPU core
    Windows   the share of time the cores were busy over a short interval, from the kernel's
              own idle / kernel / user times (`GetSystemTimes`; Windows has no load average)
    neither   unknown (None): the caller decides

`machine_load` returns runnable work per core (1.0: every core busy); `is_idle` compares it
with `IDLE_LOAD`. The model server's own work counts too — right after a turn the load is the
turn's — so a retry waits for it to settle (`ProbeScheduler` polls every `IDLE_POLL_S`).
"""

from __future__ import annotations

import asyncio
import os
import sys

IDLE_LOAD = 0.5  # below half the cores busy: idle enough to measure a model, not the machine
IDLE_POLL_S = 15.0  # how often a waiting retry looks again
WINDOWS_SAMPLE_S = 0.5  # the interval Windows' busy share is measured over


def _cores() -> int:
    return max(1, os.cpu_count() or 1)


def _windows_times() -> tuple[int, int] | None:
    """(idle, total) 100-ns ticks summed over every core, or None off Windows."""
    if sys.platform != "win32":
        return None
    import ctypes
    from ctypes import wintypes

    idle, kernel, user = wintypes.FILETIME(), wintypes.FILETIME(), wintypes.FILETIME()
    windll = getattr(ctypes, "windll", None)
    if windll is None or not windll.kernel32.GetSystemTimes(
        ctypes.byref(idle), ctypes.byref(kernel), ctypes.byref(user)
    ):
        return None

    def ticks(value: wintypes.FILETIME) -> int:
        return (int(value.dwHighDateTime) << 32) | int(value.dwLowDateTime)

    return ticks(idle), ticks(kernel) + ticks(user)  # kernel time includes idle time


async def machine_load() -> float | None:
    """Busy work per core now (≈ 1.0: every core busy), or None where it cannot be read."""
    getloadavg = getattr(os, "getloadavg", None)
    if getloadavg is not None:
        try:
            return float(getloadavg()[0]) / _cores()
        except OSError:
            pass
    first = _windows_times()
    if first is None:
        return None
    await asyncio.sleep(WINDOWS_SAMPLE_S)
    second = _windows_times()
    if second is None or second[1] <= first[1]:
        return None
    idle, total = second[0] - first[0], second[1] - first[1]
    return max(0.0, 1.0 - idle / total)


async def is_idle(threshold: float = IDLE_LOAD) -> bool | None:
    """Whether the machine's load is under `threshold` per core (None: it cannot be read)."""
    load = await machine_load()
    return None if load is None else load < threshold
