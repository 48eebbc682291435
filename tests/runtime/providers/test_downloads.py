"""Catalogue downloads end to end against a real loopback HTTP server serving a small valid
GGUF file: a clean download, a cut connection (resumed), a restart (resumed from the `.part`),
a bad checksum (refused, nothing offered), a full disk before and while writing, and a server
that ignores Range (read again from byte zero, still correct)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
from pathlib import Path

import httpx
import pytest

from tests.doubles.file_server import FileServer, write_gguf
from vak_desktop.runtime.providers.catalogue import CatalogueEntry, downloaded
from vak_desktop.runtime.providers.downloads import (
    ChecksumMismatch,
    DiskFull,
    DownloadError,
    DownloadProgress,
    NotEnoughSpace,
    download,
    part_paths,
    partial_size,
)

SIZE = 3 * 1024 * 1024 + 123  # three and a bit megabytes: several chunks, quick


@pytest.fixture
def model(tmp_path: Path) -> bytes:
    (tmp_path / "source").mkdir()
    return write_gguf(tmp_path / "source" / "model.gguf", SIZE).read_bytes()


def _entry(data: bytes, url: str) -> CatalogueEntry:
    return CatalogueEntry(
        key="test-model-q4_k_m",
        name="Test model",
        family="Test",
        parameters="0.001B",
        quantisation="Q4_K_M",
        size=len(data),
        ram_gb=0.1,
        licence="Apache-2.0",
        url=url,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _offered(directory: Path) -> list[str]:
    """What a model list would offer: the final .gguf files only."""
    return sorted(p.name for p in directory.glob("*.gguf")) if directory.exists() else []


async def test_a_download_arrives_verified_under_its_final_name_with_progress(
    model: bytes, tmp_path: Path
) -> None:
    seen: list[DownloadProgress] = []
    target = tmp_path / "models"
    with FileServer(model, delay_per_chunk=0.01) as server:
        entry = _entry(model, server.url)
        async with httpx.AsyncClient() as client:
            path = await download(entry, target, client, on_progress=seen.append)
    assert path == target / entry.filename and path.read_bytes() == model
    assert downloaded(entry, target) == path
    assert not any(p.exists() for p in part_paths(entry, target))
    assert server.ranges == [""]
    received = [p.received for p in seen if p.phase == "downloading"]
    assert received == sorted(received) and len(received) >= 3
    assert seen[-1].phase == "verifying" and seen[-1].fraction == 1.0
    assert any(p.bytes_per_s > 0 and p.eta_s is not None for p in seen)
    with FileServer(model) as again:  # already there: not fetched again
        async with httpx.AsyncClient() as client:
            assert await download(dataclasses.replace(entry, url=again.url), target, client)
        assert again.ranges == []


async def test_a_cut_connection_is_resumed_with_a_range_request(
    model: bytes, tmp_path: Path
) -> None:
    cut = 1_000_000
    with FileServer(model, cut_after=cut, cuts=2) as server:
        entry = _entry(model, server.url)
        async with httpx.AsyncClient() as client:
            path = await download(entry, tmp_path, client)
    assert path.read_bytes() == model
    assert server.ranges[0] == ""
    assert server.ranges[1:] == [f"bytes={cut}-", f"bytes={2 * cut}-"]


async def test_a_download_stopped_by_a_restart_resumes_from_its_part_file(
    model: bytes, tmp_path: Path
) -> None:
    with FileServer(model, delay_per_chunk=0.01) as server:
        entry = _entry(model, server.url)
        async with httpx.AsyncClient() as client:
            task = asyncio.ensure_future(download(entry, tmp_path, client))
            async with asyncio.timeout(10):
                while partial_size(entry, tmp_path) < 500_000:  # noqa: ASYNC110 (a file grows)
                    await asyncio.sleep(0.01)
            task.cancel()  # the app closes mid-download
            with pytest.raises(asyncio.CancelledError):
                await task
        have = partial_size(entry, tmp_path)
        assert 0 < have < len(model) and _offered(tmp_path) == []
        async with httpx.AsyncClient() as client:  # the next start
            path = await download(entry, tmp_path, client)
    assert path.read_bytes() == model
    assert server.ranges[-1] == f"bytes={have}-"


async def test_a_wrong_checksum_is_refused_and_nothing_is_offered(
    model: bytes, tmp_path: Path
) -> None:
    wrong = model[:-1] + bytes([model[-1] ^ 0xFF])  # one byte changed, same size
    with FileServer(model, body=wrong) as server:
        entry = _entry(model, server.url)
        async with httpx.AsyncClient() as client:
            with pytest.raises(ChecksumMismatch, match="not the published file"):
                await download(entry, tmp_path, client)
    assert _offered(tmp_path) == [] and downloaded(entry, tmp_path) is None
    assert not any(p.exists() for p in part_paths(entry, tmp_path))


async def test_too_little_free_space_is_refused_before_a_byte_is_written(
    model: bytes, tmp_path: Path
) -> None:
    with FileServer(model) as server:
        entry = _entry(model, server.url)
        async with httpx.AsyncClient() as client:
            with pytest.raises(NotEnoughSpace, match=r"needs .* free in .* which has 1 MB"):
                await download(entry, tmp_path, client, free_space=lambda _p: 1_000_000)
    assert server.ranges == [] and _offered(tmp_path) == []
    assert partial_size(entry, tmp_path) == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
async def test_a_disk_that_fills_up_while_writing_says_so_and_offers_nothing(
    model: bytes, tmp_path: Path
) -> None:
    with FileServer(model) as server:
        entry = _entry(model, server.url)
        part, record = part_paths(entry, tmp_path)
        record.write_text(
            f'{{"url": "{entry.url}", "size": {entry.size}, "sha256": "{entry.sha256}"}}'
        )
        part.symlink_to("/dev/full")  # every write there fails with ENOSPC, as on a full disk
        async with httpx.AsyncClient() as client:
            with pytest.raises(DiskFull, match="is full; free some space"):
                await download(entry, tmp_path, client)
    assert _offered(tmp_path) == [] and downloaded(entry, tmp_path) is None


async def test_a_download_redirected_to_another_host_resumes_there(
    model: bytes, tmp_path: Path
) -> None:
    with (
        FileServer(model, cut_after=1_500_000) as cdn,
        FileServer(b"", redirect_to=cdn.url) as hub,
    ):
        entry = _entry(model, hub.url)
        async with httpx.AsyncClient(follow_redirects=True) as client:
            path = await download(entry, tmp_path, client)
    assert path.read_bytes() == model
    assert hub.ranges == ["", "bytes=1500000-"]  # every attempt starts at the hub
    assert cdn.ranges == ["", "bytes=1500000-"]  # and its Range reaches the CDN


async def test_a_server_that_ignores_range_is_read_again_from_zero(
    model: bytes, tmp_path: Path
) -> None:
    with FileServer(model, cut_after=1_200_000, ignore_range=True) as server:
        entry = _entry(model, server.url)
        async with httpx.AsyncClient() as client:
            path = await download(entry, tmp_path, client)
    assert path.read_bytes() == model
    assert server.ranges == ["", "bytes=1200000-"]  # asked to resume, sent it all: still right


async def test_a_missing_file_on_the_server_is_one_line(model: bytes, tmp_path: Path) -> None:
    with FileServer(model) as server:
        entry = _entry(model, server.url + ".gone")
        async with httpx.AsyncClient() as client:
            with pytest.raises(DownloadError, match=r"refused the download .*HTTP 404") as caught:
                await download(entry, tmp_path, client)
    assert "\n" not in str(caught.value) and _offered(tmp_path) == []
