"""The window's providers: every configured provider in the picker, a session moving from the
Ollama double to the OpenAI double mid-conversation, a provider without a key shown as such,
and Tools → "Run a GGUF file…" starting the embedded engine in the background.

The engine's start is injected where a real one would need a model file this machine does not
have (`make test-live` runs the real engine): the injected start serves the file's model from
the loopback OpenAI double, which speaks what llama.cpp's server speaks (`/props` included).
The "not a GGUF" refusal goes through the real `start_engine`.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import keyring
import pytest
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.doubles.openai_server import OpenAIDouble
from tests.runtime.test_shared_services import MemoryKeyring
from tests.shots import shots_dir
from tests.ui.harness import until
from tests.ui.test_request_matches import every_step_matches
from vak_desktop.context.payloads import Directive, Receipt
from vak_desktop.ledger import Ledger
from vak_desktop.providers import OpenAICompatibleProvider, open_provider
from vak_desktop.runtime.providers.choices import ModelChoice
from vak_desktop.runtime.providers.embedded import EngineConfig
from vak_desktop.runtime.providers.secrets import store_api_key
from vak_desktop.runtime.settings import HostedProvider, Settings
from vak_desktop.ui import ChatService, MainWindow
from vak_desktop.ui.models.providers_controller import ProvidersController
from vak_desktop.ui.settings.settings_controller import SettingsController

SHOTS = shots_dir("shots_provwin")
KEY = "sk-test-provwin-0123456789"
HOSTED_MODEL = "gpt-4o-mini"
FIRST = "Tell me about sourdough starter hydration"
FIRST_ANSWER = "Keep the starter at one to one flour and water by weight."


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def _shots() -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture
def hosted() -> Iterator[OpenAIDouble]:
    with OpenAIDouble(models=(HOSTED_MODEL, "gpt-4o"), api_key=KEY) as server:
        yield server


def closed_port() -> str:
    """An address nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@dataclass
class Window:
    service: ChatService
    window: MainWindow
    providers: ProvidersController
    settings: SettingsController
    ledger: Ledger
    finished: list[Any] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    async def send(self, text: str) -> Any:
        before = len(self.finished)
        assert self.service.send(text)
        await until(lambda: len(self.finished) > before, what=f"the turn {text!r} to finish")
        return self.finished[-1]


@asynccontextmanager
async def open_window(
    qtbot: Any,
    tmp_path: Path,
    ollama: OllamaDouble | str,
    settings: Settings,
    start: Any = None,
) -> AsyncIterator[Window]:
    """The app's wiring (`vak_desktop.app.run_window`) over temporary files and the doubles."""
    controller = SettingsController(tmp_path / "settings.toml")
    controller.save(settings)
    ledger = Ledger.open(tmp_path / "ledger.db")
    try:
        async with httpx.AsyncClient() as client:
            host = ollama if isinstance(ollama, str) else ollama.url
            service = ChatService(ledger, open_provider("ollama", client, host))
            options = {"start": start} if start is not None else {}
            providers = ProvidersController(service, controller, client, **options)
            window = MainWindow(service, ledger, settings=controller)
            providers.attach(window)
            qtbot.addWidget(window)
            window.show()
            await service.refresh_models()
            held = Window(service, window, providers, controller, ledger)
            service.turnFinished.connect(held.finished.append)
            service.turnRefused.connect(held.refused.append)
            try:
                yield held
            finally:
                await providers.aclose()
                await window.tools.aclose()
                await service.aclose()
    finally:
        ledger.close()


def chat_bodies(server: OpenAIDouble) -> list[dict[str, Any]]:
    return [b for m, p, _h, b in server.requests if (m, p) == ("POST", "/v1/chat/completions")]


def texts(body: dict[str, Any]) -> str:
    """Every message's text in an OpenAI request body, joined."""
    parts = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            parts += [c.get("text", "") for c in content if isinstance(c, dict)]
        elif content:
            parts.append(str(content))
    return "\n".join(parts)


async def test_the_picker_lists_every_provider_and_says_which_cannot_answer(
    double: OllamaDouble,
    hosted: OpenAIDouble,
    qtbot: Any,
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
) -> None:
    store_api_key("gpt", KEY)
    nowhere = closed_port()
    settings = Settings(
        providers=(
            HostedProvider("gpt", "openai", hosted.url),
            HostedProvider("claude", "anthropic"),  # no key stored
            HostedProvider("lan", "openai-compatible", nowhere),
        )
    )
    async with open_window(qtbot, tmp_path, double, settings) as app:
        picker = app.window.picker
        assert picker.lines() == [
            "Ollama — llama3.2:latest",
            "Ollama — qwen2.5:0.5b",
            f"gpt (openai) — {HOSTED_MODEL}",
            "gpt (openai) — gpt-4o",
            "claude (anthropic) — needs an API key (Tools → Settings → Providers)",
            f"lan (openai-compatible) — not reachable at {nowhere}",
        ]
        assert picker.choices() == [
            ModelChoice("Ollama", "llama3.2:latest"),
            ModelChoice("Ollama", "qwen2.5:0.5b"),
            ModelChoice("gpt", HOSTED_MODEL),
            ModelChoice("gpt", "gpt-4o"),
        ]
        # the key went only into the hosted double's header; the keyless entry sent nothing
        (listing,) = [r for r in hosted.requests if r[1] == "/v1/models"]
        assert listing[2]["authorization"] == f"Bearer {KEY}"
        lines = {picker.combo.itemText(i): i for i in range(picker.combo.count())}
        claude = picker.items.item(lines[picker.lines()[4]])
        assert not claude.isEnabled()
        assert "no API key is stored for provider 'claude'" in claude.toolTip()
        assert app.service.model == "llama3.2:latest"  # the first model, Ollama's
        assert app.service.reachability.state == "reachable"

        # the keyless provider breaks nothing: a turn on the hosted model runs
        picker.choose(ModelChoice("gpt", HOSTED_MODEL))
        await until(lambda: app.service.binding is not None, what="the hosted binding")
        assert (await app.send("Hello there")).outcome == "completed"
        assert "Hello from the double." in app.window.chat.toPlainText()

        picker.combo.showPopup()
        await asyncio.sleep(0.05)
        popup = picker.combo.view().window()
        assert popup.grab().save(str(SHOTS / "picker_popup.png"))
        picker.combo.hidePopup()
        assert app.window.grab().save(str(SHOTS / "window_two_providers.png"))


async def test_a_session_started_on_ollama_continues_on_the_hosted_model(
    double: OllamaDouble,
    hosted: OpenAIDouble,
    qtbot: Any,
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
) -> None:
    store_api_key("gpt", KEY)
    settings = Settings(providers=(HostedProvider("gpt", "openai", hosted.url),))
    async with open_window(qtbot, tmp_path, double, settings) as app:
        app.window.picker.choose(ModelChoice("Ollama", "qwen2.5:0.5b"))
        await until(lambda: app.service.binding is not None, what="the Ollama binding")
        double.enqueue(Reply(text=FIRST_ANSWER))
        assert (await app.send(FIRST)).outcome == "completed"
        assert chat_bodies(hosted) == []

        app.window.picker.choose(ModelChoice("gpt", HOSTED_MODEL))
        await until(
            lambda: app.service.binding is not None and app.service.binding.provider == "openai",
            what="the hosted binding",
        )
        second = await app.send("And how warm should the kitchen be?")
        assert second.outcome == "completed"
        assert second.session == app.finished[0].session  # the same session, another provider

        # the second turn went to the OpenAI double, its history re-projected from the ledger
        (body,) = chat_bodies(hosted)
        assert body["model"] == HOSTED_MODEL
        sent = texts(body)
        assert FIRST in sent and FIRST_ANSWER in sent
        assert "And how warm should the kitchen be?" in sent
        assert sent.index(FIRST) < sent.index("And how warm")
        ollama_chats = [r for r in double.requests if r[1] == "/api/chat"]
        assert all("And how warm" not in str(r[2]) for r in ollama_chats)

        chain = app.ledger.chain_to_root(second.session)
        directives = [e.payload for e in chain if isinstance(e.payload, Directive)]
        receipts = [e.payload for e in chain if isinstance(e.payload, Receipt)]
        assert [(d.provider, d.model) for d in directives] == [
            ("ollama", "qwen2.5:0.5b"),
            ("openai", HOSTED_MODEL),
        ]
        assert [(r.provider, r.model) for r in receipts] == [
            ("ollama", "qwen2.5:0.5b"),
            ("openai", HOSTED_MODEL),
        ]
        # the Request tab rebuilds both turns, each as its own provider was sent it (#25 item 1)
        assert every_step_matches(app.window, second.session) == 2


async def test_a_turn_on_a_provider_without_a_key_is_refused_and_says_where_to_set_it(
    double: OllamaDouble, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    settings = Settings(providers=(HostedProvider("gpt", "openai", closed_port()),))
    async with open_window(qtbot, tmp_path, double, settings) as app:
        assert app.window.picker.lines()[-1] == (
            "gpt (openai) — needs an API key (Tools → Settings → Providers)"
        )
        # a model of it, as a session that last used it would ask for it
        app.service.select_model(ModelChoice("gpt", HOSTED_MODEL))
        assert app.service.send("Hello?")  # accepted, then refused before any request
        await until(lambda: app.refused, what="the refusal")
        assert "no API key is stored for provider 'gpt'" in app.refused[-1]
        assert "Settings → Providers" in app.refused[-1]

        # the key is typed in the settings: the entry is opened again and lists its models
        with OpenAIDouble(models=(HOSTED_MODEL,), api_key=KEY) as server:
            store_api_key("gpt", KEY)
            app.settings.save(
                app.settings.settings.replace(
                    providers=(HostedProvider("gpt", "openai", server.url),)
                )
            )
            await until(
                lambda: f"gpt (openai) — {HOSTED_MODEL}" in app.window.picker.lines(),
                what="the keyed provider's models",
            )


async def test_with_ollama_down_the_hosted_models_stay_usable(
    hosted: OpenAIDouble, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store_api_key("gpt", KEY)
    nowhere = closed_port()
    settings = Settings(providers=(HostedProvider("gpt", "openai", hosted.url),))
    async with open_window(qtbot, tmp_path, nowhere, settings) as app:
        assert app.window.picker.lines() == [
            f"Ollama — not reachable at {nowhere}",
            f"gpt (openai) — {HOSTED_MODEL}",
            "gpt (openai) — gpt-4o",
        ]
        assert app.service.reachability.unreachable  # the banner says what to do about Ollama
        assert app.service.choice == ModelChoice("gpt", HOSTED_MODEL)
        await until(lambda: app.service.binding is not None, what="the hosted binding")
        assert (await app.send("Are you there?")).outcome == "completed"


# -- the embedded engine --------------------------------------------------------------------


@dataclass
class LoopbackEngine:
    """What `start_engine` returns, serving the file's model from the OpenAI double."""

    config: EngineConfig
    url: str
    stopped: bool = False

    @property
    def model(self) -> str:
        return self.config.model_path.stem

    def provider(self, client: httpx.AsyncClient) -> OpenAICompatibleProvider:
        return OpenAICompatibleProvider(client, self.url)

    async def stop(self) -> int:
        self.stopped = True
        return 0


@dataclass
class InjectedStart:
    """The engine start, held until the test lets it finish (as loading a model takes time)."""

    url: str
    release: asyncio.Event = field(default_factory=asyncio.Event)
    engines: list[LoopbackEngine] = field(default_factory=list)

    async def __call__(self, config: EngineConfig) -> LoopbackEngine:
        await self.release.wait()
        engine = LoopbackEngine(config, self.url)
        self.engines.append(engine)
        return engine


def gguf_file(tmp_path: Path, name: str = "qwen2.5-coder-0.5b-q4_k_m.gguf") -> Path:
    path = tmp_path / "models" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"GGUF" + bytes(60))
    return path


async def test_run_a_gguf_file_starts_the_engine_in_the_background_and_offers_its_model(
    double: OllamaDouble, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = gguf_file(tmp_path)
    with OpenAIDouble(models=(path.stem,), props_n_ctx=8192) as engine_double:
        start = InjectedStart(engine_double.url)
        async with open_window(qtbot, tmp_path, double, Settings(), start) as app:
            assert app.providers.run_action is not None
            tools_menu = app.providers.run_action.associatedObjects()
            assert any(getattr(m, "title", lambda: "")() == "&Tools" for m in tools_menu)
            app.providers.run_action.trigger()
            dialog = app.providers.dialog
            assert dialog is not None and dialog.isVisible()
            dialog.selectFile(str(path))
            dialog.accept()

            # starting: the window keeps running, the picker says so, the model is selected
            await until(
                lambda: (
                    f"llama.cpp (embedded) — {path.stem} (starting…)" in app.window.picker.lines()
                ),
                what="the picker to show the engine starting",
            )
            assert app.service.choice == ModelChoice("llama.cpp", path.stem)
            combo = app.window.picker.combo
            assert combo.currentText() == f"llama.cpp (embedded) — {path.stem} (starting…)"
            assert app.window.grab().save(str(SHOTS / "engine_starting.png"))
            assert app.window.picker.choices()[:2] == [
                ModelChoice("Ollama", "llama3.2:latest"),
                ModelChoice("Ollama", "qwen2.5:0.5b"),
            ]
            # not QApplication.processEvents(): run from inside a task, it lets qasync step another
            # task re-entrantly; asyncio refuses that step and the task (here the engine start)
            # is never run again, so closing the window waited on it for ever (issue 13 item 14)
            await asyncio.sleep(0.01)
            start.release.set()
            await until(lambda: app.service.binding is not None, what="the engine's binding")
            assert f"llama.cpp (embedded) — {path.stem}" in app.window.picker.lines()
            assert app.settings.settings.embedded_model == str(path)  # remembered
            assert (await app.send("Hello, file model")).outcome == "completed"
            assert chat_bodies(engine_double)[-1]["model"] == path.stem
            (engine,) = start.engines
            assert engine.config.model_path == path
        assert engine.stopped  # the service stopped it as the window closed

        # next time: offered again, and started only when its model is picked
        later = InjectedStart(engine_double.url)
        later.release.set()
        remembered = Settings(embedded_model=str(path))
        async with open_window(qtbot, tmp_path / "again", double, remembered, later) as app:
            label = f"llama.cpp (embedded) — {path.stem} (starts when picked)"
            assert label in app.window.picker.lines()
            assert app.service.choice == ModelChoice("Ollama", "llama3.2:latest")
            assert later.engines == []
            app.window.picker.choose(ModelChoice("llama.cpp", path.stem))
            await until(lambda: app.service.binding is not None, what="the engine's binding")
            assert len(later.engines) == 1
        assert later.engines[0].stopped


async def test_a_file_that_is_not_gguf_is_refused_by_the_real_engine_start(
    double: OllamaDouble, qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    notes = tmp_path / "notes.gguf"
    notes.write_text("these are my notes, not a model\n", encoding="utf-8")
    async with open_window(qtbot, tmp_path, double, Settings()) as app:
        failures: list[str] = []
        app.providers.engineFailed.connect(failures.append)
        await app.providers.run_file(str(notes))
        (reason,) = failures
        assert "is not a GGUF model file" in reason and str(notes) in reason
        box = app.providers.error_box
        assert box is not None and box.isVisible() and "not a GGUF" in box.text()
        line = app.window.picker.lines()[-1]
        assert line == "llama.cpp (embedded) — could not start (see the tooltip)"
        assert app.settings.settings.embedded_model == ""  # nothing remembered
        assert app.service.choice is None or app.service.choice.provider == "llama.cpp"
        box.close()


def _closed_text_fits(combo: QComboBox) -> tuple[int, int]:
    """(the closed box's current text width, the width its edit field gives the text)."""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, combo
    )
    return combo.fontMetrics().horizontalAdvance(combo.currentText()), field.width()


async def test_the_closed_picker_shows_a_long_model_name_whole_beside_a_provider(
    double: OllamaDouble,
    hosted: OpenAIDouble,
    qtbot: Any,
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
) -> None:
    long_name = "qwen2.5-coder:1.5b-instruct-q4_K_M"
    double.add_model(long_name)
    store_api_key("gpt", KEY)
    settings = Settings(providers=(HostedProvider("gpt", "openai", hosted.url),))
    async with open_window(qtbot, tmp_path, double, settings) as app:
        picker = app.window.picker
        picker.choose(ModelChoice("Ollama", long_name))
        await asyncio.sleep(0.05)  # the layout settles
        assert picker.combo.currentText() == f"Ollama — {long_name}"
        text, room = _closed_text_fits(picker.combo)
        assert text <= room, f"the closed picker cuts {picker.combo.currentText()!r}"
        picker.choose(ModelChoice("gpt", HOSTED_MODEL))
        await asyncio.sleep(0.05)
        text, room = _closed_text_fits(picker.combo)
        assert text <= room, f"the closed picker cuts {picker.combo.currentText()!r}"
        app.window.grab().save(str(SHOTS / "picker_closed_long_name.png"))
