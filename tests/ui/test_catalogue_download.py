"""The first window without Ollama, end to end: it offers the model catalogue, Download fetches
the file from a real loopback server with progress, speed and time left, the verified file
starts on the embedded engine (an injected start serving it from the OpenAI double, as in
test_providers.py) and a chat turn completes on it. Also: Cancel keeps the part and Download
resumes it; a bad checksum shows one line and starts nothing; a full disk is refused before a
byte is written; the model manager shows the catalogue beside Ollama's models."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.file_server import FileServer, write_gguf
from tests.doubles.keyring import MemoryKeyring
from tests.doubles.openai_server import OpenAIDouble
from tests.ui.harness import SCREENSHOTS, until
from tests.ui.test_providers import InjectedStart, closed_port, open_window
from vak_desktop.runtime.providers.catalogue import CatalogueEntry
from vak_desktop.runtime.providers.choices import ModelChoice
from vak_desktop.runtime.providers.downloads import partial_size
from vak_desktop.runtime.providers.embedded import EmbeddedEngineError, EngineConfig
from vak_desktop.runtime.settings import Settings
from vak_desktop.ui.models.downloads_controller import CANCELLED, FAILED, SUCCEEDED

SIZE = 4 * 1024 * 1024 + 77
KEY = "qwen2.5-coder-0.5b-instruct-q4_k_m"


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()  # free earlier tests' Qt garbage on this thread (see test_model_manager.py)


@pytest.fixture
def model(tmp_path: Path) -> bytes:
    (tmp_path / "source").mkdir()
    return write_gguf(tmp_path / "source" / "m.gguf", SIZE).read_bytes()


def _entry(data: bytes, url: str) -> CatalogueEntry:
    return CatalogueEntry(
        key=KEY,
        name="Qwen2.5 Coder 0.5B Instruct",
        family="Qwen2.5 Coder",
        parameters="0.5B",
        quantisation="Q4_K_M",
        size=len(data),
        ram_gb=1.0,
        licence="Apache-2.0",
        url=url,
        sha256=hashlib.sha256(data).hexdigest(),
        note="Smallest and fastest",
        suggested=True,
    )


def _serve_catalogue(app: Any, entry: CatalogueEntry, directory: Path) -> Any:
    """Point the window's catalogue at the loopback server and a temporary models folder."""
    downloads = app.window.tools.downloads
    downloads.entries = (entry,)
    downloads.directory = directory
    panel = app.window.tools.onboarding.catalogue
    panel.show_entries()
    panel.select(entry.key)
    return panel


async def test_first_window_without_ollama_downloads_a_model_and_chats_on_the_engine(
    model: bytes, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    finished: list[tuple[str, str, str]] = []
    with (
        FileServer(model, delay_per_chunk=0.02) as files,
        OpenAIDouble(models=(KEY,), props_n_ctx=8192) as engine_double,
    ):
        start = InjectedStart(engine_double.url)
        start.release.set()
        async with open_window(qtbot, tmp_path, closed_port(), Settings(), start) as app:
            onboarding = app.window.tools.onboarding
            app.window.tools.downloads.finished.connect(lambda *a: finished.append(a))
            await until(lambda: onboarding.isVisible(), what="the first-run panel")
            assert onboarding.catalogue.isVisible() and not app.window.banner.isVisible()
            assert len(onboarding.catalogue.controller.entries) >= 10  # the shipped catalogue
            SCREENSHOTS.mkdir(exist_ok=True)
            assert app.window.grab().save(str(SCREENSHOTS / "first_run_no_ollama.png"))
            panel = _serve_catalogue(app, _entry(model, files.url), tmp_path / "models")

            panel.download_button.click()
            await until(lambda: 0 < panel.bar.value() < 1000, what="the download under way")
            await until(lambda: "MB/s" in panel.status.text(), what="a speed and time left")
            assert "left" in panel.status.text() and panel.cancel_button.isVisible()
            assert app.window.grab().save(str(SCREENSHOTS / "first_run_downloading.png"))

            await until(lambda: bool(finished), what="the download to finish", within=20)
            assert finished[0][:2] == (KEY, SUCCEEDED)
            final = tmp_path / "models" / f"{KEY}.gguf"
            assert final.read_bytes() == model and finished[0][2] == str(final)
            assert panel.values == sorted(panel.values) and panel.values[-1] == 1000

            # the verified file starts on the embedded engine and is the chat's model
            await until(lambda: app.service.binding is not None, what="the engine's binding")
            (engine,) = start.engines
            assert engine.config.model_path == final
            assert app.service.choice == ModelChoice("llama.cpp", KEY)
            assert not onboarding.isVisible()
            assert app.settings.settings.embedded_model == str(final)
            assert (await app.send("Hello, downloaded model")).outcome == "completed"
            assert app.window.grab().save(str(SCREENSHOTS / "first_run_first_answer.png"))


async def test_cancel_keeps_the_part_and_download_again_resumes_it(
    model: bytes, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    finished: list[tuple[str, str, str]] = []
    with FileServer(model, delay_per_chunk=0.02) as files:
        start = InjectedStart("http://127.0.0.1:9")  # never released: nothing starts here
        async with open_window(qtbot, tmp_path, closed_port(), Settings(), start) as app:
            downloads = app.window.tools.downloads
            downloads.finished.connect(lambda *a: finished.append(a))
            entry = _entry(model, files.url)
            panel = _serve_catalogue(app, entry, tmp_path / "models")
            panel.start()
            await until(lambda: downloads.partial(entry) > 1_000_000, what="a megabyte")
            panel.cancel_button.click()
            await until(lambda: bool(finished), what="the cancel")
            assert finished[0][1] == CANCELLED and "resume" in panel.status.text()
            have = partial_size(entry, tmp_path / "models")
            assert have > 0 and "(resumes)" in panel.table.item(0, 6).text()
            panel.start()
            await until(lambda: len(finished) == 2, what="the resumed download", within=20)
            assert finished[1][1] == SUCCEEDED
            assert files.ranges[-1] == f"bytes={have}-"
            assert (tmp_path / "models" / f"{KEY}.gguf").read_bytes() == model
            await asyncio.sleep(0)


@pytest.mark.allow_log_warnings  # the engine's refusal is logged
async def test_a_model_that_does_not_start_brings_the_catalogue_back_saying_why(
    model: bytes, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    async def refuse(config: EngineConfig) -> Any:
        raise EmbeddedEngineError("the embedded engine needs the xllamacpp package")

    with FileServer(model) as files:
        async with open_window(qtbot, tmp_path, closed_port(), Settings(), refuse) as app:
            onboarding = app.window.tools.onboarding
            await until(lambda: onboarding.isVisible(), what="the first-run panel")
            panel = _serve_catalogue(app, _entry(model, files.url), tmp_path / "models")
            panel.start()
            await until(
                lambda: "did not start" in panel.status.text(), what="the refusal", within=20
            )
            assert "xllamacpp" in panel.status.text() and onboarding.isVisible()
            assert panel.download_button.text() == "Start"  # downloaded: try again or pick
            box = app.providers.error_box
            assert box is not None
            box.close()


async def test_a_bad_checksum_says_so_in_one_line_and_starts_nothing(
    model: bytes, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    finished: list[tuple[str, str, str]] = []
    wrong = bytes(reversed(model))
    with FileServer(model, body=wrong) as files:
        start = InjectedStart("http://127.0.0.1:9")
        start.release.set()
        async with open_window(qtbot, tmp_path, closed_port(), Settings(), start) as app:
            app.window.tools.downloads.finished.connect(lambda *a: finished.append(a))
            panel = _serve_catalogue(app, _entry(model, files.url), tmp_path / "models")
            panel.start()
            await until(lambda: bool(finished), what="the download to fail", within=20)
            assert finished[0][1] == FAILED
            assert "not the published file" in panel.error.text() and panel.error.isVisible()
            assert "\n" not in panel.error.text()
            assert list((tmp_path / "models").glob("*.gguf")) == [] and start.engines == []
            assert panel.download_button.text() == "Download"


async def test_a_full_disk_is_refused_before_the_download_starts(
    model: bytes, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    finished: list[tuple[str, str, str]] = []
    with FileServer(model) as files:
        async with open_window(qtbot, tmp_path, closed_port(), Settings()) as app:
            downloads = app.window.tools.downloads
            downloads.free_space = lambda _path: 10_000_000  # a nearly full disk
            downloads.finished.connect(lambda *a: finished.append(a))
            panel = _serve_catalogue(app, _entry(model, files.url), tmp_path / "models")
            panel.start()
            await until(lambda: bool(finished), what="the refusal")
            assert finished[0][1] == FAILED and "free" in panel.error.text()
            assert files.ranges == [] and list((tmp_path / "models").glob("*.gguf")) == []


async def test_the_model_manager_shows_the_catalogue_beside_ollama(
    model: bytes, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    async with open_window(qtbot, tmp_path, closed_port(), Settings()) as app:
        downloads = app.window.tools.downloads
        entry = _entry(model, "http://127.0.0.1:9/x.gguf")
        big = dataclasses.replace(entry, key="other", name="Other", ram_gb=6.0)
        downloads.entries = (entry, big)
        downloads.memory = 4_000_000_000  # a 4 GB laptop
        downloads.directory = tmp_path / "models"
        (tmp_path / "models").mkdir()
        (tmp_path / "models" / f"{KEY}.gguf").write_bytes(model)  # already downloaded
        manager = app.window.tools.open_models()
        assert manager.catalogue is not None
        assert [manager.tabs.tabText(i) for i in range(manager.tabs.count())] == [
            "Ollama",
            "Built-in engine",
        ]
        manager.tabs.setCurrentIndex(1)
        manager.catalogue.show_entries()
        manager.catalogue.select(KEY)
        assert manager.catalogue.table.item(0, 6).text() == "✓ downloaded"
        assert manager.catalogue.download_button.text() == "Start"
        assert "more than" not in manager.catalogue.about.text()
        manager.catalogue.select("other")
        assert "more than this computer's 4 GB" in manager.catalogue.about.text()
        assert manager.catalogue.download_button.text() == "Download"
        manager.catalogue.select(KEY)
        assert manager.grab().save(str(SCREENSHOTS / "model_manager_catalogue.png"))
        assert manager.catalogue.delete_button.isVisible()
        box = manager.catalogue.ask_delete()
        assert box is not None and "Delete the downloaded" in box.text()
        (delete,) = [b for b in box.buttons() if b.text() == "Delete"]
        delete.click()
        assert not (tmp_path / "models" / f"{KEY}.gguf").exists()
        assert manager.catalogue.table.item(0, 6).text() == ""
        assert manager.catalogue.download_button.text() == "Download"
        assert not manager.catalogue.delete_button.isVisible()
        manager.close()
