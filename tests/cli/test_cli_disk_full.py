"""A full disk anywhere is one line naming it, and nothing is half-written (issue 24 item 7, F9):
appending a directive, the stream journal's checkpoints while an answer streams (and the fold
of the step that ends it), an import, an export to a file, saving the settings. The disk is a
real 2 MB tmpfs filled with a filler file (the audit's setup), so the errors are the kernel's
own ENOSPC; skipped where this process may not mount one."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doubles.fixtures import TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.runtime.settings import Settings, SettingsError, load_settings, save_settings

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "tiny"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", f"vak-{uuid.uuid4().hex[:8]}", str(where)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(disk: Path, leave: int = 0) -> Path:
    """Fill `disk` up to `leave` bytes free; returns the filler (delete it to free the disk)."""
    filler = disk / "filler"
    with open(filler, "ab") as out:
        block = b"\0" * 4096
        with contextlib.suppress(OSError):
            while shutil.disk_usage(disk).free > leave + 4096:
                out.write(block)
                out.flush()
    return filler


def _vak(data: Path, *argv: str, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vak_desktop.cli", *argv, "--data-dir", str(data)],
        cwd=ROOT,
        env=ENV,
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def _one_line_naming_the_disk(done: subprocess.CompletedProcess[str]) -> str:
    """The one error line (a log warning that the WAL's shared index is kept in memory may
    come before it: that is a note, not the error)."""
    assert done.returncode in (1, 2), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.strip().splitlines() if line.startswith("vak: ")]
    assert len(errors) == 1 and len(done.stderr.strip().splitlines()) <= 2, done.stderr
    assert "the disk is full" in errors[0], errors[0]
    return errors[0]


def _verifies(data: Path) -> dict[str, object]:
    done = _vak(data, "ledger", "verify", "--json")
    report: dict[str, object] = json.loads(done.stdout)
    assert report["ok"], report
    return report


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_appending_checkpointing_and_folding_on_a_full_disk_is_one_line(
    tiny_disk: Path, double: OllamaDouble
) -> None:
    data = tiny_disk / "data"
    first = _vak(data, "chat", TOOL_MODEL, "hello", "--host", double.url)
    assert first.returncode == 0, first.stderr
    # from no room at all to room for a few checkpoints: the directive's append, the stream
    # journal's checkpoints (F9: 39 lines) or the step's append that folds them meets it
    double.default_chunk_chars, double.default_delay_per_chunk = 4, 0.003  # ~1.5 s of stream
    failed_mid_stream = 0
    for leave in (0, 40_960, 57_344, 73_728, 90_112, 106_496, 131_072, 163_840, 262_144):
        filler = _fill(tiny_disk, leave)
        done = _vak(data, "chat", TOOL_MODEL, f"room {leave}", "--host", double.url)
        if done.returncode != 0:
            _one_line_naming_the_disk(done)
            failed_mid_stream += bool(done.stdout.strip())
        filler.unlink()
        _verifies(data)
    assert failed_mid_stream  # at least one stopped after text had streamed


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_an_import_and_an_export_on_a_full_disk_are_one_line(tiny_disk: Path) -> None:
    data = tiny_disk / "data"
    messages = []
    for i in range(3_000):
        messages += [
            {"role": "user", "content": f"question {i} " + "words " * 20},
            {"role": "assistant", "content": f"answer {i} " + "more " * 30},
        ]
    source = tiny_disk.parent / "big.json"
    source.write_text(json.dumps({"messages": messages}))
    assert _vak(data, "sessions").returncode == 0
    filler = _fill(tiny_disk, leave=300_000)
    imported = _vak(data, "import", str(source))
    _one_line_naming_the_disk(imported)
    filler.unlink()
    listed = _vak(data, "sessions", "--json")
    assert json.loads(listed.stdout) == []  # nothing half-imported is shown
    _verifies(data)
    small = tiny_disk.parent / "small.json"
    small.write_text(json.dumps({"messages": messages[:400]}))
    done = _vak(data, "import", str(small), "--json")
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["session"]
    filler = _fill(tiny_disk, leave=0)
    with open(tiny_disk / "export.json", "w") as out:
        exported = _vak(data, "export", session, stdout=out.fileno())
    _one_line_naming_the_disk(exported)
    filler.unlink()


@pytest.mark.timeout(60)
def test_saving_the_settings_on_a_full_disk_is_one_line_and_keeps_the_old_file(
    tiny_disk: Path,
) -> None:
    path = tiny_disk / "settings.toml"
    save_settings(Settings(workspace=("/tmp",)), path)
    before = path.read_bytes()
    _fill(tiny_disk)
    with pytest.raises(SettingsError) as caught:
        save_settings(Settings(workspace=tuple(f"/tmp/{i}" * 40 for i in range(2000))), path)
    assert "the disk is full" in str(caught.value) and "\n" not in str(caught.value)
    assert path.read_bytes() == before
    assert load_settings(path).workspace == ("/tmp",)
    assert not (tiny_disk / "settings.toml.tmp").exists()
