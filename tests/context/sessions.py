"""Real sessions for context-engine tests: turns appended to a real `Ledger` the way the runtime
writes them (directive, assistant steps with tool calls, EvidenceBody + ToolResult as carried,
the answer, a TurnCard built by `build_turn_card`, the closing Activity), plus stored packets,
resets and pinned capacity profiles. Tool results come in the shapes the digests know (search
hits, JSON, text, command output, one long line, errors) at any size, built cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Compaction,
    Directive,
    EvidenceBody,
    Ewma,
    Horizon,
    Payload,
    Reset,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import TURN_CLOSED, Turn, TurnIndex, build_turn_index
from vak_desktop.ledger import Entry, Ledger

SHAPES = ("search", "json", "text", "command", "line", "error")
_FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "


def filler(chars: int) -> str:
    """`chars` characters of plain prose (no newline)."""
    repeats = chars // len(_FILLER) + 1
    return (_FILLER * repeats)[:chars]


def search_result(seed: str, chars: int, hits: int = 10) -> str:
    """A search API response of about `chars` characters: titles, URLs and long bodies."""
    body = max(0, chars // max(1, hits) - 120)
    return json.dumps(
        {
            "query": f"query {seed}",
            "results": [
                {
                    "title": f"Result {i} for {seed}",
                    "url": f"https://example.org/{seed}/{i}",
                    "content": filler(body),
                    "score": round(0.9 - i / 100, 2),
                }
                for i in range(hits)
            ],
        }
    )


def tool_output(shape: str, seed: str, chars: int) -> tuple[str, bool]:
    """(content, is_error) of one tool result of `shape`, about `chars` characters long."""
    if shape == "search":
        return search_result(seed, chars), False
    if shape == "json":
        rows = max(1, chars // 60)
        items = [{"id": i, "name": f"{seed}-{i}", "note": filler(30)} for i in range(rows)]
        return json.dumps({"seed": seed, "items": items, "meta": {"rows": rows}}), False
    if shape == "text":
        lines = max(1, chars // 70)
        body = "\n".join(f"{seed} line {i}: {filler(50)}" for i in range(lines))
        return f"# Notes on {seed}\n\nFirst paragraph about {seed}.\n\n## Details\n{body}", False
    if shape == "command":
        lines = max(1, chars // 60)
        out = "\n".join(f"{seed} output {i} {filler(40)}" for i in range(lines))
        return f"exit code: 0\n{out}", False
    if shape == "line":
        return f"{seed}:" + filler(chars), False
    return f"error: {seed} failed: connection refused", True


@dataclass(frozen=True)
class Call:
    """One tool call a scripted step makes, and the result its tool returned."""

    name: str
    arguments: dict[str, Any]
    result: str
    is_error: bool = False


@dataclass(frozen=True)
class TurnScript:
    """A turn as the ledger should record it."""

    directive: str
    steps: tuple[tuple[Call, ...], ...] = ()  # each step's (parallel) tool calls, in order
    answer: str = ""
    outcome: str | None = "completed"  # None: the turn never closed (no card, no close mark)
    card: bool = True  # write the TurnCard at close (old ledgers may lack it)


@dataclass
class SessionBuilder:
    """Appends scripted turns to one session of a real ledger."""

    ledger: Ledger
    card_ratio: float = 0.25  # the tokens/char the runtime had when it closed each turn
    model: str = "m"  # the model bound when each turn was given (`profile`'s by default)
    session: str = ""
    turn_ids: list[str] = field(default_factory=list)
    _calls: int = 0

    def __post_init__(self) -> None:
        if not self.session:
            self.session = self.ledger.create_session().id

    def append(self, payload: Payload) -> Entry:
        return self.ledger.append(self.session, payload)

    def _steps(self, steps: Sequence[Sequence[Call]]) -> list[Entry]:
        written = []
        for calls in steps:
            tool_calls = []
            for call in calls:
                self._calls += 1
                tool_calls.append(ToolCall(f"call_{self._calls}", call.name, call.arguments))
            written.append(
                self.append(AssistantStep(tool_calls=tuple(tool_calls), model=self.model))
            )
            for tool_call, call in zip(tool_calls, calls, strict=True):
                body = self.append(
                    EvidenceBody(
                        tool_call.id, call.name, call.result, len(call.result), call.is_error
                    )
                )
                carried = carry(call.result, body.id)
                written.append(body)
                written.append(
                    self.append(
                        ToolResult(
                            tool_call.id,
                            call.name,
                            carried.text,
                            body.id,
                            len(call.result),
                            call.is_error,
                            carried.windowed,
                        )
                    )
                )
        return written

    def turn(self, script: TurnScript) -> str:
        """Append a whole turn; returns its id (the directive entry's)."""
        directive = Directive(text=script.directive, model=self.model, provider="p")
        head = self.append(directive)
        self.turn_ids.append(head.id)
        entries = self._steps(script.steps)
        if script.answer:
            entries.append(self.append(AssistantStep(text=script.answer, model=self.model)))
        if script.outcome is None:
            return head.id
        if script.card:
            turn = Turn(head.id, len(self.turn_ids) - 1, directive, tuple(entries))
            self.append(build_turn_card(turn, script.outcome, self.card_ratio))
        self.append(Activity(type=TURN_CLOSED, detail={"outcome": script.outcome}))
        return head.id

    def pending(self, directive: str, steps: Sequence[Sequence[Call]] = ()) -> str:
        """The running turn: its directive and any steps already taken, not closed."""
        head = self.append(Directive(text=directive, model=self.model, provider="p"))
        self.turn_ids.append(head.id)
        self._steps(steps)
        return head.id

    def said(self, text: str, at: str) -> str:
        """A turn that is only a message said at `at` (an import's, with no answer yet)."""
        head = self.append(Directive(text=text, said_at=at))
        self.turn_ids.append(head.id)
        return head.id

    def compaction(self, first: int, last: int, summary: str, model: str = "m") -> Entry:
        """A stored packet over turns `first`..`last` (1-based, inclusive)."""
        return self.append(
            Compaction(self.turn_ids[first - 1], self.turn_ids[last - 1], summary, model)
        )

    def reset(self, handoff: str) -> Entry:
        return self.append(Reset(handoff=handoff, reason="test"))

    def chain(self) -> list[Entry]:
        return self.ledger.chain_to_root(self.session)

    def index(self) -> TurnIndex:
        return build_turn_index(self.chain())


def profile(
    horizon: int,
    *,
    output_reserve: int = 512,
    ratio: float = 0.25,
    provider: str = "p",
    model: str = "m",
) -> CapacityProfile:
    """A measured profile: horizon at high confidence and a learned tokens/char."""
    return CapacityProfile(
        provider=provider,
        model=model,
        declared_window=max(horizon, 8_192),
        instruction_horizon=Horizon(horizon, 0.9, "2026-01-01T00:00:00Z"),
        output_reserve=output_reserve,
        tokens_per_char=Ewma(ratio, 5),
        provenance={"source": "test"},
    )
