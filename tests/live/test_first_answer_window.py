"""The first window without Ollama, with the real engine: the catalogue downloads the real test
model from a loopback server, the verified file starts on the bundled llama.cpp engine
(xllamacpp), and the first chat turn gets a real answer. Saves screenshots of the download
under way and of the first answer (first_run_downloading_real.png, first_answer_real.png).
Needs the `embedded` extra; starts one llama.cpp server for under a minute or two."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.file_server import FileServer
from tests.doubles.keyring import MemoryKeyring
from tests.ui.harness import SCREENSHOTS, until
from tests.ui.test_providers import closed_port, open_window
from vak_desktop.runtime.providers.catalogue import load_catalogue
from vak_desktop.runtime.providers.embedded import engine_available
from vak_desktop.runtime.settings import Settings

KEY = "qwen2.5-coder-0.5b-instruct-q4_k_m"


@pytest.mark.timeout(300)
@pytest.mark.skipif(not engine_available(), reason="needs the embedded extra (xllamacpp)")
async def test_first_window_downloads_the_model_and_answers_on_the_real_engine(
    model_path: Path, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    (entry,) = [e for e in load_catalogue() if e.key == KEY]
    # ~12 s on loopback, so the window can be seen mid-download
    with FileServer(model_path, name=model_path.name, delay_per_chunk=0.0015) as files:
        async with open_window(qtbot, tmp_path, closed_port(), Settings()) as app:
            downloads = app.window.tools.downloads
            downloads.entries = (dataclasses.replace(entry, url=files.url),)
            downloads.directory = tmp_path / "models"
            panel = app.window.tools.onboarding.catalogue
            panel.show_entries()
            panel.select(KEY)
            panel.download_button.click()
            await until(lambda: panel.bar.value() > 300, what="a third downloaded", within=60)
            SCREENSHOTS.mkdir(exist_ok=True)
            assert app.window.grab().save(str(SCREENSHOTS / "first_run_downloading_real.png"))
            await until(lambda: app.service.binding is not None, what="the engine", within=150)
            assert (tmp_path / "models" / entry.filename).is_file()
            assert app.service.send("Say hello to a new user in one short sentence.")
            await until(lambda: bool(app.finished), what="the first answer", within=120)
            assert app.finished[-1].outcome == "completed"
            await asyncio.sleep(0.2)  # the answer's last paint
            text = app.window.chat.toPlainText()
            assert len(text.strip()) > 10, text
            assert app.window.grab().save(str(SCREENSHOTS / "first_answer_real.png"))
