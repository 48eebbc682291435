"""Crash reports, each in a real child process with its own log directory: an exception in a Qt
slot, in a thread and in an asyncio task nobody awaited reach the log file with the traceback;
Qt's own warnings reach it; a hard crash leaves faulthandler's traceback, which the next start
reports once (copied into the log file); an exit that skipped the clean shutdown is reported,
a clean one and a second window still running are not. And the window's notice: "Vak closed
unexpectedly last time — open the log", whose button opens the log file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from vak_desktop.crashes import CRASH_FILENAME, CrashGuard, PreviousCrash
from vak_desktop.logfile import LOG_FILENAME
from vak_desktop.ui.shell.crash_notice import crash_notice

START = """
import sys
from vak_desktop.logfile import start_logging
from vak_desktop.crashes import CrashGuard
start_logging()
guard = CrashGuard.install()
print("previous:", guard.previous, flush=True)
"""


def _child(tmp_path: Path, body: str, code: int = 0) -> str:
    """Run START + `body` in a child whose log directory is `tmp_path / "log"`; its stdout."""
    env = {**os.environ, "VAK_LOG_DIR": str(tmp_path / "log"), "QT_QPA_PLATFORM": "offscreen"}
    script = START + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == code, done.stdout + done.stderr
    return done.stdout


def _log(tmp_path: Path) -> str:
    return (tmp_path / "log" / LOG_FILENAME).read_text(encoding="utf-8")


def test_an_exception_in_a_qt_slot_reaches_the_log_file_with_its_traceback(
    tmp_path: Path,
) -> None:
    _child(
        tmp_path,
        """
        from PySide6.QtCore import QCoreApplication, QTimer
        app = QCoreApplication([])
        def clicked():
            raise ValueError("boom in a slot")
        QTimer.singleShot(0, clicked)
        QTimer.singleShot(100, app.quit)
        app.exec()
        guard.close()
        """,
    )
    log = _log(tmp_path)
    assert "uncaught ValueError: boom in a slot" in log
    assert "Traceback (most recent call last)" in log and ", in clicked" in log


def test_an_exception_in_a_thread_and_in_an_unawaited_task_reach_the_log(tmp_path: Path) -> None:
    _child(
        tmp_path,
        """
        import asyncio, gc, threading
        from vak_desktop.crashes import install_loop_handler
        def work():
            raise KeyError("lost in a thread")
        t = threading.Thread(target=work, name="worker"); t.start(); t.join()
        async def main():
            install_loop_handler()
            async def fails():
                raise RuntimeError("a task nobody awaited")
            task = asyncio.get_running_loop().create_task(fails())
            await asyncio.sleep(0.05)
            del task
            gc.collect()
            await asyncio.sleep(0.05)
        asyncio.run(main())
        guard.close()
        """,
    )
    log = _log(tmp_path)
    assert "uncaught KeyError in thread worker: 'lost in a thread'" in log
    assert "Task exception was never retrieved" in log
    assert "RuntimeError: a task nobody awaited" in log and "Traceback" in log


def test_qt_messages_reach_the_log_file(tmp_path: Path) -> None:
    _child(
        tmp_path,
        """
        from PySide6.QtCore import qWarning
        from vak_desktop.ui.shell.qt_messages import install_qt_message_handler
        install_qt_message_handler()
        qWarning("a warning from Qt")
        guard.close()
        """,
    )
    assert "WARNING qt: [default] a warning from Qt" in _log(tmp_path)


def test_a_hard_crash_leaves_its_traceback_and_the_next_start_reports_it_once(
    tmp_path: Path,
) -> None:
    _child(tmp_path, "import faulthandler; faulthandler._sigsegv()\n", code=-11)
    dump = (tmp_path / "log" / CRASH_FILENAME).read_text()
    assert "Fatal Python error: Segmentation fault" in dump and "File " in dump
    out = _child(tmp_path, "guard.close()\n")
    assert "PreviousCrash(" in out and "hard_crash=True" in out
    assert "the previous run crashed; its traceback" in _log(tmp_path)
    assert "Segmentation fault" in _log(tmp_path)
    assert "previous: None" in _child(tmp_path, "guard.close()\n")  # reported once


def test_an_exit_without_the_clean_shutdown_is_reported_and_a_clean_one_is_not(
    tmp_path: Path,
) -> None:
    assert "previous: None" in _child(tmp_path, "guard.close()\n")
    assert "previous: None" in _child(tmp_path, "import os; os._exit(3)\n", code=3)
    out = _child(tmp_path, "guard.close()\n")
    assert "PreviousCrash(" in out and "hard_crash=False" in out
    assert "previous: None" in _child(tmp_path, "guard.close()\n")


def test_a_second_window_still_running_is_not_a_crash(tmp_path: Path) -> None:
    directory = tmp_path / "log"
    directory.mkdir()
    (directory / f"running-{os.getppid()}").write_text("")  # a live process's mark
    guard = CrashGuard(directory)
    assert guard._previous_crash() is None
    assert (directory / f"running-{os.getppid()}").exists()


@pytest.mark.usefixtures("qapp")
def test_the_notice_says_vak_closed_unexpectedly_and_opens_the_log(
    qtbot: Any, tmp_path: Path
) -> None:
    opened: list[Path] = []
    log_file = tmp_path / "vak-desktop.log"
    previous = PreviousCrash(log_file, hard_crash=True, detail="Fatal Python error: Aborted")
    box = crash_notice(previous, None, open_path=opened.append)
    qtbot.addWidget(box)
    assert box.isVisible() and not box.isModal()
    assert box.text() == "Vak closed unexpectedly last time — open the log to see why."
    assert str(log_file) in box.informativeText() and "Aborted" in box.informativeText()
    shots = Path(__file__).resolve().parents[1] / "screenshots"
    shots.mkdir(exist_ok=True)
    assert box.grab().save(str(shots / "crash_notice.png"))
    (button,) = [b for b in box.buttons() if b.text() == "Open the log"]
    button.click()
    assert opened == [log_file]


def _start_window(tmp_path: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "VAK_DATA_DIR": str(tmp_path / "data"),
        "VAK_LOG_DIR": str(tmp_path / "log"),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "vak_desktop", "--host", "http://127.0.0.1:9"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(tmp_path: Path, words: str, count: int) -> None:
    deadline = time.monotonic() + 60
    log = tmp_path / "log" / LOG_FILENAME
    while not (log.is_file() and log.read_text().count(words) >= count):
        assert time.monotonic() < deadline, f"no {words!r} in the log within 60 s"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_app_after_being_killed_says_so_at_its_next_start_and_only_then(
    tmp_path: Path,
) -> None:
    said = "said: Vak closed unexpectedly last time"
    for run, end in enumerate((signal.SIGKILL, signal.SIGTERM, signal.SIGTERM), start=1):
        window = _start_window(tmp_path)
        try:
            _wait_for(tmp_path, "window shown", run)
            window.send_signal(end)
            window.wait(timeout=20)
        finally:
            if window.poll() is None:
                window.kill()
                window.wait(timeout=10)
    log = (tmp_path / "log" / LOG_FILENAME).read_text()
    assert (
        log.count(said) == 1
    )  # the start after the kill said it; the one after a clean exit did not
    assert log.index(said) > log.index("window shown")
