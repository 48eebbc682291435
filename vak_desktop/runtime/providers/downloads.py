"""Downloading a catalogue model: resumable, checked for space first, verified before offered.

    path = await download(entry, models_directory(), client, on_progress=show)

The bytes go to `<file>.part`, beside which `<file>.part.json` records what they are meant to
become (url, size, sha256). A download that stops — the connection cut, the app closed, Cancel —
leaves both, and the next `download` of the same entry asks the server for the rest (HTTP
`Range: bytes=<have>-`); a cut connection is also resumed on the spot, up to `RETRIES` times in
a row without progress. A server that answers a range request with the whole file (200, not
206) is read from byte zero again, so the result is the same. Before any byte is written the
free space is checked against what is still to come (`free_space` is injectable, for tests).
Once the size is reached the file is hashed; only a matching sha256 renames `.part` to the final
name — so the final name always means verified, and a mismatch deletes the `.part` (it is not
resumable: the bytes are wrong) and raises `ChecksumMismatch`. Nothing here touches Qt.

Errors (`DownloadError`, each a sentence a user can act on):
    DownloadError > NotEnoughSpace | ChecksumMismatch | DiskFull
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import httpx

from vak_desktop.runtime.providers.catalogue import CatalogueEntry, downloaded

RETRIES = 5  # cut connections in a row, with no byte gained between them, before giving up
RETRY_DELAY_S = 0.5
SPACE_MARGIN = 64 * 1024 * 1024  # never fill a disk to its last byte
PROGRESS_EVERY_S = 0.1
SPEED_WINDOW_S = 5.0
CHUNK = 1 << 20
TIMEOUT = httpx.Timeout(30.0, connect=15.0)

FreeSpace = Callable[[Path], int]
Progress = Callable[["DownloadProgress"], None]


class DownloadError(RuntimeError):
    """The model could not be downloaded; the message says why and what to do."""


class NotEnoughSpace(DownloadError):
    """Less free space than the rest of the file needs (checked before writing)."""


class DiskFull(DownloadError):
    """The disk filled up while writing; the part so far is kept to resume."""


class ChecksumMismatch(DownloadError):
    """The whole file arrived but is not the published one; it was deleted."""


@dataclass(frozen=True)
class DownloadProgress:
    """One report: bytes on disk of `total`, the recent speed, and the time left at it."""

    key: str
    received: int
    total: int
    bytes_per_s: float
    eta_s: float | None  # None until a speed is known
    phase: str = "downloading"  # "downloading" | "verifying" | "resuming"
    resumed_from: int = 0

    @property
    def fraction(self) -> float:
        return min(1.0, self.received / self.total) if self.total else 0.0


def disk_free(path: Path) -> int:
    """Free bytes on the file system holding `path` (its nearest existing parent)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def part_paths(entry: CatalogueEntry, directory: Path) -> tuple[Path, Path]:
    """The `.part` file and its `.part.json` record for `entry` in `directory`."""
    final = directory / entry.filename
    return final.with_name(final.name + ".part"), final.with_name(final.name + ".part.json")


def partial_size(entry: CatalogueEntry, directory: Path) -> int:
    """Bytes of `entry` already downloaded and resumable (0 when none, or not this file's)."""
    part, record = part_paths(entry, directory)
    if not _record_matches(record, entry):
        return 0
    try:
        return min(part.stat().st_size, entry.size)
    except OSError:
        return 0


def discard_partial(entry: CatalogueEntry, directory: Path) -> None:
    """Forget a stopped download of `entry` (its `.part` and record)."""
    for path in part_paths(entry, directory):
        path.unlink(missing_ok=True)


def _record_matches(record: Path, entry: CatalogueEntry) -> bool:
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(saved, dict) and saved == _record(entry)


def _record(entry: CatalogueEntry) -> dict[str, object]:
    return {"url": entry.url, "size": entry.size, "sha256": entry.sha256}


class _Meter:
    """Speed over the last few seconds, and progress reports at most every 0.1 s."""

    def __init__(self, entry: CatalogueEntry, report: Progress | None, start: int) -> None:
        self.entry, self.report, self.start = entry, report, start
        self.samples: deque[tuple[float, int]] = deque()
        self.last = 0.0

    def tell(self, received: int, phase: str = "downloading", force: bool = False) -> None:
        now = time.monotonic()
        self.samples.append((now, received))
        while len(self.samples) > 2 and now - self.samples[0][0] > SPEED_WINDOW_S:
            self.samples.popleft()
        if self.report is None or (not force and now - self.last < PROGRESS_EVERY_S):
            return
        self.last = now
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        speed = (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0
        left = self.entry.size - received
        eta = left / speed if speed > 0 else None
        self.report(
            DownloadProgress(
                self.entry.key, received, self.entry.size, speed, eta, phase, self.start
            )
        )


async def download(
    entry: CatalogueEntry,
    directory: Path,
    client: httpx.AsyncClient,
    *,
    on_progress: Progress | None = None,
    free_space: FreeSpace = disk_free,
    url: str | None = None,
) -> Path:
    """Download `entry` into `directory` and return the verified file. Resumes a `.part` left by
    an earlier attempt; `url` replaces the entry's (a mirror, or a test's loopback server).
    Cancelling the task keeps the `.part` to resume. Raises DownloadError (see the module)."""
    final = directory / entry.filename
    if downloaded(entry, directory):
        return final  # only a verified file ever gets this name
    part, record = part_paths(entry, directory)
    have = _prepare(entry, directory)
    needed = entry.size - have + SPACE_MARGIN
    free = free_space(directory)
    if free < needed:
        raise NotEnoughSpace(
            f"{entry.name} needs {_gb(needed)} free in {directory}, which has {_gb(free)}: "
            "free some space or pick a smaller model"
        )
    meter = _Meter(entry, on_progress, have)
    meter.tell(have, "resuming" if have else "downloading", force=True)
    failures = 0
    while have < entry.size:
        try:
            have = await _fetch(client, url or entry.url, entry, part, have, meter)
            failures = 0
        except (httpx.TransportError, _Cut) as exc:
            now = part.stat().st_size if part.exists() else 0
            failures = 0 if now > have else failures + 1
            have = now
            if failures >= RETRIES:
                raise DownloadError(
                    f"the download of {entry.name} kept failing ({_reason(exc)}); "
                    "try again later: it resumes where it stopped"
                ) from exc
            await asyncio.sleep(RETRY_DELAY_S * failures)
    meter.tell(have, "verifying", force=True)
    digest = await asyncio.to_thread(_sha256, part)
    if digest != entry.sha256:
        discard_partial(entry, directory)
        raise ChecksumMismatch(
            f"the downloaded {entry.name} is not the published file (sha256 {digest[:12]}… "
            f"instead of {entry.sha256[:12]}…); it was deleted, nothing was installed"
        )
    part.replace(final)
    record.unlink(missing_ok=True)
    return final


class _Cut(Exception):
    """The body ended before the bytes the response promised."""


async def _fetch(
    client: httpx.AsyncClient,
    url: str,
    entry: CatalogueEntry,
    part: Path,
    have: int,
    meter: _Meter,
) -> int:
    """One request for the bytes from `have`; returns the bytes on disk after it."""
    headers = {"Range": f"bytes={have}-"} if have else {}
    async with client.stream("GET", url, headers=headers, timeout=TIMEOUT) as response:
        if response.status_code == 416 and have:
            # the server has no bytes past ours: what we hold is the whole file, or wrong
            return _size_on_disk(part, entry)
        if response.status_code not in (200, 206):
            raise DownloadError(
                f"the server refused the download of {entry.name}: HTTP {response.status_code}"
                f" from {httpx.URL(url).host}"
            )
        start = _start_of(response, have)
        expected = entry.size - start
        length = response.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) != expected:
            raise DownloadError(
                f"the server offers {int(length):,} bytes of {entry.name} where "
                f"{expected:,} were expected: not the catalogue's file"
            )
        try:
            with _open_part(part, start) as handle:
                written = await _copy(response, handle, start, entry, meter)
        except OSError as exc:
            raise _disk_error(exc, part.parent) from exc
    if written < entry.size:
        raise _Cut(f"{written:,} of {entry.size:,} bytes")
    return written


def _prepare(entry: CatalogueEntry, directory: Path) -> int:
    """Make `directory`, start a fresh `.part` unless the one there is this entry's; return
    the bytes already held."""
    part, record = part_paths(entry, directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not _record_matches(record, entry):
            part.unlink(missing_ok=True)
            record.write_text(json.dumps(_record(entry)), encoding="utf-8")
    except OSError as exc:
        raise _disk_error(exc, directory) from exc
    return partial_size(entry, directory)


def _open_part(part: Path, start: int) -> BinaryIO:
    """The `.part` open for writing at `start` (from 0: emptied; else anything past cut off)."""
    if not start or not part.exists():
        return part.open("wb")
    handle = part.open("r+b")
    handle.seek(start)
    handle.truncate()
    return handle


def _start_of(response: httpx.Response, have: int) -> int:
    """Where the body starts: `have` for a 206 that says so, 0 for a 200 (Range ignored)."""
    if response.status_code == 200:
        return 0
    found = response.headers.get("content-range", "")
    try:
        start = int(found.split()[1].split("-")[0])
    except (IndexError, ValueError):
        raise DownloadError(
            f"the server sent a part without a usable Content-Range ({found!r})"
        ) from None
    if start != have:
        raise DownloadError(f"the server sent bytes from {start:,} where {have:,} were asked")
    return start


async def _copy(
    response: httpx.Response, handle: BinaryIO, start: int, entry: CatalogueEntry, meter: _Meter
) -> int:
    written = start
    async for chunk in response.aiter_bytes():  # as they arrive: a cut loses none
        if written + len(chunk) > entry.size:
            raise DownloadError(
                f"the server sent more than the {entry.size:,} bytes of {entry.name}"
            )
        handle.write(chunk)
        written += len(chunk)
        meter.tell(written)
    handle.flush()
    return written


def _size_on_disk(part: Path, entry: CatalogueEntry) -> int:
    size = part.stat().st_size if part.exists() else 0
    if size != entry.size:
        part.unlink(missing_ok=True)
        raise DownloadError(f"the server has no bytes past {size:,} of {entry.name}; start again")
    return size


def _disk_error(exc: OSError, where: Path) -> DownloadError:
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return DiskFull(
            f"the disk holding {where} is full; free some space and download again: "
            "it resumes where it stopped"
        )
    return DownloadError(f"cannot write the model in {where}: {exc.strerror or exc}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _gb(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e8 else f"{size / 1e6:.0f} MB"


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
