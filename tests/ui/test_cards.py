"""Native cards from Presentation entries in a real ledger: what each type shows, and the clicks
(👍 / 👎, dismiss, restore) that become ledger entries and survive a rebuild of the window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCharts import QChartView
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTableView

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import open_harness
from vak_desktop.context.payloads import (
    Presentation,
    PresentationFeedback,
    PresentationSelection,
)
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.runtime.presentations import CardState, presentation_states
from vak_desktop.ui import ChatService
from vak_desktop.ui.cards import card_widget
from vak_desktop.ui.cards.frame import CardFrame, DismissedStub
from vak_desktop.ui.cards.samples import SAMPLE_CARDS, write_card_turn
from vak_desktop.ui.chat.chat_view import ChatView


def _presentation(semantic_type: str, payload: dict[str, Any], title: str = "") -> Presentation:
    return Presentation(
        turn_id="b3:00",
        source={"fence": "b3:00"},
        semantic_type=semantic_type,
        skill_id="test",
        skill_version="1",
        schema_version=1,
        payload=payload,
        payload_digest="",
        title=title,
    )


def _labels(widget: Any) -> str:
    return "\n".join(label.text() for label in widget.findChildren(QLabel))


def _card(semantic_type: str, payload: dict[str, Any], title: str = "") -> CardFrame:
    widget = card_widget("b3:card", _presentation(semantic_type, payload, title))
    assert isinstance(widget, CardFrame)
    return widget


def _facts(ledger: Ledger, session: str) -> list[Any]:
    return [
        e.payload
        for e in ledger.entries(session)
        if isinstance(e.payload, (PresentationFeedback, PresentationSelection))
    ]


async def test_clicks_on_a_card_are_ledger_entries_and_a_dismissal_survives_a_rebuild(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        ledger, chat = harness.ledger, harness.window.chat
        session = write_card_turn(ledger)
        harness.window.sessions.reload()
        harness.service.open_session(session)
        cards = chat.cards()
        assert [c.kind.text() for c in cards] == [
            "METRIC", "TABLE", "CHART", "CHART", "ENTITY", "CHECKLIST", "TIMELINE", "RESEARCH"
        ]  # fmt: skip
        table = cards[1]
        table_id = table.presentation_id
        assert isinstance(ledger.entry(table_id).payload, Presentation)

        qtbot.mouseClick(table.up, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(table.up, Qt.MouseButton.LeftButton)  # taken back
        assert not table.up.isChecked()
        qtbot.mouseClick(table.down, Qt.MouseButton.LeftButton)
        assert table.down.isChecked() and not table.up.isChecked()
        qtbot.mouseClick(table.dismiss, Qt.MouseButton.LeftButton)
        assert _facts(ledger, session) == [
            PresentationFeedback(presentation=table_id, verdict="up"),
            PresentationFeedback(presentation=table_id, verdict="clear"),
            PresentationFeedback(presentation=table_id, verdict="down"),
            PresentationSelection(presentation=table_id, action="dismiss"),
        ]
        assert table_id not in [c.presentation_id for c in chat.cards()]
        (stub,) = chat.dismissed_cards()
        assert stub.presentation_id == table_id and "Models on this machine" in stub.label.text()
        harness.screenshot("chat_card_dismissed")

    # a new service and window over the same ledger file: the app after a restart
    async with open_harness(qtbot, ledger_path, double.url) as again:
        again.service.open_session(session)
        chat = again.window.chat
        assert table_id not in [c.presentation_id for c in chat.cards()]
        assert len(chat.cards()) == len(SAMPLE_CARDS) - 1
        (stub,) = chat.dismissed_cards()
        qtbot.mouseClick(stub.restore, Qt.MouseButton.LeftButton)
        restored = next(c for c in chat.cards() if c.presentation_id == table_id)
        assert restored.down.isChecked()  # the verdict given before it was dismissed
        assert chat.dismissed_cards() == []
        assert _facts(again.ledger, session)[-1] == PresentationSelection(table_id, "restore")
        assert again.service.presentation_states(session)[table_id] == CardState("down", False)


def test_the_latest_click_wins_and_other_sessions_do_not_leak(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "ledger.sqlite3")
    try:
        one = write_card_turn(ledger)
        two = write_card_turn(ledger)
        card = next(e.id for e in ledger.entries(one) if isinstance(e.payload, Presentation))
        for fact in (
            PresentationFeedback(card, "up"),
            PresentationSelection(card, "dismiss"),
            PresentationFeedback(card, "down"),
            PresentationSelection(card, "restore"),
            PresentationSelection(card, "select"),  # not a visibility change
        ):
            ledger.append(one, fact)
        states = presentation_states(ledger.entries(one))
        assert states.pop(card) == CardState("down", False)
        assert set(states.values()) == {CardState()}  # the turn's other cards: never clicked
        assert set(presentation_states(ledger.entries(two)).values()) == {CardState()}
    finally:
        ledger.close()


async def test_a_click_on_something_that_is_not_a_card_is_refused(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        session = write_card_turn(harness.ledger)
        directive = next(iter(harness.ledger.entries(session)))
        with pytest.raises(ValueError, match="not a card"):
            harness.service.rate_presentation(directive.id, "down")
        with pytest.raises(ValueError, match="dismiss"):
            harness.service.select_presentation(directive.id, "hide")
        assert _facts(harness.ledger, session) == []


def test_the_metric_card_shows_value_unit_delta_and_source() -> None:
    card = _card(
        "metric",
        {"label": "Prefill", "value": 1843.5, "unit": "tok/s", "delta": -12, "source": "probe"},
    )
    text = _labels(card)
    assert "1,843.5" in text and "tok/s" in text and "▼ -12" in text and "source: probe" in text
    bare = _labels(_card("metric", {"label": "Turns", "value": 7}))  # optional fields absent
    assert "7" in bare and "source" not in bare


def test_the_table_card_sorts_numbers_as_numbers() -> None:
    card = _card(
        "table",
        {"columns": ["Model", "Size"], "rows": [["b", 10], ["a", 9.5], ["c", 100], ["d"]]},
        title="Sizes",
    )
    (view,) = card.findChildren(QTableView)
    model = view.model()
    assert model.rowCount() == 4 and model.columnCount() == 2
    assert [model.index(r, 0).data() for r in range(4)] == ["b", "a", "c", "d"]  # as given
    view.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    assert [model.index(r, 1).data() for r in range(4)] == ["9.5", "10", "100", ""]
    view.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    assert [model.index(r, 0).data() for r in range(4)] == ["d", "c", "b", "a"]
    assert card.title.text() == "Sizes"


def test_the_chart_card_names_its_series_and_says_what_it_shows() -> None:
    payload = {
        "title": "Speed",
        "kind": "line",
        "x_label": "k tokens",
        "y_label": "tok/s",
        "series": [
            {"name": "prefill", "points": [[1, 1900], [8, 1720]]},
            {"name": "decode", "points": [[1, 62], [8, 51]]},
        ],
    }
    card = _card("chart", payload, title="Speed")
    (view,) = card.findChildren(QChartView)
    chart = view.chart()
    assert [s.name() for s in chart.series()] == ["prefill", "decode"]
    titles = [axis.titleText() for axis in chart.axes()]
    assert "k tokens" in titles and "tok/s" in titles
    summary = view.accessibleDescription()
    assert "2 series" in summary and "prefill: 2 points from 1 to 8, 1,900 → 1,720" in summary
    assert summary in _labels(card)
    bar = _card(
        "chart",
        {"kind": "bar", "series": [{"name": "done", "points": [["W1", 3], ["W2", 5]]}]},
    )
    (bar_view,) = bar.findChildren(QChartView)
    (bar_series,) = bar_view.chart().series()
    (bar_set,) = bar_series.barSets()
    assert bar_set.label() == "done" and [bar_set.at(i) for i in range(2)] == [3.0, 5.0]


def test_entity_checklist_timeline_and_synthesis_show_their_fields() -> None:
    entity = _labels(
        _card("entity", {"name": "qwen2.5", "kind": "model", "attributes": {"window": 32768}})
    )
    assert "qwen2.5" in entity and "model" in entity and "window" in entity and "32,768" in entity
    checklist = _labels(
        _card("checklist", {"items": [{"text": "probe", "done": True}, {"text": "ship"}]})
    )
    assert "probe" in checklist and "ship" in checklist and "1 of 2 done" in checklist
    timeline = _labels(_card("timeline", {"events": [{"when": "09:12", "what": "bound"}]}))
    assert "09:12" in timeline and "bound" in timeline
    synthesis = _card(
        "research.synthesis",
        {
            "question": "Does it cut?",
            "takeaways": ["yes, silently"],
            "sources": [{"title": "Docs", "url": "https://example.org/a"}, {"title": "A book"}],
        },
    )
    text = _labels(synthesis)
    assert "Does it cut?" in text and "1.  yes, silently" in text
    assert 'href="https://example.org/a"' in text and "[2]" in text and "A book" in text


def test_unknown_types_and_unreadable_payloads_show_their_data_instead_of_crashing() -> None:
    unknown = _card("weather.forecast", {"city": "Oslo", "high": 4})
    assert unknown.kind.text() == "WEATHER.FORECAST"
    assert '"city": "Oslo"' in _labels(unknown)
    broken = _card("metric", {"label": "no value here"})  # `value` is required
    assert "could not be drawn" in _labels(broken) and "no value here" in _labels(broken)
    empty = _labels(_card("table", {}))
    assert "no rows" in empty
    odd = _labels(_card("chart", {"kind": "donut", "series": [{"points": [[1, "x"], "bad"]}]}))
    assert "Line chart" in odd and "no points" in odd


def test_a_dismissed_card_leaves_a_stub_with_restore() -> None:
    stub = card_widget(
        "b3:card", _presentation("table", {"columns": [], "rows": []}, "Sizes"), dismissed=True
    )
    assert isinstance(stub, DismissedStub)
    assert "Sizes" in stub.label.text() and stub.restore.text() == "Restore"


async def test_a_chat_view_without_a_window_draws_a_card_turn_from_the_ledger(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    ledger = Ledger.open(ledger_path)
    try:
        session = write_card_turn(ledger)
        async with httpx.AsyncClient() as client:
            service = ChatService(ledger, open_provider("ollama", client, double.url))
            view = ChatView(service)
            qtbot.addWidget(view)
            service.open_session(session)
            assert len(view.cards()) == len(SAMPLE_CARDS)
            assert "How do my local models compare?" in view.toPlainText()
            await service.aclose()
    finally:
        ledger.close()


def test_the_card_library_shapes_are_read_too() -> None:
    """The payloads as the card library's schemas write them (title, fields, label …)."""
    metric = _card("metric", {"title": "Prefill", "value": 912, "unit": "tok/s"})
    assert metric.title.text() == "Prefill" and "912" in _labels(metric)
    entity = _labels(
        _card(
            "entity",
            {
                "title": "qwen2.5",
                "entity_type": "model",
                "fields": [{"label": "window", "value": 32768}],
                "url": "https://ollama.com/library/qwen2.5",
            },
        )
    )
    assert "model" in entity and "window" in entity and "32,768" in entity
    assert 'href="https://ollama.com/library/qwen2.5"' in entity
    checklist = _labels(
        _card("checklist", {"title": "t", "items": [{"label": "probe", "note": "nightly"}]})
    )
    assert "probe" in checklist and "nightly" in checklist and "0 of 1 done" in checklist
    timeline = _labels(
        _card(
            "timeline",
            {"title": "t", "events": [{"when": "9:00", "label": "bound", "detail": "d"}]},
        )
    )
    assert "bound" in timeline and "d" in timeline.split("\n")
    table = _labels(_card("table", {"title": "t", "columns": ["a"], "rows": [[1]], "caption": "c"}))
    assert "c · 1 rows" in table
    synthesis = _labels(
        _card(
            "research.synthesis",
            {
                "title": "t",
                "takeaways": ["x"],
                "body": "In short: yes.",
                "sources": [{"title": "Docs", "url": "https://e.org", "snippet": "a quote"}],
            },
        )
    )
    assert "In short: yes." in synthesis and "a quote" in synthesis
    points = [{"x": "W1", "y": 3}, {"x": "W2", "y": 5}]
    for kind in ("line", "bar", "area", "scatter", "pie"):
        card = _card(
            "chart",
            {
                "title": "t",
                "kind": kind,
                "series": [{"name": "done", "points": points}],
                "accessible_summary": "Done rose from 3 to 5.",
            },
        )
        (view,) = card.findChildren(QChartView)
        assert len(view.chart().series()) == 1, kind
        assert view.accessibleDescription() == "Done rose from 3 to 5."
    (pie_view,) = card.findChildren(QChartView)
    (pie,) = pie_view.chart().series()
    assert [s.label() for s in pie.slices()] == ["W1", "W2"]
