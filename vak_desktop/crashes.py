"""Crash reports: every uncaught exception in the log file, a hard crash's traceback beside it,
and, at the next start, word that the last run ended unexpectedly.

Why it exists: a desktop app started from a menu has no terminal, so an exception in a Qt slot
or a thread used to reach stderr only and a segfault left nothing at all. `CrashGuard.install`
routes `sys.excepthook` (which PySide6 also calls for an exception in a slot),
`threading.excepthook` and the asyncio loop's exception handler (a task that failed unseen) to
the `vak_desktop.crash` logger with the traceback, so they reach the log file (`logfile.py`);
Qt's own messages are routed by `ui/shell/qt_messages.py`. `faulthandler` writes a hard crash's
Python traceback to `vak-desktop-crash.log` in the log directory.

A start leaves a mark (`running-<pid>` in the log directory) that a clean exit removes. The next
start finds a mark whose process is gone, or a crash file with a dump in it: the previous run
ended unexpectedly (`PreviousCrash`). The dump is copied into the log file (so the one file a
user attaches holds it) and the crash file emptied, so a crash is reported once.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from vak_desktop.logfile import log_dir, log_path

CRASH_FILENAME = "vak-desktop-crash.log"
MARK_PREFIX = "running-"
log = logging.getLogger("vak_desktop.crash")


@dataclass(frozen=True)
class PreviousCrash:
    """The last run ended unexpectedly: how we know, and the log file to open."""

    log_file: Path
    hard_crash: bool  # faulthandler wrote a dump (a segfault, an abort)
    detail: str = ""  # the dump's first line, when there was one

    @property
    def message(self) -> str:
        return "Vak closed unexpectedly last time — open the log to see why."


def _alive(pid: int) -> bool:
    """Whether a process `pid` runs now (a second window of the app is not a crash)."""
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill would end the process there
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # type: ignore[attr-defined]
        if not handle:
            return False
        ctypes.windll.kernel32.CloseHandle(handle)  # type: ignore[attr-defined]
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CrashGuard:
    """The hooks of one run; `close()` at a clean exit removes its mark and the hooks."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.mark = directory / f"{MARK_PREFIX}{os.getpid()}"
        self.crash_file = directory / CRASH_FILENAME
        self.previous: PreviousCrash | None = None
        self._dump: TextIO | None = None
        self._hooks: tuple[Any, Any] = (sys.excepthook, threading.excepthook)

    @classmethod
    def install(cls, directory: Path | None = None) -> CrashGuard:
        """Look for a previous crash, then hook this run. Never raises: a log directory that
        cannot be written leaves the hooks logging to whatever handlers there are."""
        guard = cls(directory or log_dir())
        try:
            guard.directory.mkdir(parents=True, exist_ok=True)
            guard.previous = guard._previous_crash()
            guard.mark.write_text(f"{os.getpid()}\n", encoding="utf-8")
            guard._dump = guard.crash_file.open("a", encoding="utf-8")
            faulthandler.enable(guard._dump, all_threads=True)
        except OSError as exc:
            log.warning("no crash file in %s: %s", guard.directory, exc)
        sys.excepthook = guard._uncaught
        threading.excepthook = guard._thread_uncaught
        return guard

    def _previous_crash(self) -> PreviousCrash | None:
        gone = []
        for mark in self.directory.glob(f"{MARK_PREFIX}*"):
            pid = mark.name.removeprefix(MARK_PREFIX)
            if pid.isdigit() and not _alive(int(pid)):
                gone.append(mark)
        dump = ""
        with contextlib.suppress(OSError):  # no crash file yet
            dump = self.crash_file.read_text(encoding="utf-8", errors="replace").strip()
        for mark in gone:
            mark.unlink(missing_ok=True)
        if dump:  # into the log file, where a user looks; then reported once only
            log.error("the previous run crashed; its traceback:\n%s", dump)
            self.crash_file.write_text("", encoding="utf-8")
        if not gone and not dump:
            return None
        first = next((line for line in dump.splitlines() if line.strip()), "")
        return PreviousCrash(log_path(), hard_crash=bool(dump), detail=first)

    # -- the hooks ---------------------------------------------------------------------------

    def _uncaught(
        self, kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            self._hooks[0](kind, value, tb)
            return
        log.critical("uncaught %s: %s", kind.__name__, value, exc_info=(kind, value, tb))

    def _thread_uncaught(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        log.error(
            "uncaught %s in thread %s: %s",
            args.exc_type.__name__,
            name,
            args.exc_value,
            exc_info=(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback),
        )

    def close(self) -> None:
        """A clean exit: no mark left, hooks and faulthandler as they were."""
        sys.excepthook, threading.excepthook = self._hooks
        if self._dump is not None:
            faulthandler.disable()
            self._dump.close()
            self._dump = None
        self.mark.unlink(missing_ok=True)


def log_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The asyncio loop's exception handler: a failed callback or an unseen task exception
    goes to the log file with its traceback (asyncio's default gives none for some)."""
    error = context.get("exception")
    what = context.get("message", "an asyncio callback failed")
    task = context.get("task") or context.get("future")
    where = f" ({task.get_name()})" if isinstance(task, asyncio.Task) else ""
    if isinstance(error, BaseException):
        log.error(
            "%s%s: %r", what, where, error, exc_info=(type(error), error, error.__traceback__)
        )
    else:
        log.error("%s%s", what, where)


def install_loop_handler(loop: asyncio.AbstractEventLoop | None = None) -> Callable[..., Any]:
    """Route `loop`'s (the running loop's) exceptions to the log; returns the handler."""
    (loop or asyncio.get_running_loop()).set_exception_handler(log_loop_exception)
    return log_loop_exception
