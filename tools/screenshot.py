"""Screenshots of the window for a person to look at: `python tools/screenshot.py [--out DIR]`.

Starts the loopback Ollama double in this process, opens the real window on a temporary data
directory, runs one streamed turn (with a mid-stream shot) and one with thinking and a tool
call, opens a session whose turn never
closed, then stops the double and asks again so the "not reachable" banner shows. Writes
streaming.png, chat_streamed.png, thinking_and_tools.png, interrupted.png and ollama_down.png
(default: screenshots/).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the double lives in tests/, not in the installed package

import httpx  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.doubles.ollama_server import OllamaDouble, Reply  # noqa: E402
from vak_desktop.context.payloads import AssistantStep, Directive  # noqa: E402
from vak_desktop.ledger import LEDGER_FILENAME, Ledger  # noqa: E402
from vak_desktop.providers import open_provider  # noqa: E402
from vak_desktop.ui import ChatService, MainWindow, apply_theme  # noqa: E402
from vak_desktop.ui.event_loop import new_event_loop  # noqa: E402

MODEL = "llama3.2:latest"
THINKER = "qwen3:0.6b"
QUESTION = "How do I run a model locally with Ollama?"
ANSWER = """Here is the short version — it takes **three commands**:

1. Install Ollama from ollama.com and start the server with `ollama serve`.
2. Pull a model, for example `ollama pull llama3.2` (about 2 GB).
3. Pick it in the model list at the top of this window and ask away.

```sh
ollama serve &
ollama pull llama3.2
```

Everything stays on your machine: the conversation is kept in a local ledger, and nothing is
sent anywhere else."""


async def until(condition: Callable[[], Any], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 (a widget's state has no event to await)
            await asyncio.sleep(0.01)


def save(window: MainWindow, out: Path, name: str) -> None:
    path = out / f"{name}.png"
    window.grab().save(str(path))
    print(f"wrote {path}")


async def shoot(out: Path, data: Path) -> None:
    with OllamaDouble() as double:
        double.add_model(MODEL)
        double.add_model(THINKER, capabilities=("completion", "tools", "thinking"))
        double.enqueue(
            Reply(text=ANSWER, chunk_chars=6, delay_per_chunk=0.01),
            Reply(
                thinking="The user asks what an earlier tool returned. I should recall it.",
                tool_calls=[("recall", {"id": "b3:0123456789ab"})],
            ),
            Reply(text="I could not find that result: the id does not exist in this chat."),
        )
        ledger = Ledger.open(data / LEDGER_FILENAME)
        try:
            async with httpx.AsyncClient() as client:
                service = ChatService(ledger, open_provider("ollama", client, double.url))
                window = MainWindow(service)
                window.show()
                try:
                    await service.refresh_models()
                    await until(lambda: service.binding is not None)
                    finished: list[object] = []
                    service.turnFinished.connect(finished.append)

                    window.composer.input.setPlainText(QUESTION)
                    window.composer.send_button.click()
                    await until(lambda: "three commands" in window.chat.toPlainText())
                    save(window, out, "streaming")
                    await until(lambda: finished)
                    save(window, out, "chat_streamed")

                    window.picker.choose(THINKER)
                    window.composer.input.setPlainText("What did the tool say earlier?")
                    window.composer.send_button.click()
                    await until(lambda: len(finished) == 2)
                    save(window, out, "thinking_and_tools")

                    crashed = ledger.create_session().id
                    ledger.append(crashed, Directive(text="Write a long story", model=MODEL))
                    ledger.append(crashed, AssistantStep(text="Once upon a time, a", model=MODEL))
                    window.sessions.reload()
                    service.open_session(crashed)
                    save(window, out, "interrupted")

                    double.close()
                    await service.refresh_models()
                    save(window, out, "ollama_down")
                finally:
                    await service.aclose()
                    window.close()
        finally:
            ledger.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    apply_theme(app)
    with (
        tempfile.TemporaryDirectory() as data,
        asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner,
    ):
        runner.run(shoot(args.out, Path(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
