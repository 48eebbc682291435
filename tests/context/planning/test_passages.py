"""Passages: every earlier turn's words found by the question, dated, within the plan's slice.

Unit tests on a chatty two-person conversation (a question ending one turn, its answer opening
the next) and a coding chat with tool results, on a real ledger; then a property over generated
sessions and budgets: the spec's invariants hold with passages in the request (no split turn,
the history within what the plan priced, the request within the horizon), the passages ride
only in the moving part of the request (the stable prefix is byte-identical with and without
them), none repeats a turn carried whole, and the passage index advanced request by request is
the one built from the whole chain.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile
from vak_desktop.context.capacity.profile import estimate_tokens, tokens_per_char
from vak_desktop.context.invariants import request_findings
from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.assemble import TailContext, assemble, plan_request
from vak_desktop.context.planning.passages import (
    FOCUSED_CAP,
    PIECE_WORDS,
    SEVERAL_CAP,
    passage_index,
    passage_slice,
    passages_over,
    pieces_of,
    query_stop_words,
    ranked_passages,
    select_passages,
    split_pieces,
)
from vak_desktop.context.planning.planner import PACKET_BATCH_TURNS, Fidelity, Plan
from vak_desktop.context.planning.turns import advance_turn_index, build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

TAIL = TailContext(utc="2026-12-01T10:20:00Z", local="2026-12-01 11:20 (Tuesday)", timezone="CET")
TOOLS = (ToolSpec("recall", "Bring back anything from earlier."),)
SYSTEM = "You are a helpful assistant."
CHAT = [
    ("Maya: Hi Tom! The weather was lovely today and I went for a long walk.", "Tom: Nice!"),
    (
        "Maya: Work was busy, lots of meetings again.",
        "Tom: Sounds tiring. What breed is your puppy?",
    ),
    ("Maya: A border collie called Biscuit, eleven weeks old. She chews everything.", "Tom: Ha!"),
    ("Maya: I started a pottery class on Thursdays.", "Tom: Fun, where is it?"),
    ("Maya: At the Clayhouse studio on Elm Street.", "Tom: I know that street."),
]


def chatty(ledger: Ledger, rounds: int = 1) -> SessionBuilder:
    session = SessionBuilder(ledger)
    for _ in range(rounds):
        for said, answered in CHAT:
            session.turn(TurnScript(said, answer=answered))
    return session


def said_on(*said: tuple[str, str]) -> SessionBuilder:
    """A session of one message a turn, each said at 15:00 on its day ("2023-10-13")."""
    session = SessionBuilder(Ledger.open(":memory:"))
    for day, text in said:
        session.said(text, f"{day}T15:00:00Z")
    return session


def ranked_for(session: SessionBuilder, question: str) -> tuple[object, list[tuple[int, float]]]:
    session.pending(question)
    index = session.index()
    found = passage_index(index)
    return found, ranked_passages(found, question, query_stop_words(question, lexicons()))


def test_a_piece_is_at_most_its_words_and_keeps_every_word() -> None:
    text = "One two three. " * 30 + "a " * 100
    pieces = split_pieces(text)
    assert all(len(p.split()) <= PIECE_WORDS for p in pieces)
    assert " ".join(pieces).split() == text.split()


def test_the_answer_that_opens_the_next_turn_travels_with_its_question() -> None:
    """Asked at the end of turn 2, answered at the start of turn 3: the question matches, and
    its passage carries the answer — even when the asking turn is shown whole."""
    session = chatty(Ledger.open(":memory:"))
    found, ranked = ranked_for(session, "What breed was the puppy?")
    assert ranked, "the question matches its turn"
    recalled = select_passages(found, ranked, 400, 0.25)
    assert "Biscuit" in recalled.text and "What breed is your puppy?" in recalled.text
    assert 3 in recalled.turns and 2 in recalled.turns
    shown_whole = select_passages(found, ranked, 400, 0.25, shown=[1])  # turn 2 whole
    assert "Biscuit" in shown_whole.text
    assert "turn 2," not in shown_whole.text  # a turn shown whole is never quoted again


def test_each_passage_names_its_turn_its_day_and_its_evidence_id() -> None:
    ledger = Ledger.open(":memory:")
    session = SessionBuilder(ledger)
    said = Directive(text="Maya: Biscuit is a border collie.", said_at="2023-05-08T13:56:00Z")
    head = session.append(said)
    session.turn_ids.append(head.id)
    session.turn(TurnScript("Maya: another day, nothing new", answer="Tom: ok"))
    found, ranked = ranked_for(session, "which dog is Biscuit?")
    recalled = select_passages(found, ranked, 400, 0.25)
    assert f"[turn 1, user, Mon 8 May 2023, ev:{head.id.removeprefix('b3:')[:12]}]" in recalled.text
    assert recalled.refs[0] == head.id.removeprefix("b3:")[:12]


def test_tool_results_are_found_through_their_digests() -> None:
    session = SessionBuilder(Ledger.open(":memory:"))
    result = "def parse_invoice(path):\n    return Invoice.load(path)\n" * 3
    call = Call("read", {"path": "billing.py"}, result)
    session.turn(TurnScript("Open billing.py please", steps=((call,),), answer="Done."))
    session.turn(TurnScript("Thanks. Now something else: the weather?", answer="Sunny."))
    found, ranked = ranked_for(session, "where was parse_invoice defined?")
    recalled = select_passages(found, ranked, 600, 0.25)
    assert "parse_invoice" in recalled.text and "[turn 1, read" in recalled.text


def test_nothing_fits_nothing_is_shown_and_no_match_reserves_nothing() -> None:
    session = chatty(Ledger.open(":memory:"))
    found, ranked = ranked_for(session, "What breed was the puppy?")
    assert select_passages(found, ranked, 5, 0.25).text == ""
    assert ranked_for(chatty(Ledger.open(":memory:")), "zzz qqq")[1] == []
    assert passage_slice(0) == 0 and passage_slice(90) == 45 and passage_slice(10**6) == 1_536


def test_an_inflected_question_finds_the_uninflected_answer() -> None:
    """Before: "classes" and "class", "walked" and "walk" were different words, so a question
    in one form missed the passage written in the other."""
    session = chatty(Ledger.open(":memory:"))
    found, ranked = ranked_for(session, "Which classes did she start?")
    assert "pottery class on Thursdays" in select_passages(found, ranked, 60, 0.25).text
    found, ranked = ranked_for(session, "Who was walking?")
    assert "went for a long walk" in select_passages(found, ranked, 60, 0.25).text


def test_an_irregular_or_silent_e_form_finds_its_verb() -> None:
    """Before: "buy" and "bought", "meet" and "met" shared nothing, and "dance" kept its "e"
    where "dancing" had lost it ("dance" against "danc"), so a question in the plain form, as
    questions about past events are put, missed the turn telling the event."""
    session = SessionBuilder(Ledger.open(":memory:"))
    for said, answered in [
        ("Maya: I bought new hiking boots at the weekend.", "Tom: Nice."),
        ("Maya: Work was busy.", "Tom: We were dancing all night at Lea's wedding."),
        ("Maya: Yesterday I met an old friend, Jean, at the market.", "Tom: Lovely."),
        *CHAT,
    ]:
        session.turn(TurnScript(said, answer=answered))
    for question, answer in [
        ("What did Maya buy?", "bought new hiking boots"),
        ("When did Tom dance?", "dancing all night"),
        ("Where did Maya meet an old friend?", "met an old friend"),
    ]:
        found, ranked = ranked_for(session, question)
        assert answer in select_passages(found, ranked, 60, 0.25).text, question


def test_a_question_naming_a_day_finds_what_was_said_that_day() -> None:
    """Before: "on October 13, 2023" searched for the words "october" and "2023", which no
    utterance of that day holds (its day is in the ledger, not in the words), so every painting
    Caroline ever mentioned ranked alike and the newest came first."""
    session = said_on(
        ("2023-10-13", "Caroline: Here is my new painting, blue streaks on a wall."),
        ("2023-10-13", "Melanie: How was the weekend?"),
        ("2023-11-02", "Caroline: I painted a sunset over the lake last week."),
        ("2023-11-02", "Melanie: The kids are well."),
        ("2023-11-20", "Caroline: This painting of a flower bouquet is for my mum."),
    )
    session.turn(TurnScript("Melanie: Lovely work!", answer="ok"))
    found, ranked = ranked_for(session, "What painting did Caroline share on October 13, 2023?")
    days = [found.store.pieces[centre].said_at[:10] for centre, _ in ranked]
    assert days[:2] == ["2023-10-13", "2023-10-13"]
    assert "blue streaks" in select_passages(found, ranked, 160, 0.25).text


def test_a_question_naming_a_month_favours_what_was_said_in_it_and_finds_nothing_by_it() -> None:
    """ "What did Audrey do in November 2023 …?" searched for "november" and "2023", which the
    utterances of that month rarely hold. Among the passages its words find, those said in the
    month named come first; a passage that shares only the month is not found by it."""
    session = said_on(
        ("2023-10-04", "Audrey: I took the dogs to a new groomer for their care."),
        ("2023-11-09", "Audrey: I joined a dog owners group to learn better care."),
        ("2023-11-10", "Andrew: The weather turned cold this week."),
        ("2023-12-01", "Audrey: The dogs loved their care package from the vet."),
    )
    session.turn(TurnScript("Andrew: Nice!", answer="ok"))
    question = "What did Audrey do in November 2023 to take care of her dogs?"
    found, ranked = ranked_for(session, question)
    texts = [found.store.pieces[centre].text for centre, _ in ranked]
    assert texts[0].startswith("Audrey: I joined a dog owners group")
    assert not any("weather" in t for t in texts)  # the month alone finds nothing


def test_a_question_for_a_kind_of_thing_finds_the_turn_naming_one() -> None:
    """Before: "which cities has Tom visited?" shares no word with "a week in Lisbon", and the
    passages held only the turns that say "city" (LoCoMo conv-30: "Paris, Rome" never shown).
    The kind asked for is a term of every piece naming a member of it (`kinds.py`); a turn using
    the word itself still ranks first."""
    session = SessionBuilder(Ledger.open(":memory:"))
    session.turn(TurnScript("Maya: How was the trip?", answer="Tom: We spent a week in Lisbon."))
    for said, answered in CHAT:
        session.turn(TurnScript(said, answer=answered))
    session.turn(TurnScript("Maya: Did you like the city life?", answer="Tom: Not really."))
    session.turn(TurnScript("Maya: And what did you eat there?", answer="Tom: Ginger snaps!"))
    found, ranked = ranked_for(session, "Which cities has Tom visited?")
    assert "city life" in found.store.pieces[ranked[0][0]].text
    shown = select_passages(found, ranked, 200, 0.25).text
    assert "week in Lisbon" in shown
    assert "Ginger snaps" not in shown
    found, ranked = ranked_for(session, "What food did Tom have?")
    assert "Ginger snaps" in select_passages(found, ranked, 60, 0.25).text


def test_words_that_shape_the_answer_do_not_search() -> None:
    """Before: "answer in a few words" searched for "answer", "few" and "words", and a chat
    full of "your words mean a lot" filled the slice with thanks."""
    session = SessionBuilder(Ledger.open(":memory:"))
    for n in range(6):
        session.turn(TurnScript(f"Tom: Your words mean a lot, answer {n} was kind.", answer="ok"))
    session.turn(TurnScript("Maya: The vet said Biscuit needs a new collar.", answer="Tom: ok"))
    question = "Answer in a few words: what did the vet say about the collar?"
    stop = query_stop_words(question, lexicons())
    assert {"answer", "few", "words"} <= stop
    found, ranked = ranked_for(session, question)
    recalled = select_passages(found, ranked, 60, 0.25)
    assert "new collar" in recalled.text and "Your words" not in recalled.text


def test_a_question_about_the_past_gets_the_larger_slice() -> None:
    assert passage_slice(900, memory=True) == 600 > passage_slice(900)
    assert passage_slice(10**6, memory=True) == 3_072


def test_the_index_is_advanced_not_rebuilt() -> None:
    session = chatty(Ledger.open(":memory:"))
    session.pending("first question")
    first = session.index()
    found = passage_index(first)
    session.turn(TurnScript("Maya: Biscuit learnt to sit today.", answer="Tom: Clever dog."))
    session.pending("second question")
    advanced = advance_turn_index(first, session.chain())
    grown = passage_index(advanced)
    assert grown.store is found.store  # extended in place, not built again
    rebuilt = passage_index(build_turn_index(session.chain()))
    assert grown.store.pieces[: grown.pieces] == rebuilt.store.pieces[: rebuilt.pieces]
    assert grown.pieces > found.pieces
    # the older view still ranks as it did before its store grew (its own counts, its pieces)
    before = ranked_passages(passages_over(first.turns[:-1]), "Biscuit puppy")
    assert ranked_passages(found, "Biscuit puppy") == before


def test_pieces_of_a_turn_are_its_words_in_order() -> None:
    session = chatty(Ledger.open(":memory:"))
    turn = session.index().turns[2]
    texts = [p.text for p in pieces_of(turn)]
    assert texts[0].startswith("Maya: A border collie") and texts[-1] == "Tom: Ha!"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    rounds=st.integers(1, 6),
    horizon=st.integers(700, 6_000),
    question=st.sampled_from(
        [
            "What breed was the puppy?",
            "Do you remember what breed the puppy was?",  # a focused plan on a small model
            "Where is the pottery studio?",
            "what about work",
            "hi",
        ]
    ),
    ratio=st.sampled_from([0.25, 0.31, 0.5]),
)
def test_passages_keep_the_spec_invariants(
    rounds: int, horizon: int, question: str, ratio: float
) -> None:
    session = chatty(Ledger.open(":memory:"), rounds)
    session.pending(question)
    index = session.index()
    capacity = profile(horizon, output_reserve=200, ratio=ratio)
    current = index.turns[-1]
    plan, tail = plan_request(
        index, capacity, current, system=SYSTEM, tools=TOOLS, tail_context=TAIL, lexicons=lexicons()
    )
    request = assemble(
        index, plan, current, system=SYSTEM, tools=TOOLS, tail=tail, ratio=tokens_per_char(capacity)
    )
    assert not request_findings(index, plan, request, current, tokens_per_char(capacity))
    # the passages are in the tail's message only, the user's words last and alone: the
    # stable prefix is the same
    tail_message, directive = request.messages[-2:]
    assert request.messages[0].content == SYSTEM and directive.content == question
    assert all("Passages of earlier turns" not in m.content for m in request.messages[:-2])
    whole = {t.index + 1 for t in plan.turns if t.fidelity is Fidelity.FULL}
    assert not whole & set(plan.passage_turns)  # a turn carried whole is not quoted again
    if plan.passage_turns:
        assert "Passages of earlier turns" in tail_message.content == tail
    total = sum(estimate_tokens(m.chars(), tokens_per_char(capacity)) for m in request.messages)
    if plan.over_budget == 0 and plan.budget.available > 0:
        assert plan.passage_tokens <= plan.budget.tail_tokens
        assert total <= horizon + len(request.messages)  # within the horizon (per-message rounding)


def planned_with_passages(session: SessionBuilder, horizon: int) -> tuple[Plan, str, str]:
    """The plan, the tail and the history of the pending turn's request, with the invariants
    checked."""
    index = session.index()
    capacity = profile(horizon, output_reserve=200)
    current = index.turns[-1]
    plan, tail = plan_request(
        index, capacity, current, system=SYSTEM, tools=TOOLS, tail_context=TAIL, lexicons=lexicons()
    )
    built = assemble(
        index, plan, current, system=SYSTEM, tools=TOOLS, tail=tail, ratio=tokens_per_char(capacity)
    )
    assert request_findings(index, plan, built, current, tokens_per_char(capacity)) == []
    assert built.messages[-2].content == tail  # the tail, then the user's words alone
    return plan, tail, "\n".join(m.content for m in built.messages[1:-2])


def request_with_passages(session: SessionBuilder, horizon: int) -> tuple[str, str]:
    """The tail and the history of the pending turn's request, with the invariants checked."""
    _plan, tail, history = planned_with_passages(session, horizon)
    return tail, history


def test_turns_behind_a_reset_are_searched_too() -> None:
    """Before: the passage index started at the reset, so a question about what was said before
    it found nothing (the handoff is a line; recall needs a turn number the model cannot know)."""
    session = chatty(Ledger.open(":memory:"))
    session.reset("We talked about Maya's week.")
    for n in range(3):
        session.turn(TurnScript(f"Maya: a quiet day {n}, reading at home.", answer="Tom: Nice."))
    session.pending("What breed was the puppy?")
    tail, history = request_with_passages(session, 6_000)  # every live turn fits whole
    assert "Biscuit" not in history  # the turn behind the reset is not in the history …
    assert "[turn 3, user" in tail and "Biscuit" in tail  # … but its passage is, tagged as any
    # a running session's index holds them, extended as it grows
    found = passage_index(session.index())
    assert found.start == 0 and found.store.pieces[0].turn == 0


def test_the_thread_takes_its_share_and_leaves_the_question_its_passages() -> None:
    """Recorded on LoCoMo conv-49 (issue #22): at a 2,387-token horizon the tail's eight latest
    summarised requests, each a long chat utterance, took 370 of the 1,381 tokens the history
    had, and the passages the question found were cut to none. The thread now takes at most
    `THREAD_SHARE` of that budget, its newest lines first, and the passages keep theirs."""
    session = chatty(Ledger.open(":memory:"))
    said = " ".join(["The puppy chewed a shoe, then slept, then chewed the sofa."] * 3)
    for n in range(60):
        session.turn(TurnScript(f"Maya: puppy day {n}. {said}", answer="Tom: Ha, puppies."))
    session.pending("What breed was the puppy?")
    tail, _history = request_with_passages(session, 1_400)
    assert "called Biscuit" in tail  # the passage that answers
    thread = tail.split("Earlier requests, now summarised:\n", 1)[1].split("\n\n", 1)[0]
    lines = thread.splitlines()
    assert 1 <= len(lines) < PACKET_BATCH_TURNS  # some of the latest eight: the newest
    days = [int(line.split("puppy day ", 1)[1].split(".", 1)[0]) for line in lines]
    assert days == list(range(days[0], days[0] + len(days)))  # consecutive: the oldest dropped
    wide, _ = request_with_passages(session, 2_400)  # a larger budget's share holds more
    assert wide.count("\n- Maya: puppy day") > len(lines)


def test_a_small_models_question_about_the_past_gets_passages_before_the_newest_turns() -> None:
    """Recorded on LoCoMo conv-41 (issue #22): at the real 1.5B's probed 2,211 tokens, with 843
    tokens for the history, the passages yielded to two whole turns promoted for recency, the
    thread's newest request and packet lines, until one line was left. A question that says
    it is about the conversation's past ("remember", "earlier") now gets the passages first:
    the history keeps only what every plan carries (the packet and the newest batch), no turn
    is promoted whole for its value, no summarised request rides in the tail, and the request
    is no larger than the horizon. The same words without the cue are planned as before."""
    said = " ".join(["The puppy chewed a shoe, then slept, then chewed the sofa."] * 3)

    def planned(question: str, horizon: int, turns: int = 60) -> tuple[Plan, str]:
        session = chatty(Ledger.open(":memory:"))
        for n in range(turns):
            session.turn(TurnScript(f"Maya: puppy day {n}. {said}", answer="Tom: Ha, puppies."))
        session.pending(question)
        plan, tail, _history = planned_with_passages(session, horizon)  # invariants checked
        return plan, tail

    cued = "Do you remember what breed the puppy was?"
    # a cue of the past beside one of files is focused too: what it refers to is in the
    # passages (efficacy's locker case: "Which file of mine has the … I mentioned a while ago?")
    with_files = "Which file of mine has the puppy's breed I mentioned a while ago?"
    for question, horizon in itertools.product((cued, with_files), (1_400, 2_400)):
        plan, tail = planned(question, horizon)
        assert "called Biscuit" in tail
        assert "Earlier requests, now summarised" not in tail
        whole = [t.index for t in plan.turns if t.fidelity is Fidelity.FULL]
        newest = len(plan.turns) - PACKET_BATCH_TURNS  # none promoted for its value: only a
        assert all(i >= newest for i in whole)  # short newest turn, cheaper whole than a card
        assert plan.over_budget == 0
    uncued, _tail = planned("What breed was the puppy?", 2_400)  # the newest turns fill it
    assert [t for t in uncued.turns if t.fidelity is Fidelity.FULL]
    assert uncued.history_tokens > plan.history_tokens
    large, _tail = planned(cued, 9_000)  # a large model is planned as before, cue or not
    assert [t for t in large.turns if t.fidelity is Fidelity.FULL]
    # a small model with room to spare carries the same history: what the passages leave stays
    # unused (the real 1.5B at its 8,086-token memory horizon filled it with the newest turns:
    # 7,314 tokens and 341 s for one question)
    roomy, tail = planned(cued, 8_000, turns=240)
    carried = [t.index for t in roomy.turns if t.fidelity is not Fidelity.PACKET]
    assert len(carried) <= PACKET_BATCH_TURNS + 1  # the newest batch (and the turn referred
    # to, a card), no more
    assert 0 < roomy.passage_tokens <= FOCUSED_CAP and "called Biscuit" in tail
    assert roomy.history_tokens + roomy.passage_tokens < roomy.budget.horizon // 2


@pytest.mark.parametrize(
    ("question", "cap"),
    [
        ("Do you remember what the puppy chewed?", FOCUSED_CAP),
        ("Do you remember which shoes the puppy chewed?", SEVERAL_CAP),  # a list's items
    ],
)
def test_a_focused_request_carries_passages_up_to_its_cap(question: str, cap: int) -> None:
    """On the real 1.5B, the 48 development questions of LoCoMo whose request changed answered
    as well with a focused request's passages capped at 768 tokens as at 1,024 (F1 0.290 to
    0.301; held out, within the noise), at ~150 fewer prompt tokens (decision 0125); a question
    asking for several things answered better at 1,024 (decision 0130). Here sixty turns match
    the question alike, well over 1,024 tokens of passages, in a long session whose other turns
    do not: the passages stop at the cap."""
    work = " ".join(["Meetings ran long and the inbox kept growing all afternoon."] * 4)
    session = chatty(Ledger.open(":memory:"))
    for n in range(240):
        said = f"the puppy chewed the red shoe on day {n}" if n % 4 == 0 else f"day {n}. {work}"
        session.turn(TurnScript(f"Maya: {said}.", answer="Tom: I see."))
    session.pending(question)
    plan, tail, _history = planned_with_passages(session, 8_000)
    assert cap - 128 < plan.passage_tokens <= cap
    if cap == SEVERAL_CAP:  # more than any other focused request carries
        assert plan.passage_tokens > FOCUSED_CAP
    assert tail.count("the puppy chewed the red shoe") > 10


def test_a_header_inside_a_message_dates_the_lines_after_it() -> None:
    """A session's first line joined to the message before it ("… See you!\n[2:12 pm on 5
    June, 2022]\nHey! Yesterday was …") is shown with its own session's day, and its
    "yesterday" is that day's."""
    ledger = Ledger.open(":memory:")
    session = SessionBuilder(ledger)
    merged = (
        "Joanna: Thanks Nate! See you later!\n[2:12 pm on 5 June, 2022]\n"
        "Joanna: Hey Nate! Yesterday my screenplay appeared on the big screen!"
    )
    session.said(merged, "2022-06-03T10:00:00Z")
    session.turn(TurnScript("Joanna: another day, nothing new", answer="Nate: ok"))
    days = {p.text: p.said_at[:10] for p in pieces_of(session.index().turns[0])}
    assert days["Joanna: Thanks Nate! See you later!"] == "2022-06-03"
    assert set(days.values()) == {"2022-06-03", "2022-06-05"}
    found, ranked = ranked_for(session, "When did the screenplay appear on the big screen?")
    recalled = select_passages(found, ranked, 400, 0.25)
    assert "Sun 5 June 2022" in recalled.text
    assert "Yesterday (= Sat 4 June 2022)" in recalled.text


def test_a_passage_matching_under_half_as_well_as_the_best_is_not_shown() -> None:
    """On the real 1.5B, passages down to a quarter of the best score answered worse than those
    down to half (decision 0124). Here the turn sharing two of the question's four words scores a
    third of the turn holding all four: a distraction beside it, no longer shown."""
    session = SessionBuilder(Ledger.open(":memory:"))
    session.turn(
        TurnScript("Maya: Biscuit chewed my violin case at the lake.", answer="Tom: Oh no!")
    )
    for said, answered in CHAT[:2]:
        session.turn(TurnScript(said, answer=answered))
    session.turn(TurnScript("Maya: I sold my old violin case last spring.", answer="Tom: Good."))
    for said, answered in CHAT[:2]:
        session.turn(TurnScript(said, answer=answered))
    found, ranked = ranked_for(session, "Where did Biscuit chew the violin case?")
    texts = [found.store.pieces[centre].text for centre, _ in ranked]
    assert texts[0].startswith("Maya: Biscuit chewed")
    assert not any("sold my old violin" in t for t in texts)


def test_a_short_piece_scores_no_higher_than_a_longer_one_with_the_same_words() -> None:
    """BM25's length norm weighs a word in a three-word piece ~1.6 times one in an average
    piece, and on a real conversation "Nate: Take care!" goodbyes filled the slice where the
    answer to "How does Nate describe the process of taking care of turtles?" should have been
    (it came in once the floor landed: decision 0126). A piece shorter than the average is
    scored as if of average length; a longer one is still scored down."""
    long_talk = (
        "Joanna: I finished another chapter of my screenplay last night, the one where the two"
        " sisters finally meet again after the storm, and I think it works now.",
        "Tom: That is great news, I would love to read it when you are ready to share it with"
        " the group, you have been working on it for months.",
    )
    session = SessionBuilder(Ledger.open(":memory:"))
    session.turn(TurnScript("Joanna: Gotta go, talk later!", answer="Nate: Take care!"))
    session.turn(TurnScript(long_talk[0], answer=long_talk[1]))
    session.turn(
        TurnScript(
            "Joanna: What do you do on a slow Sunday morning?",
            answer="Nate: Mostly I take care of the tank, and I cook a long breakfast.",
        )
    )
    session.turn(TurnScript(long_talk[0], answer=long_talk[1]))
    found, ranked = ranked_for(session, "How does Nate take care of things?")
    score = {found.store.pieces[centre].text: s for centre, s in ranked}
    longer = "Nate: Mostly I take care of the tank, and I cook a long breakfast."
    assert score[longer] >= score["Nate: Take care!"]


def test_a_question_asking_for_several_things_keeps_the_weaker_matches() -> None:
    """Each item of a list matches about as weakly as the others: "which cities has Jon
    visited?" keeps a passage down to a quarter of the best score, where "which city did Jon
    visit?" keeps only those within half of it (decision 0127)."""
    filler = [
        ("Gina: Work was busy again, lots of meetings.", "Jon: Sounds tiring, hope it ends."),
        ("Gina: I started a pottery class on Thursdays.", "Jon: Fun, tell me how it goes."),
    ] * 35  # "Jon" is then too common to search by
    trips = [
        (
            "Gina: How was your trip?",
            "Jon: I visited Paris last spring, what a city! I visited the Louvre twice there.",
        ),
        ("Gina: Any other trips this year?", "Jon: A weekend in Rome with my brother."),
    ]
    for question, rome in (
        ("Which cities has Jon visited?", True),
        ("Which city did Jon visit?", False),
    ):
        session = SessionBuilder(Ledger.open(":memory:"))
        for said, answered in filler[:30] + trips + filler[30:]:
            session.turn(TurnScript(said, answer=answered))
        found, ranked = ranked_for(session, question)
        texts = [found.store.pieces[centre].text for centre, _ in ranked]
        assert texts[0].startswith("Jon: I visited Paris")
        assert any("Rome" in text for text in texts) is rome


def test_the_best_passage_is_shown_last_nearest_the_question() -> None:
    """Runs of adjacent pieces keep session order inside; the runs go by rank, the best last
    (decision 0128: the same pieces answered better on the real 1.5B in that order)."""
    session = chatty(Ledger.open(":memory:"))
    session.turn(TurnScript("Maya: Biscuit ate my pottery homework.", answer="Tom: Oh no!"))
    session.turn(TurnScript("Maya: Off to bed now, long day tomorrow.", answer="Tom: Night!"))
    found, ranked = ranked_for(session, "What breed is Biscuit, my puppy?")
    recalled = select_passages(found, ranked, 400, 0.25)
    lines = recalled.text.splitlines()[1:]
    best = found.store.pieces[ranked[0][0]].text
    assert "What breed is your puppy?" in best
    weaker = next(i for i, line in enumerate(lines) if "Biscuit ate my pottery" in line)
    asked = next(i for i, line in enumerate(lines) if "What breed is your puppy?" in line)
    assert weaker < asked  # the later turn's weaker match comes first, not in session order
    assert all(i > asked for i, line in enumerate(lines) if "eleven weeks old" in line)
    assert asked >= len(lines) - 3  # the best passage's pieces close the block
