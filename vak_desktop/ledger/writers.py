"""One writer per session: an OS-level lock held while a turn runs in it.

Two turns at once in one session scramble it (each marks the other's turn interrupted, answers
attach to the wrong directive), whether they run in two `vak chat` processes or two windows of
one app. A turn therefore holds `<ledger>.locks/<session>.lock` with an exclusive `flock` for its
whole run. flock locks belong to an open file, not a process, so two holders in one process
conflict as well as two processes; the OS drops the lock when its holder dies (SIGKILL
included), so a crash never leaves a session stuck. The holder's pid is written into the file so
the refusal can say who holds it (through lseek/read/write, which every OS has: os.pread and
os.pwrite are Unix only). Windows' locks (msvcrt) are mandatory, so there the lock is on a byte
past the pid, which stays readable.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

_LOCKED_BYTE = 64  # the pid is written before it

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        # Windows locks are mandatory: lock one byte past the pid so others can still read it
        os.lseek(fd, _LOCKED_BYTE, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


class SessionBusy(Exception):
    """Another turn is running in this session (another process or window)."""

    def __init__(self, session: str, holder: str) -> None:
        who = f" (process {holder})" if holder else ""
        super().__init__(
            f"session {session} is busy: a turn is already running in it{who}; "
            "wait for it to finish, or continue in another session"
        )
        self.session = session


_IN_MEMORY: set[str] = set()  # sessions of in-memory ledgers being written, this process
_IN_MEMORY_LOCK = threading.Lock()


@contextlib.contextmanager
def hold_session(ledger_path: Path | None, session: str) -> Iterator[None]:
    """Hold `session` for writing until the block ends; SessionBusy if another holds it."""
    if ledger_path is None:
        with _IN_MEMORY_LOCK:
            if session in _IN_MEMORY:
                raise SessionBusy(session, str(os.getpid()))
            _IN_MEMORY.add(session)
        try:
            yield
        finally:
            with _IN_MEMORY_LOCK:
                _IN_MEMORY.discard(session)
        return
    folder = ledger_path.with_name(ledger_path.name + ".locks")
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / f"{session}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not _try_lock(fd):
            raise SessionBusy(session, _read_at_start(fd, 32).decode("ascii", "replace").strip())
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)  # os.pread/os.pwrite exist on Unix only
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        os.close(fd)  # closing the file drops the lock


def _read_at_start(fd: int, size: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, size)
