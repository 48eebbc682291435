"""Imports keep the time each turn was said, and say which turns had none (issue #22 item 2).

ChatGPT's `create_time`, Open WebUI's `timestamp`, the OpenAI shape's optional `timestamp`
(ISO-8601 or epoch seconds), or a dated header at the start of a message ("[1:56 pm on 8 May,
2023]", "Session 3 — 8 May 2023") become the turn's `said_at`; a turn without one takes the
latest time before it; its card and its passages show the day.
"""

from __future__ import annotations

from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.turn_cards import render_card
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.formats import read_conversations
from vak_desktop.runtime.sessions.formats.times import header_time, source_time
from vak_desktop.runtime.sessions.importing import import_all
from vak_desktop.runtime.sessions.interchange import export_openai, import_openai


def directives(ledger: Ledger, session: str) -> list[Directive]:
    return [t.directive for t in split_turns(ledger.chain_to_root(session))]


def test_dated_headers_date_their_session_and_the_report_names_the_undated() -> None:
    ledger = Ledger.open(":memory:")
    document = {
        "messages": [
            {"role": "user", "content": "hello before any date"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": "[1:56 pm on 8 May, 2023] Maya: I got a puppy!"},
            {"role": "assistant", "content": "Tom: What breed?"},
            {"role": "user", "content": "Maya: A border collie."},
            {"role": "assistant", "content": "Session 2 — 20 May 2023\nTom: How is the puppy?"},
            {"role": "user", "content": "Maya: Chewing everything."},
        ]
    }
    report = import_openai(ledger, document)
    said = [d.said_at for d in directives(ledger, report.session)]
    assert said[1:] == [
        "2023-05-08T13:56:00Z",
        "2023-05-08T13:56:00Z",
        "2023-05-20T00:00:00Z",
    ]
    assert said[0] == "" and report.untimed == (1,) and report.inherited == 2
    turn = split_turns(ledger.chain_to_root(report.session))[1]
    assert "Mon 8 May 2023" in render_card(turn.card, turn.number)  # type: ignore[arg-type]


def test_timestamps_of_each_format_are_kept() -> None:
    ledger = Ledger.open(":memory:")
    chatgpt = [
        {
            "title": "c",
            "current_node": "b",
            "mapping": {
                "a": {
                    "parent": None,
                    "message": {
                        "author": {"role": "user"},
                        "create_time": 1683554160.0,
                        "content": {"content_type": "text", "parts": ["hi"]},
                    },
                },
                "b": {
                    "parent": "a",
                    "message": {
                        "author": {"role": "assistant"},
                        "create_time": 1683554170.0,
                        "content": {"content_type": "text", "parts": ["hello"]},
                    },
                },
            },
        }
    ]
    webui = [
        {
            "chat": {
                "messages": [
                    {"role": "user", "content": "hi", "timestamp": 1684580000},
                    {"role": "assistant", "content": "hello", "timestamp": 1684580005},
                ]
            }
        }
    ]
    openai = {"messages": [{"role": "user", "content": "x", "timestamp": "2023-05-08T15:56+02:00"}]}
    for document, expected in (
        (chatgpt, "2023-05-08T13:56:00Z"),
        (webui, "2023-05-20T10:53:20Z"),
        ([openai], "2023-05-08T13:56:00Z"),
    ):
        report = import_all(ledger, read_conversations(document))
        (imported,) = report.imported
        assert directives(ledger, imported.session)[0].said_at == expected
        assert report.untimed == 0 and "had no time" not in report.summary()
        exported = export_openai(ledger, imported.session)
        assert exported["messages"][0]["timestamp"] == expected  # the time goes back out


def test_a_file_without_times_says_so() -> None:
    ledger = Ledger.open(":memory:")
    report = import_all(
        ledger, read_conversations({"messages": [{"role": "user", "content": "x"}]})
    )
    assert report.untimed == 1 and "1 turn had no time in the file" in report.summary()
    assert report.to_json()["untimed_turns"] == {report.imported[0].session: [1]}


def test_a_date_in_a_sentence_is_not_a_header_and_bad_times_lose_only_the_time() -> None:
    assert header_time("I fly to Paris on 8 May 2023 with my sister and her kids") == ""
    assert header_time("[12:05 am on 31 February, 2023] x") == ""
    assert header_time("DATE: May 8, 2023") == "2023-05-08T00:00:00Z"
    assert header_time("[12:30 am on 1 Jan, 2024] x") == "2024-01-01T00:30:00Z"
    for bad in (True, None, "soon", float("nan"), -5, [1]):
        assert source_time(bad) == ""
    assert source_time(1683554160000) == "2023-05-08T13:56:00Z"  # milliseconds
    # a transcript's session time as written ("1:56 pm on 8 May, 2023") works as a timestamp
    assert source_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
