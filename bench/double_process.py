"""A loopback double in its own process, for benches that time the client side alone.

The bench's `script` builds the double from a JSON config read on stdin, prints
`listening URL` once it serves, and waits; its time is then never the bench's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


class DoubleProcess:
    """`script` run by this interpreter from the repository root (the doubles live in
    tests/), given `config` on stdin; `url` is where it listens. `close()` ends it."""

    def __init__(self, script: str, config: dict[str, Any]) -> None:
        root = Path(__file__).resolve().parents[1]
        self.process = subprocess.Popen(
            [sys.executable, "-c", script],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(config).encode())
        self.process.stdin.close()
        banner = self.process.stdout.readline().decode().split()
        assert banner[:1] == ["listening"], banner
        self.url = banner[1]

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
