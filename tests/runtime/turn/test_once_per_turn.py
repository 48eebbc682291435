"""A turn reads its directive once and plans each request once (#22 item 6): the surface, the reset check, the plan (its
refer-back, recall and about-the-conversation cues, drift's content words), the turn rules
(asked-for actions, live data, explicit instructions) and the card at close all take the one
`Reading`. Counted with a real `Lexicons` subclass whose `identify` counts what it is asked
to identify, installed as the runtime's lexicons."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.lexicon import Lexicon, Lexicons, Text, normalise
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, ToolOutput, ToolRegistry, TurnRunner, default_tools
from vak_desktop.runtime import lexicons as runtime_lexicons
from vak_desktop.runtime.tools import ToolContext
from vak_desktop.runtime.turn import projection


@dataclass(frozen=True)
class CountingLexicons(Lexicons):
    """The shipped lexicons, counting each text they identify the languages of."""

    asked: Counter[str] = field(default_factory=Counter, compare=False, repr=False)

    def identify(self, text: Text) -> tuple[Lexicon, ...]:
        self.asked[text.lowered] += 1
        return super().identify(text)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingLexicons]:
    runtime_lexicons.lexicons.cache_clear()
    monkeypatch.setattr(runtime_lexicons, "Lexicons", CountingLexicons)
    installed = runtime_lexicons.lexicons()
    assert isinstance(installed, CountingLexicons)
    yield installed
    runtime_lexicons.lexicons.cache_clear()


async def turn(runner: TurnRunner, session: str, text: str) -> None:
    binding = ModelBinding(provider="scripted", model="m", details=None)
    async for _ in runner.run(session, text, binding):
        pass


async def test_each_turn_reads_its_directive_once(
    ledger: Ledger, counting: CountingLexicons
) -> None:
    directives = [
        "Search my files for the invoice from Kestrel Road, please.",
        "What is the current price of copper right now?",
        "Do that again, but show it as a table card.",
    ]
    provider = ScriptedProvider(*(Scripted(text=f"Answer {n}.") for n in range(len(directives))))
    runner = TurnRunner(ledger, provider, default_tools())
    session = ledger.create_session().id
    for text in directives:
        await turn(runner, session, text)
    cards = [e.payload for e in ledger.entries(session) if isinstance(e.payload, TurnCard)]
    assert len(cards) == len(directives)
    for text in directives:
        assert counting.asked[normalise(text)] == 1, (text, counting.asked[normalise(text)])


async def test_each_request_is_planned_once(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reset check plans the turn before its directive is written; that plan is the turn's
    (it used to be planned again at step 0). Counted by wrapping the real planner."""
    planned: list[str] = []
    real = projection.plan_request

    def counted(*args: Any, **kwargs: Any) -> Any:
        planned.append(args[2].directive.text if args[2] is not None else "")
        return real(*args, **kwargs)

    monkeypatch.setattr(projection, "plan_request", counted)
    calls = [("search", {"q": "kestrel"})]
    provider = ScriptedProvider(
        Scripted(text="First."),
        Scripted(text="", calls=calls),
        Scripted(text="Found it."),
    )
    registry = ToolRegistry([SearchTool()])
    runner = TurnRunner(ledger, provider, registry)
    session = ledger.create_session().id
    await turn(runner, session, "Hello there, what can you do?")
    await turn(runner, session, "Search the web for Kestrel Road.")
    assert Counter(planned) == {
        "Hello there, what can you do?": 1,
        "Search the web for Kestrel Road.": 1,  # one plan for both steps of the turn
    }


class SearchTool:
    spec = ToolSpec("search", "Search the web.", {"type": "object", "properties": {}})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(f"3 results for {arguments.get('q', '')}", False)
