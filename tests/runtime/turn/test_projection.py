"""A running session's TurnIndex is advanced across its requests, never rebuilt, never stale.

The runner keeps each session's latest index (`TurnIndexes`): every step of every turn advances
it over the entries written since, and the card index built by the first request is the one
later requests extend. What the model is sent is exactly what a per-request rebuild sends, and
after an edit branches the chain, or for another session, the kept index is not reused.
"""

from __future__ import annotations

import re

from tests.context.sessions import profile
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.card_index import MEMO_KEY, CardIndex
from vak_desktop.context.planning.turns import LINEAGE, build_turn_index
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.sessions.branches import branch_parent
from vak_desktop.runtime.sessions.interchange import import_openai
from vak_desktop.runtime.turn.projection import TurnIndexes, project_turn

BINDING = ModelBinding(provider="scripted", model="m", details=None)


def conversation(turns: int) -> dict[str, object]:
    messages: list[dict[str, object]] = []
    for n in range(1, turns + 1):
        messages.append({"role": "user", "content": f"Question {n} about copper part {n}?"})
        messages.append({"role": "assistant", "content": f"Part {n}: raise the cache. " * 4})
    return {"messages": messages}


def store_of(runner: TurnRunner, session: str) -> object:
    """The card index store the runner's kept index for `session` uses."""
    index = runner.indexes._latest[session]
    own = index.memo.get(MEMO_KEY)
    if isinstance(own, CardIndex):
        return own.store
    previous, _ = index.memo[LINEAGE][MEMO_KEY]
    return previous.store


def _timeless(tail: str) -> str:
    """The tail without its "(Today's date: …)" clock line, which ticks on its own."""
    return re.sub(r"\(Today's date: .*?Z\.", "(Now)", tail)


async def test_the_runner_advances_one_index_per_session_and_sends_what_a_rebuild_sends(
    ledger: Ledger,
) -> None:
    session = import_openai(ledger, conversation(30), title="imported").session
    ledger.append(session, profile(2_500, output_reserve=256, provider="scripted", model="m"))
    provider = ScriptedProvider()
    runner = TurnRunner(ledger, provider, default_tools())
    provider.enqueue(Scripted(calls=[("recall", {"turn": 2})]), Scripted(text="Found it."))
    async for _ in runner.run(session, "What did I ask about part 2 earlier?", BINDING):
        pass
    first = store_of(runner, session)
    provider.enqueue(Scripted(text="Part 31 is new."))
    async for _ in runner.run(session, "And part 31 of the copper build?", BINDING):
        pass
    assert store_of(runner, session) is first  # the card index was extended, not rebuilt
    kept = runner.indexes._latest[session]  # as the turn's last request left it
    assert len(kept.turns) == 32
    assert kept == build_turn_index(ledger.chain_to_root(session)[: kept.length])
    tools = default_tools().specs()
    planned = project_turn(
        ledger,
        session,
        BINDING,
        system="S",
        tools=tools,
        capacity=runner.capacity,
        indexes=runner.indexes,
    )
    fresh = project_turn(
        ledger, session, BINDING, system="S", tools=tools, capacity=runner.capacity
    )
    # the next turn's plan (the tail's clock line may tick a second between the two)
    assert (planned.plan, _timeless(planned.tail)) == (fresh.plan, _timeless(fresh.tail))
    await runner.aclose()


async def test_an_edit_or_another_session_never_reuses_a_kept_index(ledger: Ledger) -> None:
    session = import_openai(ledger, conversation(12), title="one").session
    other = import_openai(ledger, conversation(5), title="two").session
    indexes = TurnIndexes(keep=1)
    capacity = TurnRunner(ledger, ScriptedProvider(), default_tools()).capacity
    tools = default_tools().specs()

    def plans(where: str) -> None:
        kept = project_turn(
            ledger, where, BINDING, system="S", tools=tools, capacity=capacity, indexes=indexes
        )
        fresh = project_turn(ledger, where, BINDING, system="S", tools=tools, capacity=capacity)
        assert (kept.plan, kept.tail) == (fresh.plan, fresh.tail)
        assert indexes._latest[where] == build_turn_index(ledger.chain_to_root(where))

    plans(session)
    plans(other)  # keep=1: the first session's index is dropped
    assert list(indexes._latest) == [other]
    plans(session)
    chain = ledger.chain_to_root(session)
    fifth = [e for e in chain if e.kind == "directive"][4]
    ledger.append(
        session, Directive(text="An edited fifth question"), branch_parent(chain, fifth.id) or None
    )
    plans(session)
    assert len(indexes._latest[session].turns) == 5
