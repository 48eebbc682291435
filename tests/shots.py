"""Where a test saves a screenshot for a person to look at: `$VAK_SHOTS_DIR/<name>/`, else
`<the OS's temp folder>/vak-shots/<name>/`, created with its parents when first asked for.
Never a fixed `/tmp/...` path: Windows has no /tmp, and a folder made at import without its
parents failed the whole module's collection there."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def shots_dir(name: str) -> Path:
    base = os.environ.get("VAK_SHOTS_DIR") or str(Path(tempfile.gettempdir()) / "vak-shots")
    folder = Path(base) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder
