"""A running session's TurnIndex and card index are advanced, not rebuilt — and plan the same.

The property: over generated sessions on a real ledger (turns closed with or without a card,
turns left open, the running turn taking steps, stored packets, resets, edits that branch the
chain, a second session in the same ledger) an index advanced entry batch by entry batch equals
the index built from the whole chain, and the plan, tail and request it gives equal those of an
index that never had a card index (the per-request path every turn paid before), under a
tokens/char that moves between requests as feedback moves it. Older index versions planned again
after the session moved on still plan as they did. The unit tests show what "advanced" means: the
entries already indexed are not read again, the card index of the previous request is extended
in place, and a chain that does not continue the index (another session, another branch) is
indexed from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, tool_output
from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.payloads import CapacityProfile, Directive, Payload
from vak_desktop.context.planning.assemble import TailContext, assemble, plan_request
from vak_desktop.context.planning.card_index import MEMO_KEY, card_index
from vak_desktop.context.planning.turns import TurnIndex, advance_turn_index, build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime.lexicons import lexicons

TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
TOOLS = (ToolSpec("recall", "Bring back anything from earlier."), ToolSpec("search", "Search."))
READ_FILE = ToolSpec("read_file", "Read a file.")  # some requests carry it: cards keyed by tools
SYSTEM = "You are a helpful assistant. " * 10
WORDS = ("copper", "price", "noida", "weather", "rust", "parser", "ledger", "earlier", "that")


def legacy(index: TurnIndex) -> TurnIndex:
    """The same turns as an index not built from a chain: planned without any card index."""
    return TurnIndex(index.turns, index.packets, index.reset)


def request_of(
    index: TurnIndex, capacity: CapacityProfile, tools: tuple[ToolSpec, ...] = TOOLS
) -> tuple[object, ...]:
    """Plan, tail and assembled messages of the index's last turn as the running one."""
    current = index.turns[-1]
    plan, tail = plan_request(
        index,
        capacity,
        current,
        system=SYSTEM,
        tools=tools,
        tail_context=TAIL,
        lexicons=lexicons(),
    )
    built = assemble(
        index,
        plan,
        current,
        system=SYSTEM,
        tools=tools,
        tail=tail,
        ratio=tokens_per_char(capacity),
    )
    return plan, tail, built.messages


@dataclass(frozen=True)
class Op:
    kind: str  # turn | open | step | pending | packet | reset | branch | other
    words: tuple[str, ...]
    size: int
    card: bool
    pick: int  # which earlier turn a packet or a branch starts at
    tool: str = "search"  # read_file: another app's tool, not in TOOLS (its cards tell it)


ops = st.builds(
    Op,
    kind=st.sampled_from(
        ["turn"] * 6 + ["open", "step", "pending", "pending", "packet", "reset", "branch", "other"]
    ),
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(tuple),
    size=st.sampled_from([40, 900, 5_000, 31_000]),
    card=st.sampled_from([True, True, True, False]),
    pick=st.integers(0, 1_000),
    tool=st.sampled_from(["search", "search", "read_file"]),
)


class Driver:
    """Applies operations to a session of a real ledger the way the runtime writes them."""

    def __init__(self, ledger: Ledger) -> None:
        self.session = SessionBuilder(ledger)
        self.other = SessionBuilder(ledger)  # a second session of the same ledger
        self.ledger = ledger
        self.count = 0

    def chain(self) -> list[Entry]:
        return self.session.chain()

    def apply(self, op: Op) -> None:
        self.count += 1
        text = f"D{self.count} {' '.join(op.words)}"
        content, is_error = tool_output("search", f"r{self.count}", op.size)
        steps = ((Call(op.tool, {"q": text}, content, is_error),),)
        turns = [e for e in self.chain() if isinstance(e.payload, Directive)]
        if op.kind == "turn":
            self.session.turn(TurnScript(text, steps, f"Answer {text}.", "completed", op.card))
        elif op.kind == "open":  # a turn that never closed (no card, no close mark)
            self.session.turn(TurnScript(text, steps, "", None, False))
        elif op.kind == "step":  # the running turn takes one more step
            self.session._steps(steps)
        elif op.kind == "pending":
            self.session.pending(text)
        elif op.kind == "packet" and turns:
            first = op.pick % len(turns)
            last = first + op.pick // 7 % (len(turns) - first)
            self.session.append(_packet(turns[first].id, turns[last].id, text))
        elif op.kind == "reset":
            self.session.reset(f"Handoff after {text}.")
        elif op.kind == "branch" and turns:  # an edit: an alternative of an earlier directive
            earlier = turns[op.pick % len(turns)]
            self.ledger.append(self.session.session, Directive(text=text), parent=earlier.parent)
        elif op.kind == "other":
            self.other.turn(TurnScript(text, steps, "Elsewhere.", "completed", op.card))


def _packet(first: str, last: str, summary: str) -> Payload:
    from vak_desktop.context.payloads import Compaction

    return Compaction(first, last, f"Summary: {summary}", "m")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    script=st.lists(ops, min_size=1, max_size=24),
    horizons=st.lists(st.sampled_from([3_000, 8_000, 30_000, 200_000]), min_size=1, max_size=3),
    ratio=st.floats(0.2, 0.5),
    replan=st.integers(0, 3),
)
def test_an_advanced_index_plans_exactly_what_a_rebuilt_one_does(
    script: list[Op], horizons: list[int], ratio: float, replan: int
) -> None:
    ledger = Ledger.open(":memory:")
    try:
        driver = Driver(ledger)
        index = build_turn_index([])
        versions: list[TurnIndex] = []
        for step, op in enumerate(script):
            driver.apply(op)
            chain = driver.chain()
            if op.kind == "other":  # the other session's chain: never this session's index
                other = advance_turn_index(index, driver.other.chain())
                assert other == build_turn_index(driver.other.chain())
            index = advance_turn_index(index, chain)
            assert index == build_turn_index(chain)
            if not index.turns:
                continue
            versions.append(index)
            # feedback moves the learned tokens/char between requests; profiles alternate
            moved = ratio * (1 + step / 50)
            capacity = profile(horizons[step % len(horizons)], output_reserve=256, ratio=moved)
            tools = TOOLS if step % 3 else (*TOOLS, READ_FILE)  # a card told, then called
            assert request_of(index, capacity, tools) == request_of(legacy(index), capacity, tools)
            if replan and len(versions) > replan:  # an older version asked again
                older = versions[-1 - replan]
                assert request_of(older, capacity) == request_of(legacy(older), capacity)
    finally:
        ledger.close()


class Untouchable:
    """An entry already indexed: reading its payload again would fail the test."""

    def __init__(self, entry: Entry) -> None:
        self.id = entry.id

    @property
    def payload(self) -> Payload:
        raise AssertionError(f"entry {self.id} was read again")


def closed_turns(count: int) -> tuple[Ledger, SessionBuilder]:
    ledger = Ledger.open(":memory:")
    session = SessionBuilder(ledger)
    for n in range(count):
        content, _ = tool_output("json", f"t{n}", 2_000)
        steps = ((Call("search", {"q": f"copper {n}"}, content),),)
        session.turn(TurnScript(f"What is copper doing, take {n}?", steps, f"Copper {n}."))
    session.pending("And the copper price now?")
    return ledger, session


def test_advancing_reads_only_the_new_entries_and_extends_the_card_index() -> None:
    ledger, session = closed_turns(12)
    try:
        chain = session.chain()
        index = build_turn_index(chain)
        capacity = profile(8_000)
        request_of(index, capacity)
        before = card_index(index, tokens_per_char(capacity))
        content, _ = tool_output("text", "next", 900)
        session._steps(((Call("search", {"q": "copper now"}, content),),))
        session.pending("Compare it with last week.")
        grown = session.chain()
        # the new turn's first step and the next directive are new; the rest was read once
        seen = [Untouchable(e) for e in grown[: len(chain) - 1]]
        advanced = advance_turn_index(index, [*seen, *grown[len(chain) - 1 :]])
        assert advanced.turns[:-2] == index.turns[:-1]
        assert all(a is b for a, b in zip(advanced.turns[:-2], index.turns, strict=False))
        after = card_index(advanced, tokens_per_char(capacity))
        assert after.store is before.store  # extended in place: one more card, not a rebuild
        assert after.size == before.size + 1
        assert request_of(advanced, capacity) == request_of(legacy(advanced), capacity)
        assert before.corpus is None  # the older view knows its corpus moved on
        assert request_of(index, capacity) == request_of(legacy(index), capacity)
    finally:
        ledger.close()


def test_a_chain_that_does_not_continue_the_index_is_indexed_anew() -> None:
    ledger, session = closed_turns(6)
    try:
        index = build_turn_index(session.chain())
        request_of(index, profile(8_000))
        elsewhere = SessionBuilder(ledger)
        elsewhere.turn(TurnScript("Something else entirely", (), "Yes."))
        other = advance_turn_index(index, elsewhere.chain())
        assert other == build_turn_index(elsewhere.chain())
        assert MEMO_KEY not in other.memo.get("lineage", {})  # nothing carried across sessions
        # an edit of turn 3: the chain now branches off before it
        third = [e for e in session.chain() if isinstance(e.payload, Directive)][2]
        ledger.append(session.session, Directive(text="An edited third ask"), parent=third.parent)
        branch = session.chain()
        edited = advance_turn_index(index, branch)
        assert edited == build_turn_index(branch) and len(edited.turns) == 3
        assert request_of(edited, profile(8_000)) == request_of(legacy(edited), profile(8_000))
    finally:
        ledger.close()


def test_card_less_turns_tie_the_card_index_to_its_ratio() -> None:
    ledger = Ledger.open(":memory:")
    try:
        session = SessionBuilder(ledger)
        long_ask = "Please look at the copper price and " + "tell me more about it " * 30
        for n in range(5):
            session.turn(TurnScript(f"{long_ask} {n}", (), "Done.", "completed", card=n % 2 == 0))
        session.pending("copper again")
        index = build_turn_index(session.chain())
        narrow, wide = profile(8_000, ratio=0.2), profile(8_000, ratio=0.5)
        assert request_of(index, narrow) == request_of(legacy(index), narrow)
        assert request_of(index, wide) == request_of(legacy(index), wide)
        assert card_index(index, 0.5).ratio == 0.5
    finally:
        ledger.close()
