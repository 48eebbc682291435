"""The `vak-desktop` entry point as a process: --version on both entry points, --self-test, and
SIGINT/SIGTERM closing a running window cleanly (exit 0 within 2 s, the ledger verifies, no
child process left)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from vak_desktop.about import version
from vak_desktop.context.payloads import AssistantStep, Directive
from vak_desktop.ledger import LEDGER_FILENAME, Ledger

STARTED = f"vak-desktop {version()} starting"
CLOSE_WITHIN_S = 2.0


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "VAK_DATA_DIR": str(tmp_path / "data"),
        "VAK_LOG_DIR": str(tmp_path / "log"),
    }


def _children(pid: int) -> list[int]:
    """Pids whose parent is `pid` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(proc.name))
    return found


def _self_test(tmp_path: Path, *command: str, code: int) -> tuple[dict[str, Any], str]:
    """Run a self-test command; check its exit code; its JSON report and its stderr."""
    done = subprocess.run(
        [sys.executable, *command], capture_output=True, text=True, timeout=120, env=_env(tmp_path)
    )
    assert done.returncode == code, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_version_on_both_entry_points_and_python_m() -> None:
    for command in (
        [sys.executable, "-m", "vak_desktop", "--version"],
        [sys.executable, "-m", "vak_desktop.cli", "--version"],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[-1] == version() != "0+unknown"


@pytest.mark.slow
def test_self_test_checks_every_resource_the_engine_and_the_window(tmp_path: Path) -> None:
    report, _ = _self_test(tmp_path, "-m", "vak_desktop", "--self-test", code=0)
    assert report["ok"] and report["missing"] == []
    assert set(report["checked"]) == {
        "card_library",
        "chat_templates",
        "lexicons",
        "icons",
        "desktop_entry",
        "model_catalogue",
        "engine",
        "log_file",
        "main_window",
    }
    assert Path(report["checked"]["log_file"]).parent == tmp_path / "log"
    assert not (tmp_path / "data").exists()  # the window ran on a temporary data directory


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_closes_the_window_cleanly(tmp_path: Path, signum: int) -> None:
    data = tmp_path / "data"
    data.mkdir()
    ledger = Ledger.open(data / LEDGER_FILENAME)
    session = ledger.create_session("before the signal").id
    ledger.append(session, Directive(text="hello"))
    ledger.append(session, AssistantStep(text="hi"))
    ledger.close()
    log = tmp_path / "log" / "vak-desktop.log"
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w") as stderr_file:
        window = subprocess.Popen(
            [sys.executable, "-m", "vak_desktop", "--host", "http://127.0.0.1:9"],
            env=_env(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=stderr_file,
        )
    try:
        deadline = time.monotonic() + 60
        while not (log.is_file() and STARTED in log.read_text()):
            assert window.poll() is None, stderr_path.read_text()
            assert time.monotonic() < deadline, "the window did not start within 60 s"
            time.sleep(0.1)
        time.sleep(1.0)  # the window is up and its first model refresh has run
        sent = time.monotonic()
        window.send_signal(signum)
        code = window.wait(timeout=10)
        took = time.monotonic() - sent
    finally:
        if window.poll() is None:
            window.kill()
            window.wait(timeout=10)
    assert code == 0, stderr_path.read_text()
    assert took < CLOSE_WITHIN_S, f"closing took {took:.2f} s"
    assert f"signal {signum}: closing the window" in log.read_text()
    assert _children(window.pid) == []
    cli = [sys.executable, "-m", "vak_desktop.cli", "--data-dir", str(data), "--json"]
    verify = subprocess.run(
        [*cli, "ledger", "verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert json.loads(verify.stdout) == {
        "entries": 2,
        "sessions": 1,
        "ok": True,
        "first_broken": None,
        "removed": [],
        "anchor_lost": False,
        "events_changed": None,
        "notes": [],
        "deletions": 0,
        "markers_left": 0,
    }


BROKEN_ICONS = """
import sys
from vak_desktop import app
from vak_desktop.ui.shell import self_test

def missing():
    raise FileNotFoundError("icons/vak-desktop-256.png is not a 256px PNG")

self_test.icon_pixmaps = missing
sys.exit(app.run_self_test(app.QApplication(sys.argv[:1]), app.run_window, None))
"""


@pytest.mark.slow
def test_self_test_exits_1_naming_each_thing_that_is_missing(tmp_path: Path) -> None:
    report, stderr = _self_test(tmp_path, "-c", BROKEN_ICONS, code=1)
    assert not report["ok"]
    assert report["missing"] == [
        "icons: icons/vak-desktop-256.png is not a 256px PNG",
        "log_file: cannot write the log file",
    ]
    assert "main_window" in report["checked"]  # the other checks still ran
    assert "missing icons: icons/vak-desktop-256.png" in stderr
