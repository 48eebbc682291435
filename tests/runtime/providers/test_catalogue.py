"""The shipped model catalogue reads back whole, and a damaged one is refused naming the entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vak_desktop.runtime.providers.catalogue import (
    CatalogueError,
    load_catalogue,
    models_directory,
    suggested,
)
from vak_desktop.shipped import shipped

# the two files hashed on this machine (tools/fetch-test-model.sh checks the same digests)
HASHED_HERE = {
    "qwen2.5-coder-0.5b-instruct-q4_k_m": (
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen2.5-coder-1.5b-instruct-q4_k_m": (
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def test_the_shipped_catalogue_names_real_files_with_their_size_and_sha256() -> None:
    entries = load_catalogue()
    assert len(entries) >= 10 and len({e.key for e in entries}) == len(entries)
    families = {e.family for e in entries}
    assert {"Qwen2.5", "Qwen2.5 Coder", "Llama 3.2", "Gemma 2", "Phi-3.5"} <= families
    for entry in entries:
        assert entry.url.startswith("https://huggingface.co/") and entry.url.endswith(".gguf")
        assert entry.size > 100_000_000 and entry.ram_gb * 1e9 > entry.size * 0.9
        assert entry.filename == f"{entry.key}.gguf"
    for key, (size, sha) in HASHED_HERE.items():
        (entry,) = [e for e in entries if e.key == key]
        assert (entry.size, entry.sha256) == (size, sha)
    first = suggested(entries)
    assert first is not None and first.key == "qwen2.5-coder-0.5b-instruct-q4_k_m"


def test_downloaded_models_live_in_the_data_directory(tmp_path: Path) -> None:
    assert models_directory(tmp_path) == tmp_path / "models"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"sha256": "to-be-verified"}, "sha256 must be 64 lower-case hex digits"),
        ({"size": 0}, "size must be a positive number"),
        ({"url": "file:///etc/passwd"}, "url must be an http"),
        ({"licence": ""}, "licence must be a non-empty string"),
    ],
)
def test_a_damaged_entry_is_refused_naming_it(
    tmp_path: Path, change: dict[str, object], words: str
) -> None:
    good = json.loads(shipped("models/catalogue.json").read_text(encoding="utf-8"))["models"][0]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps({"models": [{**good, **change}]}))
    with pytest.raises(CatalogueError, match=words) as caught:
        load_catalogue(path)
    assert good["key"] in str(caught.value)
