"""The files a ChatGPT export holds beside its `conversations.json`, found by file id.

An export (the zip, or the folder it unpacks to) holds each uploaded or generated image as a
file whose name begins with its id — `file-Abc123-photo.jpg`, `file_00000000ab12….png`, some in
sub-folders (`dalle-generations/`, a user folder). A message names it by pointer
(`file-service://file-Abc123`, `sediment://file_00…`); `formats/chatgpt_parts.py` asks for the
id and gets the bytes, or None. The names are indexed once; a file is read only when asked for.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

_ID = re.compile(r"^(file[-_][A-Za-z0-9]+)")
MAX_FILES = 200_000  # an index larger than any export: a wrong folder is not walked for ever


def _file_key(name: str) -> str:
    found = _ID.match(name)
    return found.group(1) if found else ""


class FolderAssets:
    """The files under an export's folder."""

    def __init__(self, folder: Path) -> None:
        self._paths: dict[str, Path] = {}
        for n, path in enumerate(folder.rglob("file*")):
            if n >= MAX_FILES:
                break
            key = _file_key(path.name)
            if key and path.is_file():
                self._paths.setdefault(key, path)

    def find(self, file_id: str) -> bytes | None:
        path = self._paths.get(file_id)
        try:
            return path.read_bytes() if path is not None else None
        except OSError:
            return None


class ZipAssets:
    """The files inside an export's zip."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self._zip = archive
        self._names: dict[str, str] = {}
        for info in archive.infolist()[:MAX_FILES]:
            key = _file_key(info.filename.rsplit("/", 1)[-1])
            if key and not info.is_dir():
                self._names.setdefault(key, info.filename)

    def find(self, file_id: str) -> bytes | None:
        name = self._names.get(file_id)
        try:
            return self._zip.read(name) if name is not None else None
        except (OSError, zipfile.BadZipFile, KeyError):
            return None
