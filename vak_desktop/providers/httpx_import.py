"""httpx, imported without its command-line client.

httpx's `__init__` imports `httpx._main` (the `httpx` command) whenever `rich` and `click` are
installed, and falls back to a stub when that import fails. The app never runs that command, and
the import was 0.14 s of every start of the window and of `vak` on a loaded 2-core machine
(`python -X importtime`: rich's console and progress, pygments' lexer machinery). Importing this
module first makes that one import fail; `httpx._main` stays importable afterwards.
"""

from __future__ import annotations

import sys

if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]  # ImportError inside httpx
    try:
        import httpx  # noqa: F401
    finally:
        del sys.modules["httpx._main"]
