"""Where the ledger and settings live: `VAK_DATA_DIR`, else the platform's per-user data dir."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: `override`, else `$VAK_DATA_DIR`, else the per-user default."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("VAK_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("vak-desktop", "Vak"))
