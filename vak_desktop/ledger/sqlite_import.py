"""sqlite-utils, imported without its optional numpy column types.

sqlite-utils imports numpy when it is installed, only to map numpy scalar types to column types;
the ledger stores no numpy values, and that import was a quarter of a second of every start of
the window and of `vak` (measured with `python -X importtime`: 354 ms for sqlite_utils, 250 of
them numpy, on a loaded 2-core machine). Importing this module first hides numpy from that one
import; numpy stays importable for anything that needs it later. Every ledger module takes
sqlite-utils from here (`from vak_desktop.ledger.sqlite_import import sqlite_utils`), so the
rule holds whichever of them is imported first.
"""

from __future__ import annotations

import sys

if "sqlite_utils" not in sys.modules and "numpy" not in sys.modules:
    sys.modules["numpy"] = None  # type: ignore[assignment]  # ImportError inside sqlite-utils
    try:
        import sqlite_utils
    finally:
        del sys.modules["numpy"]

import sqlite_utils

__all__ = ["sqlite_utils"]
