"""The catalogue's download of the real test model (Qwen2.5-Coder-0.5B-Instruct Q4_K_M,
491,400,064 bytes) from a loopback server, cut once at 100 MB and resumed, verified against
the catalogue's own sha256 — the value shipped in resources/models/catalogue.json."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import httpx

from tests.doubles.file_server import FileServer
from vak_desktop.runtime.providers.catalogue import load_catalogue
from vak_desktop.runtime.providers.downloads import DownloadProgress, download

KEY = "qwen2.5-coder-0.5b-instruct-q4_k_m"


async def test_the_real_model_downloads_resumes_and_matches_the_catalogue(
    model_path: Path, tmp_path: Path
) -> None:
    (entry,) = [e for e in load_catalogue() if e.key == KEY]
    assert _size(model_path) == entry.size
    seen: list[DownloadProgress] = []
    with FileServer(model_path, name=model_path.name, cut_after=100_000_000) as server:
        async with httpx.AsyncClient() as client:
            began = time.monotonic()
            path = await download(
                dataclasses.replace(entry, url=server.url),
                tmp_path,
                client,
                on_progress=seen.append,
            )
            took = time.monotonic() - began
    assert path == tmp_path / entry.filename and _size(path) == entry.size
    assert server.ranges == ["", "bytes=100000000-"]
    fastest = max(p.bytes_per_s for p in seen)
    print(
        f"downloaded and verified {entry.size:,} bytes in {took:.1f} s (peak {fastest / 1e6:.0f} MB/s)"
    )


def _size(path: Path) -> int:
    return path.stat().st_size
