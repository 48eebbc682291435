"""The app's log file: rotating, in the platform's per-user log directory.

Why it exists: a desktop app started from a menu has no terminal, so a warning on stderr is
lost; a user reporting a problem needs a file to attach (the Settings dialog shows where it is).
`VAK_LOG_DIR` overrides the directory (the tests point it at a temporary folder). Records are
the same as stderr's; secrets never reach a log record (see conventions), so none reach this file.
"""

from __future__ import annotations

import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path

import platformdirs

LOG_FILENAME = "vak-desktop.log"
MAX_BYTES = 1_000_000
BACKUPS = 3  # vak-desktop.log.1 … .3: a few MB at most, never the user's disk
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_dir() -> Path:
    """`$VAK_LOG_DIR`, else the platform's log directory (Linux: ~/.local/state/vak-desktop/log,
    macOS: ~/Library/Logs/vak-desktop, Windows: %LOCALAPPDATA%/Vak/vak-desktop/Logs)."""
    env = os.environ.get("VAK_LOG_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_log_dir("vak-desktop", "Vak"))


def log_path() -> Path:
    return log_dir() / LOG_FILENAME


def start_logging(level: int = logging.INFO) -> Path | None:
    """Send log records to stderr (warnings and worse) and to the rotating file (from `level`).
    Returns the file's path, or None when the directory cannot be written (then stderr only,
    with a warning saying why: a read-only home must not stop the app)."""
    root = logging.getLogger()
    root.setLevel(min(level, logging.WARNING))
    stderr = logging.StreamHandler()
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(stderr)
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
        )
    except OSError as exc:
        logging.getLogger(__name__).warning("no log file (%s): %s", path, exc)
        return None
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    return path
