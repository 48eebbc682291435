"""The model catalogue: GGUF models the embedded engine can download, as shipped in
`resources/models/catalogue.json`, and where a downloaded one lives.

Why it exists: a user without Ollama still needs a model file, and finding a GGUF file that
llama.cpp runs well, fits in memory and may be used is the hard part of a first run (GPT4All,
LM Studio and Jan each start with such a list). Every entry names its file's size and sha256 as
published, so a download is verified before the model is offered (`downloads.py`). Entries are
checked when read: a missing field, a size that is not a positive number or a sha256 that is
not 64 hex digits is an error naming the entry, never a silent default.

Downloaded files go in `models_directory()`: `models/` under the data directory (the platform's
per-user data folder through platformdirs, or `$VAK_DATA_DIR`), next to the ledger.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vak_desktop.ledger.location import data_dir
from vak_desktop.shipped import shipped

CATALOGUE_FILE = "models/catalogue.json"
MODELS_FOLDER = "models"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FIELDS = ("key", "name", "family", "parameters", "quantisation", "licence", "url", "sha256")


class CatalogueError(ValueError):
    """The catalogue file is not what this build can read; the message names the entry."""


@dataclass(frozen=True)
class CatalogueEntry:
    """One downloadable model: what it is, how big, what it needs, and how to check it."""

    key: str  # stable id, also the downloaded file's stem
    name: str
    family: str
    parameters: str  # "0.5B", "3.8B" … as the publisher counts them
    quantisation: str
    size: int  # bytes of the file
    ram_gb: float  # memory to run it with an 8,192-token window
    licence: str
    url: str
    sha256: str  # lower-case hex of the whole file
    note: str = ""
    suggested: bool = False  # the one a first run offers first

    @property
    def filename(self) -> str:
        """The name the downloaded file gets: the key, so two publishers' files never clash."""
        return f"{self.key}.gguf"


def load_catalogue(source: Traversable | Path | None = None) -> tuple[CatalogueEntry, ...]:
    """The entries of the shipped catalogue (or of `source`), in the file's order."""
    node = source if source is not None else shipped(CATALOGUE_FILE)
    try:
        table = json.loads(node.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogueError(f"the model catalogue cannot be read: {exc}") from exc
    models = table.get("models") if isinstance(table, dict) else None
    if not isinstance(models, list):
        raise CatalogueError("the model catalogue has no list of models")
    entries = tuple(_entry(index, raw) for index, raw in enumerate(models))
    keys = [e.key for e in entries]
    if len(set(keys)) != len(keys):
        raise CatalogueError("the model catalogue names one key twice")
    return entries


def _entry(index: int, raw: Any) -> CatalogueEntry:
    where = f"catalogue entry {index + 1}"
    if not isinstance(raw, dict):
        raise CatalogueError(f"{where} is not a table")
    where = f"catalogue entry {raw.get('key', index + 1)!r}"
    for name in _FIELDS:
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise CatalogueError(f"{where}: {name} must be a non-empty string")
    size, ram = raw.get("size"), raw.get("ram_gb")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise CatalogueError(f"{where}: size must be a positive number of bytes")
    if not isinstance(ram, int | float) or isinstance(ram, bool) or ram <= 0:
        raise CatalogueError(f"{where}: ram_gb must be a positive number")
    if not _SHA256.fullmatch(raw["sha256"]):
        raise CatalogueError(f"{where}: sha256 must be 64 lower-case hex digits")
    if urlsplit(raw["url"]).scheme not in ("https", "http"):
        raise CatalogueError(f"{where}: url must be an http(s) address")
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", raw["key"]):
        raise CatalogueError(f"{where}: key must be lower-case letters, digits, . _ -")
    return CatalogueEntry(
        key=raw["key"],
        name=raw["name"],
        family=raw["family"],
        parameters=raw["parameters"],
        quantisation=raw["quantisation"],
        size=size,
        ram_gb=float(ram),
        licence=raw["licence"],
        url=raw["url"],
        sha256=raw["sha256"],
        note=str(raw.get("note", "")),
        suggested=bool(raw.get("suggested", False)),
    )


def models_directory(data_directory: str | os.PathLike[str] | None = None) -> Path:
    """Where downloaded models go: `models/` in the data directory (not created here)."""
    return data_dir(data_directory) / MODELS_FOLDER


def downloaded(entry: CatalogueEntry, directory: Path) -> Path | None:
    """The downloaded file of `entry` in `directory`, or None. A file reaches its final name
    only after its sha256 matched (`downloads.download`), so one of the right size is it."""
    path = directory / entry.filename
    try:
        return path if path.is_file() and path.stat().st_size == entry.size else None
    except OSError:
        return None


def suggested(entries: tuple[CatalogueEntry, ...]) -> CatalogueEntry | None:
    """The entry a first run offers first (the catalogue's `suggested`, else the first)."""
    return next((e for e in entries if e.suggested), entries[0] if entries else None)


def memory_bytes() -> int | None:
    """This computer's physical memory, or None where it cannot be read (then nothing is said
    about fit: a guess would be worse than silence)."""
    if sys.platform == "win32":
        import ctypes

        class _Status(ctypes.Structure):
            _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong)] + [
                (name, ctypes.c_ulonglong)
                for name in ("total", "free", "page", "page_free", "virtual", "virtual_free", "x")
            ]

        status = _Status()
        status.length = ctypes.sizeof(_Status)
        ok = ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status))  # type: ignore[attr-defined]
        return int(status.total) if ok else None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None
