"""CLI start-up with no MCP server configured: `vak --help` and `vak chat` up to its first
request, beside `python -c "import httpx"` measured in the same run (the floor every start pays).

    python bench/cli_start.py [--runs 7]

Each figure is the median wall time of fresh interpreter processes. `vak chat` runs against an
address where nothing listens (127.0.0.1:9, refused at once) with an empty data directory, so
it pays its whole start — imports, settings, ledger, provider — and stops at the first request.
Also printed: whether starting imported the `mcp` SDK (`-X importtime` would show it costs
~0.7 s; it should be imported only when a server is first used).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str], runs: int) -> float:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, timeout=120, check=False)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def imports_mcp(argv: list[str], env: dict[str, str]) -> bool:
    probe = (
        "import runpy, sys, atexit\n"
        "atexit.register(lambda: print('MCP_LOADED', 'mcp' in sys.modules, file=sys.stderr))\n"
        f"sys.argv = {argv!r}\n"
        "runpy.run_module('vak_desktop.cli', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return "MCP_LOADED True" in done.stderr


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "VAK_DATA_DIR": data, "OLLAMA_HOST": "http://127.0.0.1:9"}
        vak = [sys.executable, "-m", "vak_desktop.cli"]
        baseline = timed([sys.executable, "-c", "import httpx"], env, args.runs)
        rows = {
            "vak --help": [*vak, "--help"],
            "vak chat (to its first request)": [*vak, "chat", "m", "hi"],
        }
        print(f"python -c 'import httpx'   {baseline * 1000:7.0f} ms  (baseline, same run)")
        for name, argv in rows.items():
            wall = timed(argv, env, args.runs)
            loaded = imports_mcp(argv[2:], env)
            print(
                f"{name:<32} {wall * 1000:7.0f} ms  +{(wall - baseline) * 1000:5.0f} ms over "
                f"the baseline; mcp SDK imported: {'yes' if loaded else 'no'}"
            )


if __name__ == "__main__":
    main()
