"""The settings file as bytes on disk: read only when it is a regular file, written whole or not.

`settings.toml` made a directory gave an `IsADirectoryError` traceback, and made a FIFO it hung
`vak chat` at start (issue 24 F5): the file's type is now checked before it is opened, the open
is non-blocking, and the opened descriptor's type is checked again before a byte is read. A
device, a socket, an unreadable file or a full disk is one line naming the file and the cause.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from vak_desktop.ledger.errors import os_cause

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class SettingsFileError(ValueError):
    """The settings file cannot be read or written; the message names it and the cause."""


def _not_a_file(path: Path, mode: int) -> SettingsFileError | None:
    kind = next((name for test, name in _KINDS if test(mode)), None)
    if kind is None:
        return None
    return SettingsFileError(f"{path} is {kind}, not a settings file: move it away or fix it")


def read_settings_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsFileError(f"{path} cannot be read: {os_cause(exc)}") from None
    refused = _not_a_file(path, mode)
    if refused is not None:
        raise refused
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsFileError(f"{path} cannot be read: {os_cause(exc)}") from None
    with os.fdopen(fd, "rb") as handle:
        refused = _not_a_file(path, os.fstat(fd).st_mode)  # swapped since the stat
        if refused is not None:
            raise refused
        try:
            return handle.read()
        except OSError as exc:
            raise SettingsFileError(f"{path} cannot be read: {os_cause(exc)}") from None


def write_settings_bytes(path: Path, data: bytes) -> None:
    """Replace the file with `data` whole (a temporary file, flushed, then renamed over it); on
    a full disk or any failure, the old file stays as it was and the temporary one is gone."""
    tmp = path.with_suffix(".toml.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SettingsFileError(f"cannot save the settings {path}: {os_cause(exc)}") from None
