"""The reading of a directive: domains and card types from word cues, deterministic."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vak_desktop.context.planning.reading import (
    EVERYTHING,
    FILES,
    LIVE,
    MEMORY,
    ORIENTATION,
    WEB,
    read_directive,
)
from vak_desktop.runtime.lexicons import lexicons

LEX = lexicons()


@pytest.mark.parametrize(
    ("text", "domains"),
    [
        ("open src/main.py and fix the import", {FILES}),
        ("what is in ~/notes", {FILES}),
        ("grep the repository for TODO", {FILES}),
        ("what did we discuss earlier about the budget?", {MEMORY}),
        ("search the web for reviews of this kettle", {WEB}),
        ("What is the current price of copper?", {LIVE}),
        ("show the live score", {LIVE}),
        ("now what is the exchange rate of EUR today", {LIVE}),
        ("Show me the latest news about AI", {LIVE, WEB}),
    ],
)
def test_cues_set_the_domains(text: str, domains: set[str]) -> None:
    reading = read_directive(text, LEX)
    assert reading.domains == domains and not reading.orienting


@pytest.mark.parametrize(
    "text",
    [
        "what is the current directory",  # local: files, not live data
        "refactor the current parser",
        "what time is it now",  # the tail carries the time
        "what are you holding right now",  # the agent's own state
        "we live in the city, what is a good bank?",  # the verb, not the adjective
        "And now?",  # a step in the conversation: no subject to seek a fact about
        "what now?",
        "ok now summarise the notes",  # `now` opening a request, not a point in time
    ],
)
def test_temporal_deixis_beside_something_local_is_not_live_data(text: str) -> None:
    assert LIVE not in read_directive(text, LEX).domains


@pytest.mark.parametrize("text", ["hello", "26.2 miles in km", "e.g. this", "50 km/h"])
def test_no_cue_gives_the_orientation_floor(text: str) -> None:
    reading = read_directive(text, LEX)
    assert reading.orienting and reading.domains == ORIENTATION


def test_card_types_come_from_their_own_words() -> None:
    assert read_directive("plot a chart of rainfall", LEX).cards == {"chart"}
    assert read_directive("make a checklist and a timeline", LEX).cards == {"checklist", "timeline"}
    assert read_directive("who is the author of this library", LEX).cards == {"entity"}
    assert read_directive("what is the current exchange rate of the yen?", LEX).cards == {"metric"}
    assert read_directive("latest news about AI", LEX).cards == set()  # live, but not one value


def test_a_card_tool_is_read_by_its_type() -> None:
    reading = read_directive("compare sources in a research synthesis", LEX)
    assert reading.reads_as_card("emit_research_synthesis_card")
    assert not reading.reads_as_card("emit_chart_card")
    assert EVERYTHING.reads_as_card("emit_chart_card") and EVERYTHING.meets(frozenset({"x"}))


def test_the_reading_is_a_function_of_the_text() -> None:
    text = "Plot the latest copper price from prices.csv"  # beside a file: local, not live
    assert read_directive(text, LEX) == read_directive(text, LEX)
    assert read_directive(text, LEX).to_json() == {
        "domains": [FILES],
        "cards": ["chart"],
        "orienting": False,
        "everything": False,
        "languages": ["en"],
    }


_QUADRATIC_FILE_NAME = (  # the pattern as it was: it could start inside any word
    r"\w[\w-]*\.(?:py|md|json|txt)\b|(?:^|\s)(?:\.{1,2}/|~/|/)\w|\w+/\w+/\w"
)


@given(st.text(alphabet="ab-_./~ \n", max_size=40))
def test_a_file_name_is_found_exactly_where_the_unanchored_pattern_found_one(text: str) -> None:
    """Starting only where a word starts (linear, not quadratic in a long word) finds a file
    name or path in the same texts."""
    import re

    from vak_desktop.context.planning import lexicon

    anchored = lexicon.FILE_NAME.pattern.replace(lexicon._EXTENSIONS, "py|md|json|txt")
    for sample in (text, text.replace("a", "a.py", 1), text.replace("b", "b/a/b", 1)):
        found = re.search(anchored, sample) is not None
        assert found == (re.search(_QUADRATIC_FILE_NAME, sample) is not None), sample
