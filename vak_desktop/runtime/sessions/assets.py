"""The files a ChatGPT export holds beside its `conversations.json`, found by file id.

An export (the zip, or the folder it unpacks to) holds each uploaded or generated image as a
file whose name begins with its id — `file-Abc123-photo.jpg`, `file_00000000ab12….png`, some in
sub-folders (`dalle-generations/`, a user folder). A message names it by pointer
(`file-service://file-Abc123`, `sediment://file_00…`); `formats/chatgpt_parts.py` asks for the
id and gets the bytes, or None. The names are indexed once; a file is read only when asked for.
"""

from __future__ import annotations

import itertools
import re
import zipfile
from pathlib import Path

_ID = re.compile(r"^(file[-_][A-Za-z0-9]+)")
MAX_FILES = 200_000  # more than any export holds: a wrong folder is not indexed for ever


def _file_key(name: str) -> str:
    found = _ID.match(name)
    return found.group(1) if found else ""


class FolderAssets:
    """The files in an export's folder and its sub-folders one level down (where an export
    puts them), indexed when the first image is asked for: a chat without one reads none."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._paths: dict[str, Path] | None = None

    def _index(self) -> dict[str, Path]:
        if self._paths is None:
            self._paths = {}
            found = itertools.chain(self._folder.glob("file*"), self._folder.glob("*/file*"))
            for path in itertools.islice(found, MAX_FILES):
                key = _file_key(path.name)
                if key and path.is_file():
                    self._paths.setdefault(key, path)
        return self._paths

    def find(self, file_id: str) -> bytes | None:
        path = self._index().get(file_id)
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


EXPORT_JSON = "conversations.json"


def open_export(path: Path) -> tuple[bytes, FolderAssets | ZipAssets]:
    """The JSON bytes of an export and the files beside it: a `.json` file (its folder holds
    the files) or ChatGPT's zip (its `conversations.json` and files inside). OSError or
    ValueError (one line) when it cannot be read."""
    if zipfile.is_zipfile(path):
        try:
            archive = zipfile.ZipFile(path)
            names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == EXPORT_JSON]
            if not names:
                raise ValueError(f"{path.name} holds no {EXPORT_JSON}")
            return archive.read(min(names, key=len)), ZipAssets(archive)
        except zipfile.BadZipFile as exc:
            raise ValueError(f"{path.name} is not a readable zip: {exc}") from None
    return path.read_bytes(), FolderAssets(path.parent)
