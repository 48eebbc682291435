"""The REPL keeps the event loop running while it waits for the next line (issue #22 item 6):
stdin is read in a worker thread, so the background capacity probe runs between turns, as it
does in the window. Against the loopback Ollama double, `vak chat` in a real subprocess whose
stdin stays open (the user has not typed the next line yet)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.cli.test_cli import ROOT
from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.probe_doubles import is_probe_body

MODEL = "qwen2.5-coder:0.5b"


def _wait_for(predicate: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _repl(double: OllamaDouble, data: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "vak_desktop.cli", "chat", MODEL, *extra]
    command += ["--host", double.url, "--data-dir", str(data)]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_repl_probes_in_the_background_while_it_waits_for_the_next_line(
    tmp_path: Path,
) -> None:
    with OllamaDouble(instruction_horizon=3_000, search_requests=True) as double:
        double.add_model(MODEL, trained_window=8_192)
        process = _repl(double, tmp_path)
        try:
            assert process.stdin is not None
            process.stdin.write("hello\n")
            process.stdin.flush()
            # stdin stays open: the REPL is waiting for the user's next line
            # two probe requests: the first sample has finished, and the REPL says "measuring"
            # on a sample's progress (one request alone raced the EOF below under load)
            probed = _wait_for(
                lambda: sum(is_probe_body(b) for b in double.chat_bodies()) >= 2, within=60
            )
            assert probed, "no probe request while the REPL waited (stdin read on the loop?)"
            out, err = process.communicate("", timeout=60)  # EOF: the REPL ends
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert process.returncode == 0, err
    assert out.startswith("You said:") and "hello" in out  # the turn answered
    assert f"· measuring {MODEL} in the background…" in err


def test_no_probe_keeps_the_repl_from_probing(tmp_path: Path) -> None:
    with OllamaDouble(instruction_horizon=3_000, search_requests=True) as double:
        double.add_model(MODEL, trained_window=8_192)
        command = [sys.executable, "-m", "vak_desktop.cli", "chat", MODEL, "--no-probe"]
        command += ["--host", double.url, "--data-dir", str(tmp_path)]
        done = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            input="hello\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert not any(is_probe_body(b) for b in double.chat_bodies())
