"""Cards through the `vak` command (shared/design/cli.md): `vak chat --json` announces every
card a turn writes, by an emit call or a ```vak fence, and `vak show` lists them per turn."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import lines, open_ledger, vak
from tests.doubles.fixtures import PLAIN_MODEL, TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from vak_desktop.context.payloads import Presentation
from vak_desktop.context.presentations.digest import payload_digest

CARD = {"title": "Compiler release", "value": "incremental linking", "source": "example.org"}
ASK = "Show what the compiler release added as a metric card."


def test_chat_json_announces_a_card_an_emit_call_wrote_and_show_lists_it(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    double.enqueue(
        Reply(tool_calls=[("emit_metric_card", CARD)]),
        Reply(tool_calls=[("emit_metric_card", CARD)]),  # a repeat writes nothing: no event
        Reply(text="The card above shows it."),
    )
    code, out, _ = vak(capsys, "chat", TOOL_MODEL, ASK, "--json", "--host", double.url)
    assert code == 0
    events = lines(out)
    cards = [e for e in events if e["event"] == "card"]
    assert len(cards) == 1
    (card,) = cards
    assert card["type"] == "metric" and card["title"] == "Compiler release"
    kinds = [e["event"] for e in events]
    assert kinds.index("card") > kinds.index("tool_result")  # announced once it is written
    session = events[-1]["session"]
    store = open_ledger(tmp_path)  # type: ignore[arg-type]
    entry = store.entry(card["presentation"])
    assert isinstance(entry.payload, Presentation) and entry.session == session
    store.close()

    code, out, _ = vak(capsys, "show", session, "--json")
    assert code == 0
    (turn,) = json.loads(out)["turns"]
    assert turn["presentations"] == [
        {
            "id": card["presentation"],
            "type": "metric",
            "title": "Compiler release",
            "payload_digest": payload_digest(CARD),
        }
    ]
    code, out, _ = vak(capsys, "show", session)
    answer_then_card = out.split("The card above shows it.", 1)[1]
    assert f"▣ metric card: Compiler release [{card['presentation']}]" in answer_then_card


def test_a_fence_card_is_announced_in_json_and_on_stderr(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    fence = "```vak\n" + json.dumps({"type": "metric", **CARD}) + "\n```\n"
    double.enqueue(Reply(text="Here it is.\n\n" + fence))
    code, out, _ = vak(capsys, "chat", PLAIN_MODEL, ASK, "--json", "--host", double.url)
    assert code == 0
    (card,) = [e for e in lines(out) if e["event"] == "card"]
    assert card["type"] == "metric" and card["title"] == "Compiler release"

    double.enqueue(Reply(text="Again.\n\n" + fence))
    session = lines(out)[-1]["session"]
    code, out, err = vak(
        capsys, "chat", PLAIN_MODEL, "And once more, as a metric card.", "--session", session,
        "--host", double.url,
    )  # fmt: skip
    assert code == 0
    (line,) = [ln for ln in err.splitlines() if ln.startswith("▣")]
    assert line.startswith("▣ metric card: Compiler release [b3:") and line.endswith("]")
    _, out, _ = vak(capsys, "show", session, "--json")
    turns = json.loads(out)["turns"]
    assert [len(t["presentations"]) for t in turns] == [1, 1]
    assert turns[0]["presentations"][0]["id"] == card["presentation"]
    assert turns[1]["presentations"][0]["id"] != card["presentation"]  # a card per turn


def test_a_turn_without_cards_shows_an_empty_list(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    double.enqueue(Reply(text="Plain words."))
    _, out, _ = vak(capsys, "chat", TOOL_MODEL, "hello", "--json", "--host", double.url)
    assert not [e for e in lines(out) if e["event"] == "card"]
    _, out, _ = vak(capsys, "show", lines(out)[-1]["session"], "--json")
    assert json.loads(out)["turns"][0]["presentations"] == []
