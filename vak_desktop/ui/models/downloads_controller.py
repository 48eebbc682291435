"""The catalogue's downloads on the Qt side: `runtime/providers/downloads.py` as signals.

One download runs at a time, as a task on the qasync loop (so the window never waits on the
network); Cancel cancels the task, which keeps the `.part` file, so Download again resumes. A
finished, verified file is announced with `modelReady(path)`: the providers controller starts
it on the embedded engine, where it is probed like any other model. The HTTP client is our
usual one (`providers.client.http_client`), opened for the download and closed after it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import httpx
from PySide6.QtCore import QObject, Signal

from vak_desktop.providers.client import http_client
from vak_desktop.runtime.providers.catalogue import (
    CatalogueEntry,
    downloaded,
    load_catalogue,
    memory_bytes,
    models_directory,
)
from vak_desktop.runtime.providers.downloads import (
    DownloadError,
    DownloadProgress,
    FreeSpace,
    discard_partial,
    disk_free,
    download,
    partial_size,
)
from vak_desktop.ui.parts.tasks import TaskSet

log = logging.getLogger(__name__)

SUCCEEDED, CANCELLED, FAILED = "succeeded", "cancelled", "failed"


class DownloadsController(QObject):
    """Downloads catalogue models into the models folder, one at a time."""

    started = Signal(str)  # entry key
    progress = Signal(object)  # DownloadProgress
    finished = Signal(str, str, str)  # key, SUCCEEDED | CANCELLED | FAILED, message or path
    modelReady = Signal(str)  # the verified file's path

    def __init__(
        self,
        directory: Path | None = None,
        entries: tuple[CatalogueEntry, ...] | None = None,
        *,
        free_space: FreeSpace = disk_free,
        client: Callable[[], httpx.AsyncClient] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.directory = directory or models_directory()
        self.entries = entries if entries is not None else load_catalogue()
        self.free_space = free_space  # injectable: a test sets a nearly full disk
        # model hosts redirect a download to their CDN
        self._client = client or (lambda: http_client(follow_redirects=True))
        self._tasks = TaskSet()
        self._task: asyncio.Task[None] | None = None
        self.downloading = ""  # the key of the download under way, or ""
        self.memory = memory_bytes()  # to say when a model needs more than this computer has

    def entry(self, key: str) -> CatalogueEntry | None:
        return next((e for e in self.entries if e.key == key), None)

    def path_of(self, entry: CatalogueEntry) -> Path | None:
        """The verified file of `entry`, if it has been downloaded."""
        return downloaded(entry, self.directory)

    def partial(self, entry: CatalogueEntry) -> int:
        """Bytes of a stopped download of `entry` that the next one resumes from."""
        return partial_size(entry, self.directory)

    def delete(self, entry: CatalogueEntry) -> str:
        """Remove `entry`'s downloaded file and any stopped download of it; "" or why not."""
        if self.downloading == entry.key:
            return f"{entry.name} is downloading; cancel it first"
        try:
            (self.directory / entry.filename).unlink(missing_ok=True)
            discard_partial(entry, self.directory)
        except OSError as exc:  # on Windows, a file the engine has open
            return f"cannot delete {entry.filename}: {exc.strerror or exc}"
        log.info("deleted the downloaded %s", entry.key)
        return ""

    def start(self, key: str) -> asyncio.Task[None] | None:
        """Download the entry named `key` (None when another download is under way)."""
        entry = self.entry(key)
        if entry is None or self.downloading:
            return None
        self.downloading = key
        self.started.emit(key)
        self._task = self._tasks.spawn(self._run(entry), f"download-{key}")
        return self._task

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _run(self, entry: CatalogueEntry) -> None:
        try:
            async with self._client() as client:
                path = await download(
                    entry,
                    self.directory,
                    client,
                    on_progress=self.progress.emit,
                    free_space=self.free_space,
                )
        except asyncio.CancelledError:
            self._done(entry.key, CANCELLED, "")
            raise
        except DownloadError as exc:
            log.info("download of %s failed: %s", entry.key, exc)
            self._done(entry.key, FAILED, str(exc))
            return
        except (OSError, httpx.HTTPError) as exc:
            log.info("download of %s failed: %s", entry.key, exc)
            self._done(entry.key, FAILED, f"{type(exc).__name__}: {exc}")
            return
        except Exception as exc:  # a bug: logged whole, and the panel must not stay "downloading"
            log.exception("download of %s failed", entry.key)
            self._done(entry.key, FAILED, f"{type(exc).__name__}: {exc}")
            return
        log.info("downloaded %s to %s", entry.key, path)
        self._done(entry.key, SUCCEEDED, str(path))
        self.modelReady.emit(str(path))

    def _done(self, key: str, outcome: str, message: str) -> None:
        self.downloading = ""
        self._task = None
        self.finished.emit(key, outcome, message)

    async def aclose(self) -> None:
        """Cancel a download under way (its `.part` stays, to resume next time)."""
        await self._tasks.cancel_all()


def describe(state: DownloadProgress) -> str:
    """ "120 MB of 491 MB · 12.3 MB/s · about 30 s left" for one progress report."""
    done = f"{_size(state.received)} of {_size(state.total)}"
    if state.phase == "verifying":
        return f"{done} · checking the file's sha256…"
    if state.phase == "resuming" and state.resumed_from:
        return f"{done} · resuming where it stopped…"
    speed = f" · {state.bytes_per_s / 1e6:.1f} MB/s" if state.bytes_per_s > 0 else ""
    return f"{done}{speed}{' · ' + _eta(state.eta_s) if state.eta_s is not None else ''}"


def _size(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def _eta(seconds: float) -> str:
    if seconds < 90:
        return f"about {max(1, round(seconds))} s left"
    if seconds < 5400:
        return f"about {round(seconds / 60)} min left"
    return f"about {seconds / 3600:.1f} h left"
