"""What a UI test holds: the service, the window over it and the ledger under it, and a way to
wait for the window to reach a state without blocking the loop that gets it there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vak_desktop.ledger import Ledger
from vak_desktop.providers import http_client, open_provider
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.ui import ChatService, MainWindow

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
MODELS = ("llama3.2", "qwen2.5:0.5b")  # what the `double` fixture serves


async def until(condition: Callable[[], Any], what: str, within: float = 5.0) -> None:
    """Let the loop run until `condition()` is true; fail after `within` seconds."""
    try:
        async with asyncio.timeout(within):
            while not condition():  # noqa: ASYNC110 (a widget's state has no event to await)
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"timed out after {within} s waiting for {what}") from None


@dataclass
class Harness:
    service: ChatService
    window: MainWindow
    ledger: Ledger
    finished: list[TurnFinished] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.service.turnFinished.connect(self.finished.append)

    def screenshot(self, name: str) -> Path:
        """Save the window as `screenshots/<name>.png` for a person to look at."""
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        assert self.window.grab().save(str(path)), f"could not write {path}"
        return path

    def chat_text(self) -> str:
        return self.window.chat.toPlainText()


@asynccontextmanager
async def open_harness(qtbot: Any, ledger_path: Path, host: str) -> AsyncIterator[Harness]:
    """The app's wiring (see `vak_desktop.app.run_window`) on a temp ledger and a given host,
    once the first model-list refresh has finished."""
    ledger = Ledger.open(ledger_path)
    try:
        async with http_client() as client:  # the app's own (`ui/shell/wiring.py`)
            service = ChatService(ledger, open_provider("ollama", client, host))
            window = MainWindow(service, ledger)
            qtbot.addWidget(window)
            window.show()
            await service.refresh_models()
            try:
                yield Harness(service, window, ledger)
            finally:  # as the app quits (`ui/shell/wiring.py`): the window's tasks end before
                # the client closes (a probe that ended as a test did refreshed the model list
                # on a closed client: "task probe-… failed", a fresh-clone make test)
                await window.tools.aclose()
                await service.aclose()
    finally:
        ledger.close()
