"""The pure drift checks: the live-data reading, topic mismatch, repeated narration and the
directive drift that pauses the old subject (and what the plan and thread make of it)."""

from __future__ import annotations

import pytest

from tests.context.invariants import thread_lines
from tests.context.sessions import SessionBuilder, TurnScript, profile
from vak_desktop.context.payloads import Answer, TurnCard
from vak_desktop.context.planning.assemble import PAUSED_HEADER, TailContext, plan_request
from vak_desktop.context.planning.drift import (
    admits_no_live_value,
    paused_turns,
    repeated_narration,
    seeks_live_data,
    topic_mismatch,
)
from vak_desktop.context.planning.planner import Fidelity
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

LEX = lexicons()
CLOCK = TailContext(utc="2026-11-30T10:00:00Z", local="2026-11-30 11:00 (Monday)", timezone="CET")


@pytest.mark.parametrize(
    "directive",
    [
        "What is the current price of copper?",
        "show me the live score",
        "What's the latest exchange rate for the yen?",
        "How cold is it outside today?",
        "Tell me the temperature right now in the capital.",
    ],
)
def test_temporal_deixis_in_a_fact_seeking_request_is_live_data(directive: str) -> None:
    assert seeks_live_data(directive, lexicons())


@pytest.mark.parametrize(
    "directive",
    [
        "What is in the current directory?",
        "refactor the current parser",
        "what are you holding right now",
        "we live in the city; what should we plant?",
        "What time is it now?",
        "Now compare the first topic with the latest one.",
        "What is the current price of copper? No live data, from memory is fine.",
        "What is the price of copper?",
    ],
)
def test_local_timely_own_state_or_declined_requests_are_not_live_data(directive: str) -> None:
    assert not seeks_live_data(directive, lexicons())


def test_an_answer_that_says_it_has_no_current_value_is_accepted() -> None:
    assert admits_no_live_value(
        "I cannot access live data, so I don't know today's price.", lexicons()
    )
    assert not admits_no_live_value("Copper costs 9,300 USD per tonne.", lexicons())


def test_topic_mismatch_compares_card_values_with_directive_and_evidence() -> None:
    evidence = ['{"results": [{"title": "New model announced by a lab", "url": "u"}]}']
    stale = {"title": "Harbour temperature", "value": 28, "unit": "C"}
    assert topic_mismatch(stale, "what is the top AI news", evidence, LEX)
    found = {"title": "Lab announces new model", "value": "headline"}
    assert not topic_mismatch(found, "what is the top AI news", evidence, LEX)  # from the evidence
    assert not topic_mismatch({"title": "AI news", "value": 1}, "the top AI news", [], LEX)
    assert not topic_mismatch(
        {"value": 28}, "anything", evidence, LEX
    )  # no words: nothing to judge


def test_topic_mismatch_reads_chinese_by_its_bigrams() -> None:
    """A CJK sentence has no spaces: its content words are the bigrams left once the stop
    words (现在, 是, 多少 …) are taken out, so a card can share 铜价 with the request."""
    evidence = ['{"results": [{"title": "伦敦金属交易所铜价上涨", "snippet": "铜价今日上涨"}]}']
    stale = {"title": "港口水温", "value": 28, "unit": "C"}
    assert topic_mismatch(stale, "现在铜价是多少？", evidence, LEX)
    assert not topic_mismatch({"title": "铜价", "value": 9300}, "现在铜价是多少？", evidence, LEX)
    assert not topic_mismatch(
        {"title": "伦敦金属交易所", "value": 9300}, "今天的行情？", evidence, LEX
    )


def test_a_verbatim_repeat_of_an_earlier_narration_is_model_drift() -> None:
    said = "The copper price was 9,300 dollars per tonne at noon today."
    earlier = [TurnCard("t1", "price?", answered=Answer(narration=said))]
    assert repeated_narration(said, earlier) is earlier[0]
    assert repeated_narration(
        "  The copper price was 9,300 dollars per\ntonne at noon today. ", earlier
    )
    assert repeated_narration("Copper is at 9,400 now.", earlier) is None
    assert (
        repeated_narration("Done.", [TurnCard("t", "x", answered=Answer(narration="Done."))])
        is None
    )


def test_a_new_subject_pauses_the_run_of_the_old_one() -> None:
    asked = [
        "plan a garden with tomatoes",
        "which tomatoes grow in shade",
        "how deep should tomato seeds be planted in the garden",
    ]
    assert paused_turns("compare three laptop batteries", asked, back=False, lexicons=LEX) == (
        0,
        1,
        2,
    )
    assert (
        paused_turns("and the garden fence?", asked, back=False, lexicons=LEX) == ()
    )  # same subject
    assert paused_turns("compare three laptop batteries", asked, back=True, lexicons=LEX) == ()
    assert (
        paused_turns("laptops?", asked, back=False, lexicons=LEX) == ()
    )  # too short to name a subject


@pytest.mark.parametrize(
    ("asked", "moved_on", "same_subject"),
    [
        (  # "der" is in both: a function word, no shared subject
            ["Plane einen Garten mit Tomaten", "Welche Tomaten wachsen in der Sonne"],
            "Vergleiche die Akkus der drei Laptops",
            "und der Dünger für die Tomaten?",
        ),
        (  # bigrams, the stop words taken out: 番茄 is the subject both share
            ["我想在花园里种番茄", "番茄在阴凉处能长吗？"],
            "比较一下这三台笔记本电脑的电池",
            "那番茄的肥料呢？",
        ),
    ],
)
def test_drift_is_judged_by_content_words_in_the_directives_language(
    asked: list[str], moved_on: str, same_subject: str
) -> None:
    assert paused_turns(moved_on, asked, back=False, lexicons=LEX) == (0, 1)
    assert paused_turns(same_subject, asked, back=False, lexicons=LEX) == ()


def test_a_directive_about_the_conversation_never_pauses_it() -> None:
    asked = ["plan a garden with tomatoes", "which tomatoes grow in shade"]
    assert paused_turns("summarise this conversation about batteries", asked, False, LEX) == ()
    assert paused_turns("Fass unser Gespräch über Akkus zusammen", asked, False, LEX) == ()


def test_the_thread_lists_paused_directives_and_the_plan_favours_the_new_subject(
    ledger: Ledger,
) -> None:
    builder = SessionBuilder(ledger)
    builder.turn(TurnScript("Which laptop batteries last longest?", answer="The big ones."))
    for text in (
        "plan a garden with tomatoes",
        "which tomatoes grow in shade",
        "how deep should tomato seeds be planted in the garden",
    ):
        builder.turn(TurnScript(text, answer="Some gardening advice about tomatoes here."))
    builder.pending("compare laptop batteries by capacity")
    index = builder.index()
    plan, tail = plan_request(
        index,
        profile(50_000),
        index.turns[-1],
        system="s",
        tools=(),
        tail_context=CLOCK,
        lexicons=lexicons(),
    )
    assert PAUSED_HEADER in tail
    assert "- turns 2–4 (above)" in tail  # named, not asked
    assert thread_lines(tail) == []  # no directive is repeated in the thread
    values = {t.index: t.value for t in plan.turns}
    assert values[0] > values[3]  # the laptop turn now outranks the newest tomato turn
    assert values[3] == 0.5  # paused: its recency weighs half
    assert all(t.fidelity is Fidelity.FULL for t in plan.turns)  # a re-weighting, no cut
