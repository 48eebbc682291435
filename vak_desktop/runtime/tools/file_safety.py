"""What keeps the file tools from hanging or swallowing memory, whatever the workspace holds.

- Only regular files are read: a FIFO blocks a reader for ever, a device never ends, a socket
  cannot be opened; `read` refuses them by name and `glob`/`grep` pass over them.
- Regular expressions run on RE2 (google-re2), whose time is linear in the text: Python's
  backtracking engine took 988 s on `(a+)+$` over a 33-character line. RE2 has no
  backreferences or look-around; such a pattern is refused saying so.
- A line range is read in pieces of at most the read limit, so `range` [1, 1] of a 50 MB
  one-line file holds 2 MB, not 50 MB, and says it stopped there.
- Globs run on RE2 too (`glob_matcher`).
- `Stop` is how a call that was cancelled or ran out of time stops its worker thread (a thread
  cannot be killed, and a live one keeps the process from exiting after Ctrl-C): the walks check
  it between files, grep every 1,024 lines, a line range every 4,096.
"""

from __future__ import annotations

import contextvars
import os
import stat
import threading
from pathlib import Path
from typing import Any, Protocol

import re2

from vak_desktop.runtime.tools.registry import ToolFailure


class Searcher(Protocol):
    def search(self, text: str) -> Any: ...


class Matcher(Protocol):
    def fullmatch(self, text: str) -> Any: ...


KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: Path) -> str:
    """What `path` is when it is not a regular file or folder ("" when it is one)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return ""
    return next((name for test, name in KINDS if test(mode)), "")


def refuse_special(path: Path, shown: str) -> None:
    kind = special_kind(path)
    if kind:
        raise ToolFailure(f"{shown} is {kind}, not a regular file: read reads files only")


def linear_regex(pattern: str, ignore_case: bool) -> Searcher:
    """`pattern` compiled on RE2 (linear time), or ToolFailure saying why it cannot be."""
    options = re2.Options()
    options.log_errors = False  # the error reaches the model, not the terminal
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)  # type: ignore[no-any-return]
    except re2.error as exc:
        why = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolFailure(
            f"{pattern!r} is not a valid regular expression for grep: {why} (grep uses RE2, "
            "linear-time: no backreferences or look-around)"
        ) from None


def glob_matcher(regex: str, pattern: str) -> Matcher:
    """The regex a glob became (`files.glob_regex`), compiled on RE2: linear in the name."""
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(regex, options)  # type: ignore[no-any-return]
    except re2.error:
        raise ToolFailure(f"{pattern!r} is not a glob pattern that can be read") from None


CURRENT_STOP: contextvars.ContextVar[Stop | None] = contextvars.ContextVar("stop", default=None)


class Stop:
    """Set when the call that started a worker was cancelled or timed out."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def check(self) -> None:
        if self._event.is_set():
            raise ToolFailure("stopped: the call was cancelled or ran out of time")


def check_stop() -> None:
    """In a worker thread (`asyncio.to_thread` copies the context): stop if told to."""
    stop = CURRENT_STOP.get()
    if stop is not None:
        stop.check()


def line_range(handle: Any, first: int, last: int, limit: int) -> tuple[list[bytes], int, bool]:
    """Lines `first`..`last` of a binary file (1-based), never holding more than `limit` bytes:
    (the picked bytes, the file's line count, whether the pick stopped at `limit`)."""
    picked: list[bytes] = []
    kept, cut = 0, False
    number, total = 1, 0
    while piece := handle.readline(limit):  # a line longer than `limit` comes in pieces
        if not number % 4096:
            check_stop()  # counting the lines of a large file: stop within one piece of it
        total = number
        ends = piece.endswith(b"\n")
        if first <= number <= last and not cut:
            room = limit - kept
            if len(piece) > room:
                piece, cut = piece[:room], True
            picked.append(piece)
            kept += len(piece)
        if ends:
            number += 1
    return picked, total, cut


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
