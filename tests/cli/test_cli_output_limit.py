"""`vak chat` says when an answer stopped at the output limit (issue #17 item 6): one line on
stderr (a `notice` event with --json), and the next turn is sent a larger `num_predict`."""

from __future__ import annotations

import re

import pytest

from tests.cli.test_cli import lines, vak
from tests.doubles.fixtures import TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.turn.test_output_limit import LONG


def test_a_cut_answer_gets_a_notice_line_and_the_next_turn_more_room(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    double.enqueue(Reply(text=LONG))
    code, out, err = vak(capsys, "chat", TOOL_MODEL, "tell me everything", "--host", double.url)
    assert code == 0 and out.startswith("A long answer") and len(out) < len(LONG)
    notice = [line for line in err.splitlines() if line.startswith("! ")]
    assert notice == [
        "! the answer stopped at the 512-token output limit (the next answer may run to 1,024 "
        'tokens); say "continue" to go on'
    ]
    session = re.findall(r"· session (\w+) ·", err)[0]
    double.enqueue(Reply(text="…and the rest."))
    argv = ["chat", TOOL_MODEL, "continue", "--session", session, "--json", "--host", double.url]
    code, out, _ = vak(capsys, *argv)
    assert code == 0 and not [e for e in lines(out) if e["event"] == "notice"]
    assert double.chat_bodies()[-1]["options"]["num_predict"] == 1_024


def test_with_json_the_cut_is_a_notice_event_before_done(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    double.enqueue(Reply(text=LONG))
    code, out, _ = vak(capsys, "chat", TOOL_MODEL, "tell me", "--json", "--host", double.url)
    events = [e for e in lines(out) if e["event"] != "text"]
    assert code == 0 and [e["event"] for e in events] == ["notice", "done"]
    assert "512-token output limit" in events[0]["message"]
