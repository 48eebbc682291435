"""A pause in typing warms the model's cache (`runtime/turn/warm.py`): the window sends the next
request, its tail too, while the user types, and the turn sent on Enter carries exactly those
messages (the tail's clock line may have turned a minute). Against the loopback Ollama double,
in the real window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import open_harness, until
from vak_desktop.ui.chat.composer import WARM_AFTER_MS


def _warm_bodies(double: OllamaDouble) -> list[dict[str, Any]]:
    return [b for b in double.chat_bodies() if b.get("options", {}).get("num_predict") == 1]


async def test_a_pause_in_typing_sends_the_next_request(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        window.picker.choose("qwen2.5:0.5b")
        await until(lambda: service.binding is not None, what="the model binding")
        qtbot.keyClicks(window.composer.input, "Note for later: the shipment code is ZX-4471-Q.")
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)  # Enter at once: no warm
        await until(lambda: harness.finished, what="the first turn")
        assert _warm_bodies(double) == []

        ask = "Search my files for the shipment code I gave you earlier."
        qtbot.keyClicks(window.composer.input, ask)
        await until(
            lambda: _warm_bodies(double), what="the warm request", within=WARM_AFTER_MS / 1000 + 5
        )
        (warm,) = _warm_bodies(double)
        assert service.ledger.chain_to_root(service.session or "")[-1].kind != "directive"
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        await until(lambda: len(harness.finished) == 2, what="the second turn")
        bodies = double.chat_bodies()
        turn = bodies[bodies.index(warm) + 1]  # the turn's first request
    assert turn["messages"][-1]["content"].endswith(ask)
    assert turn["messages"][:-1] == warm["messages"][:-1]
    warm_tail, tail = (m["messages"][-1]["content"].splitlines() for m in (warm, turn))
    assert warm_tail[1:] == tail[1:]  # the draft sent as it stood: nothing left to prefill
    assert turn["options"]["num_ctx"] == warm["options"]["num_ctx"]
