"""Start to a shown window: the PyInstaller bundle beside the venv, measured in one run.

    python bench/bundle_start.py [--bundle dist/vak-desktop] [--runs 5]

Each run starts a fresh process (`dist/vak-desktop/vak-desktop`, then `.venv/bin/vak-desktop`,
alternating so both see the same machine load) on its own empty data directory, offscreen,
and times from the spawn to the "window shown" record in its log file (written right after
`window.show()` in `vak_desktop.app.run_window`), then closes it with SIGTERM. The first run of
each is printed on its own (the closest to a cold start this can get without dropping the page
cache, which would slow every other process on the machine) beside the median of the rest.
Issue 12's goal: the bundle's start ≤ the venv's.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOWN = "vak_desktop.app: window shown"
TIMEOUT_S = 120.0


def start_to_window(executable: Path) -> float:
    """Seconds from spawn to the window being shown, for one fresh process."""
    with tempfile.TemporaryDirectory(prefix="vak-bench-start-") as temp:
        env = {
            **os.environ,
            "QT_QPA_PLATFORM": "offscreen",
            "VAK_DATA_DIR": str(Path(temp) / "data"),
            "VAK_LOG_DIR": str(Path(temp) / "log"),
        }
        log = Path(temp) / "log" / "vak-desktop.log"
        started = time.perf_counter()
        process = subprocess.Popen(
            [str(executable), "--host", "http://127.0.0.1:9"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while not (log.is_file() and SHOWN in log.read_text(encoding="utf-8")):
                if process.poll() is not None:
                    raise RuntimeError(f"{executable} exited {process.returncode} before a window")
                if time.perf_counter() - started > TIMEOUT_S:
                    raise RuntimeError(f"{executable}: no window within {TIMEOUT_S:.0f} s")
                time.sleep(0.005)
            took = time.perf_counter() - started
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            return took
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "vak-desktop")
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subjects = {
        "bundle": args.bundle / "vak-desktop",
        "venv (baseline)": args.venv / "bin" / "vak-desktop",
    }
    for name, path in subjects.items():
        if not path.is_file():
            print(f"no {name} at {path} (run `make bundle` first)", file=sys.stderr)
            return 1
    times: dict[str, list[float]] = {name: [] for name in subjects}
    for _ in range(args.runs):
        for name, path in subjects.items():
            times[name].append(start_to_window(path))
    files = [f for f in args.bundle.rglob("*") if f.is_file() and not f.is_symlink()]
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    print(f"start to a shown window, {args.runs} runs each (offscreen, empty ledger):")
    for name, runs in times.items():
        rest = runs[1:] or runs
        print(
            f"  {name:16} first {runs[0]:.2f} s   median of the rest {statistics.median(rest):.2f} s"
            f"   (min {min(runs):.2f}, max {max(runs):.2f})"
        )
    print(f"  bundle folder: {size_mb:.0f} MB ({args.bundle})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
