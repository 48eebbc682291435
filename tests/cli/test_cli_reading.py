"""The reading of a directive in every shipped language, seen from outside: `vak request
--directive … --json` shows the tools the directive loads and the reading that chose them
(`tests/cli/reading_table.py` holds the table). Domains, live data and card types must be
set by the rows that set them and by no other row. The same table's refer-back and action rows
are read by the functions the planner and the turn rules call (what they decide is not in a
request's tools: a pinned card, a paused subject, a repair nudge), with the same lexicons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.reading_table import ACTIONS, ALL_CARDS, BACK, ORIENTING, TABLE
from tests.cli.test_cli import lines, open_ledger, vak
from tests.context.sessions import profile
from tests.doubles.fixtures import TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.actions import requested_tool
from vak_desktop.context.planning.candidates import recalls_earlier, refers_back
from vak_desktop.context.planning.drift import about_conversation
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, default_tools
from vak_desktop.runtime.inspection.preview import preview_next
from vak_desktop.runtime.lexicons import lexicons

CORE = {"recall", "find_tools", "read", "glob", "grep", "session_search"}  # always loaded
CARD_TOOL = {t: f"emit_{t}_card" for t in ALL_CARDS} | {"research": "emit_research_synthesis_card"}


def _session(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[str, Path]:
    source = tmp_path / "conversation.json"
    source.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "Hi."},
                    {"role": "assistant", "content": "Hello! How can I help?"},
                ]
            }
        )
    )
    code, out, _ = vak(capsys, "import", str(source), "--json")
    assert code == 0
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"declared_window": 32768, "output_reserve": 512}))
    return str(json.loads(out)["session"]), profile


def test_every_shipped_language_has_a_table() -> None:
    assert {lex.language for lex in lexicons().languages} == set(TABLE)


@pytest.mark.parametrize("language", sorted(TABLE))
def test_the_directive_loads_the_tools_its_reading_asks_for(
    language: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session, profile = _session(capsys, tmp_path)
    wrong = []
    for directive, domains, cards in TABLE[language]:
        code, out, err = vak(
            capsys, "request", session, "--profile", str(profile), "--directive", directive
        )
        assert code == 0, err
        request = json.loads(out)
        assert request["messages"][-1]["content"].endswith(directive)
        loaded = {t["name"] for t in request["tools"]}
        reading = request["reading"]
        got = ORIENTING if reading["orienting"] else set(reading["domains"])
        expected_tools = CORE | {CARD_TOOL[c] for c in cards}
        if got != domains or set(reading["cards"]) != cards or loaded != expected_tools:
            wrong.append(f"{directive!r}: read {got} {reading['cards']}, loaded {sorted(loaded)}")
        assert language in reading["languages"], (directive, reading["languages"])
    assert not wrong, "\n".join(wrong)


def test_every_shipped_language_has_refer_back_and_action_rows() -> None:
    assert set(BACK) == set(ACTIONS) == set(TABLE)


@pytest.mark.parametrize("language", sorted(BACK))
def test_the_directive_points_back_as_its_lexicon_says(language: str) -> None:
    """Refer-back (the best match pinned as a card), anaphora (the turn just before) and a
    request about the conversation itself, in each language, each row exactly."""
    lex, wrong = lexicons(), []
    for directive, expected in BACK[language]:
        read = {
            name
            for name, points in (
                ("recall", recalls_earlier(directive, lex)),
                ("anaphora", refers_back(directive, lex)),
                ("about", about_conversation(directive, lex)),
            )
            if points
        }
        if read != expected:
            wrong.append(f"{directive!r}: read {sorted(read)}, expected {sorted(expected)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("language", sorted(ACTIONS))
def test_an_asked_for_action_names_its_tool_in_every_language(language: str) -> None:
    lex, offered = lexicons(), ("read", "glob", "grep", "recall")
    wrong = [
        f"{directive!r}: asked {got}, expected {tool}"
        for directive, tool in ACTIONS[language]
        if (got := requested_tool(directive, offered, lex)) != tool
    ]
    assert not wrong, "\n".join(wrong)


def test_the_two_requests_of_the_issue() -> None:
    """The issue's two examples are rows of the table: a card request loads every card tool,
    the German current-price question sets live data and reads as a metric card."""
    assert ("Show the copper price as a card", ORIENTING, ALL_CARDS) in TABLE["en"]
    assert ("Wie hoch ist der Kupferpreis gerade?", {"live"}, {"metric"}) in TABLE["de"]


def test_a_closed_turn_keeps_its_reading_and_a_later_turn_finds_it_by_it(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Spec §10 `reading`: the TurnCard written at close holds the directive's reading (with
    the digest of the lexicons that read it) and its terms are among the card's index terms."""
    double.enqueue(Reply(text="Hier ist die Tabelle: Merkur, Venus, Erde."))
    code, out, err = vak(
        capsys,
        "chat",
        TOOL_MODEL,
        "Eine Tabelle der Planeten bitte",
        "--json",
        "--host",
        double.url,
    )
    assert code == 0, err
    session = lines(out)[-1]["session"]
    store = open_ledger(tmp_path)
    [card] = [e.payload for e in store.chain_to_root(session) if isinstance(e.payload, TurnCard)]
    store.close()
    assert card.reading == {
        "domains": ["files", "memory"],
        "cards": ["table"],
        "orienting": True,
        "everything": False,
        "languages": ["de"],
        "lexicons": lexicons().digest,
    }
    assert (
        "card:table" in card.terms and "domain:files" not in card.terms
    )  # the floor is no subject


def test_the_planner_ranks_an_earlier_turn_by_the_reading_across_languages(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Spec §4: relevance = BM25(directive + reading terms). A German current-price question
    shares no word with the English one two turns back; the reading's terms make that turn the
    most relevant, above the newer turns that recency alone would favour."""
    session = ""
    for directive, answer in [
        ("What is the current price of copper?", "I cannot access live data right now."),
        ("Refactor the parser module please", "Done."),
        ("Summarise this paragraph for me", "Done."),
    ]:
        double.enqueue(Reply(text=answer))
        argv = ["chat", TOOL_MODEL, directive, "--json", "--host", double.url]
        code, out, err = vak(capsys, *argv, *(["--session", session] if session else []))
        assert code == 0, err
        session = lines(out)[-1]["session"]
    store = open_ledger(tmp_path)
    try:
        preview = preview_next(
            store,
            session,
            profile(100_000),
            directive="Wie hoch ist der Kupferpreis gerade?",
            system=DEFAULT_SYSTEM_PROMPT,
            tools=default_tools(None, store),
        )
    finally:
        store.close()
    values = [turn.value for turn in preview.plan.turns]
    assert values[0] == 1.0 and values[0] > values[1]  # recency alone would give it 1/3
