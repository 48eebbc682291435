"""Bad text and bad files are one line and exit 2, and write nothing (issue 24 item 4, F4, F5):
bytes that are not UTF-8 on argv or stdin, `settings.toml` as a folder, a FIFO, a device or an
unreadable file, and a Ctrl-C at any moment of start-up (exit 130, no traceback). Each runs the
real `vak` in a subprocess, against the loopback Ollama double where a model is needed."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.doubles.fixtures import TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.ledger import LEDGER_FILENAME, Ledger

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUTF8": "1"}


def _vak(data: Path, *argv: str | bytes, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "vak_desktop.cli_start", *argv, "--data-dir", str(data)],
        cwd=ROOT,
        env=ENV,
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode("utf-8", "replace")
    )


def _sessions(data: Path) -> int:
    path = data / "ledger.sqlite3"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()
    conn.close()
    return int(count)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("vak: ")
    return line


def test_a_message_that_is_not_utf8_on_argv_is_one_line_and_makes_no_session(
    double: OllamaDouble, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    done = _vak(data, "chat", TOOL_MODEL, b"bad \xff\xfe bytes", "--host", double.url)
    line = _one_line(done)
    assert "not valid UTF-8" in line and "byte 0xff at character 5" in line
    assert _sessions(data) == 0


def test_a_line_that_is_not_utf8_on_stdin_is_one_line_and_makes_no_session(
    double: OllamaDouble, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    done = _vak(data, "chat", TOOL_MODEL, "--host", double.url, stdin=b"bad \xff\xfe bytes\n")
    line = _one_line(done)
    assert "stdin" in line and "byte 0xff at character 5" in line
    assert _sessions(data) == 0


def _folder(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")  # reading it never ends


def _unreadable(path: Path) -> None:
    path.write_text("[general]\n")
    path.chmod(0)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("make", "named"),
    [
        (_folder, "is a folder"),
        (_fifo, "named pipe (FIFO)"),
        (_device, "character device"),
        (_unreadable, "permission denied"),
    ],
    ids=["folder", "fifo", "device", "unreadable"],
)
def test_a_settings_file_that_is_not_a_readable_file_is_one_line(
    double: OllamaDouble, tmp_path: Path, make: object, named: str
) -> None:
    if named == "named pipe (FIFO)" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this OS")
    if named == "permission denied" and (not hasattr(os, "geteuid") or os.geteuid() == 0):
        pytest.skip("root reads a file whatever its permissions (and chmod 0 is not that here)")
    data = tmp_path / "data"
    data.mkdir()
    make(data / "settings.toml")  # type: ignore[operator]
    done = _vak(data, "chat", TOOL_MODEL, "hello", "--host", double.url)
    line = _one_line(done)
    assert "settings.toml" in line and named in line
    assert _sessions(data) == 0


@pytest.mark.timeout(300)
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is a console event there, not SIGINT")
def test_ctrl_c_at_any_moment_of_start_up_is_one_line_and_exit_130(tmp_path: Path) -> None:
    data = tmp_path / "data"
    Ledger.open(data / LEDGER_FILENAME).close()  # verify has a ledger: a finished run is exit 0
    codes = []
    # The clock starts when the child has imported its first module of Vak's own
    # (`-X importtime` reports each import as it ends), which happens inside `cli_start.main`,
    # not at its spawn: before that the signal lands in Python's own start (its `site` import,
    # runpy finding the module), ahead of any code that could catch it, and on a loaded machine
    # that start alone outlasted a fixed 0.4 s. Each child compiles every module afresh (an
    # empty pycache), so that its start-up lasts seconds however warm the disk cache is.
    start = [sys.executable, "-X", "importtime", "-m", "vak_desktop.cli_start"]
    for delay in (0.0, 0.2, 0.5, 0.9, 1.4, 2.0):
        pycache = tmp_path / f"pycache-{delay}"
        child = subprocess.Popen(
            [*start, "ledger", "verify", "--data-dir", str(data)],
            cwd=ROOT,
            env={**ENV, "PYTHONPYCACHEPREFIX": str(pycache)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert child.stderr is not None
        seen = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # a line per import, until one of Vak's modules
            line = child.stderr.readline()
            seen += line
            if not line or re.search(rb"\|\s+vak_desktop\.\w", line):
                break
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _out, err = child.communicate(timeout=30)
        err = (seen + err).decode()
        assert "Traceback" not in err, (delay, err[-2000:])
        codes.append(child.returncode)
        # 130: stopped; 0: it had finished; -2: it was ending (the interpreter's own exit
        # restores the default handler)
        assert child.returncode in (130, 0, -signal.SIGINT), (delay, err[-2000:])
    assert 130 in codes  # at least one landed inside start-up
