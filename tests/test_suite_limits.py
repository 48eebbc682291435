"""The suite bounds itself: every test runs under pytest-timeout, so a hang fails one test
instead of holding CI for its whole budget (issue 13 item 14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_runs_under_a_time_limit(request: pytest.FixtureRequest) -> None:
    config = request.config
    assert config.pluginmanager.hasplugin("timeout")
    assert 0 < float(config.getini("timeout")) <= 300
    assert config.getini("timeout_method") == "thread"  # SIGALRM cannot stop a Qt event loop


@pytest.mark.slow
def test_a_hung_test_fails_instead_of_hanging(tmp_path: Path) -> None:
    hung = tmp_path / "test_hung.py"
    hung.write_text(
        "import threading\n\ndef test_waits_for_ever():\n    threading.Event().wait()\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            str(ROOT / "pyproject.toml"),
            "-o",
            "timeout=2",
            str(hung),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "Timeout" in run.stdout + run.stderr
