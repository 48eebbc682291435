"""packaging/smoke.py finds its own engine by PID (issue 23 item 6): a process whose command line
merely contains "llama" (`ollama serve`) is not taken for a Vak engine (the old name match made
the smoke test wait 600 s for it), and an engine is known as a descendant of the app by PID."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("smoke", ROOT / "packaging" / "smoke.py")
assert spec is not None and spec.loader is not None
smoke = importlib.util.module_from_spec(spec)
spec.loader.exec_module(smoke)

pytestmark = pytest.mark.skipif(not smoke.processes(), reason="no process table on this OS")
SLEEP = "import time; time.sleep(60)"
# an app that starts an engine child, the way vak-desktop starts `vak --vak-embedded-engine`
APP = (
    "import subprocess, sys, time\n"
    f"subprocess.Popen([sys.executable, '-c', {SLEEP!r}, '{smoke.ENGINE_CHILD_FLAG}', 'cfg'])\n"
    "print('started', flush=True)\ntime.sleep(60)\n"
)


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    children: list[subprocess.Popen[bytes]] = []
    yield children
    for child in children:
        child.kill()
        child.wait(timeout=10)


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_ollama_serve_is_not_a_vak_engine(started: list[subprocess.Popen[bytes]]) -> None:
    ollama = subprocess.Popen([sys.executable, "-c", SLEEP, "ollama", "serve", "llama.cpp"])
    started.append(ollama)
    _until(lambda: ollama.pid in smoke.processes(), "the process to show")
    assert ollama.pid not in smoke.engines(smoke.processes())
    began = time.monotonic()
    smoke.wait_for_other_engines(0)  # returns at once: no engine is running
    assert time.monotonic() - began < 1


def test_the_apps_own_engine_is_found_by_pid(started: list[subprocess.Popen[bytes]]) -> None:
    app = subprocess.Popen([sys.executable, "-c", APP], stdout=subprocess.PIPE)
    started.append(app)
    assert app.stdout is not None and app.stdout.readline() == b"started\n"

    def own() -> set[int]:
        table = smoke.processes()
        return smoke.engines(table) & smoke.descendants(app.pid, table)

    _until(own, "the engine child to show")
    [engine] = own()
    assert smoke.processes()[engine][0] == app.pid  # its parent is the app
    with pytest.raises(smoke.SmokeFailure, match=f"another Vak engine is running: pid \\[{engine}"):
        smoke.wait_for_other_engines(0)
    os.kill(engine, getattr(signal, "SIGKILL", signal.SIGTERM))
    _until(lambda: not own(), "the engine to end")
    app.stdout.close()
