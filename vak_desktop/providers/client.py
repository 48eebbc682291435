"""The one place HTTP clients are built, so every request says who sends it.

Every request the app makes carries `User-Agent: vak-desktop/<version>` (servers and proxies
log it; a provider can tell our traffic apart). The adapters receive their client from the
caller (conventions: the network is swapped at one seam), so the callers — `app.py`, the CLI,
the embedded engine, MCP's streamable HTTP transport — build it here.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

import httpx


def app_version() -> str:
    """The installed package's version ("0+unknown" when run from an uninstalled tree)."""
    try:
        return metadata.version("vak-desktop")
    except metadata.PackageNotFoundError:
        return "0+unknown"


USER_AGENT = f"vak-desktop/{app_version()}"


def app_headers() -> dict[str, str]:
    """The headers every client of the app sends."""
    return {"User-Agent": USER_AGENT}


def http_client(**options: Any) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` sending the app's User-Agent (options as httpx takes them)."""
    headers = {**app_headers(), **dict(options.pop("headers", None) or {})}
    return httpx.AsyncClient(headers=headers, **options)
