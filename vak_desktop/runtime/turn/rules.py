"""The rules that keep a small model honest inside a turn (spec §6, §7), kept out of the loop.

`turn.py` runs steps; after each step it asks `TurnRules` what happens next:

- fences in the step's text converge on Presentation entries (the fallback for models without
  tool calling), through the same gate a card call passes;
- after tool calls: three consecutive batches of nothing but repeated cards close the turn on
  that card; a second `[freshness-check]` or `[topic-mismatch]` strike fails closed;
- a step asking for nothing but calls this turn already made, of tools whose result cannot
  have changed (`ToolTraits.pure`: recall, session_search, find_tools), is not run again:
  each call gets a result saying where its first result is, and the next step can only
  answer, told the request again (`[repeat-call]`);
- after tool calls that performed the asked-for action and found something: one
  `[answer-check]` nudge telling the next step to answer with it (`answering.py`);
- after a step with no tool call: a text that is no answer (`answering.not_an_answer`: a JSON
  call, the tool list, the turn's own nudges echoed, a tool's name alone) gets one
  `[plain-answer]` redo without tools, then closes with the answer Vak composes from the
  turn's find (`answering.composed_answer`), or with a statement naming what came back;
  an empty step gets one `[empty-step]` redo (quoting the request after tool results)
  unless a card was already written (a card-only turn is a complete answer); a live-data answer with nothing
  observed gets one `[freshness-check]` redo; a verbatim repeat of an earlier answer gets a
  `[steering-drift]` nudge, and the third in a row ends the turn degraded.

A strike is counted from the ledger (interception results and nudges of the turn), so what
decided a turn's ending can be read back from its entries. A turn that fails closed ends with a
system-authored step (model "vak") that says so instead of a wrong card or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    EvidenceBody,
    Nudge,
    Presentation,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.planning.drift import (
    EMPTY_STEP,
    FRESHNESS_CHECK,
    STEERING_DRIFT,
    TOPIC_MISMATCH,
    admits_no_live_value,
    empty_step_nudge,
    freshness_nudge,
    freshness_statement,
    mismatch_statement,
    repeated_narration,
    seeks_live_data,
    steering_nudge,
)
from vak_desktop.context.planning.turn_cards import card_of, is_card_tool
from vak_desktop.context.planning.turns import Turn, split_turns
from vak_desktop.context.presentations.library import CardLibrary
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.presentations import (
    FenceOutcome,
    Observes,
    converge_fences,
    last_figure,
    observed,
    parse_ack,
)
from vak_desktop.runtime.turn.answer_rules import (
    CONTINUE,
    FAILED_CLOSED,
    AnswerRules,
    Next,
    strikes,
    turn_calls,
    turn_results,
)
from vak_desktop.runtime.turn.answering import (
    PLAIN_ANSWER,
    REPEAT_CALL,
    plain_answer_nudge,
    repeat_call_nudge,
)

SYSTEM_AUTHOR = "vak"  # the `model` of a step the runtime wrote itself
REPEAT_BATCHES = 3  # consecutive all-repeat card batches that close the turn on that card
DRIFT_EVENTS = 3  # consecutive verbatim repeats of an earlier answer that end the turn
REPEATED_CARDS = "repeated_cards"  # Activity types this module writes
MODEL_DRIFT = "model_drift"


class TurnRules(AnswerRules):
    """One turn's bookkeeping of the §6/§7 rules (a new one per turn)."""

    def __init__(
        self,
        ledger: Ledger,
        session: str,
        library: CardLibrary,
        observes: Observes,
        specs: Sequence[ToolSpec] = (),
    ):
        self.specs = tuple(specs)
        self.offered = tuple(s.name for s in specs)  # the tools the turn can call
        self.described = tuple(s.description for s in specs)  # (a tool list printed back)
        self.ledger = ledger
        self.session = session
        self.library = library
        self.observes = observes
        self.repeat_batches = 0
        self.empty_redone = False
        self.drift_events = 0

    def fences(self, step: Entry) -> FenceOutcome:
        """Write the cards the step's text carries as ```vak fences."""
        return converge_fences(self.ledger, self.session, step, self.library, self.observes)

    def after_calls(self, calls: Sequence[ToolCall], fences: FenceOutcome) -> Next:
        """After a step's tool calls ran and were recorded (its fences converged before)."""
        chain, turn = self._turn()
        closed = self._fail_closed(chain, turn)
        if closed is not None:
            return closed
        if fences.intercepted:
            return self._strike(chain, turn, _tag_of(fences.intercepted), fences.intercepted)
        results = turn_results(turn)
        repeats = [
            is_card_tool(c.name)
            and c.id in results
            and (parse_ack(results[c.id].content) or {}).get("repeat") is True
            for c in calls
        ]
        self.repeat_batches = self.repeat_batches + 1 if calls and all(repeats) else 0
        if self.repeat_batches < REPEAT_BATCHES:
            return self._answer_due(turn, calls, results)
        self.ledger.append(
            self.session,
            Activity(
                type=REPEATED_CARDS,
                message=f"{REPEAT_BATCHES} batches in a row repeated a card already shown: "
                "the turn closes on that card",
                detail={"turn": turn.turn_id},
            ),
        )
        return Next(close=True)

    def repeated(
        self, calls: Sequence[ToolCall], pure: Callable[[str], bool]
    ) -> dict[str, ToolResult]:
        """The earlier result of each of `calls` that repeats, argument for argument, a call
        of a `pure` tool this turn already made and that did not fail, by the repeat's id."""
        _, turn = self._turn()
        results = turn_results(turn)
        earlier: dict[tuple[str, str], ToolResult] = {}
        for call in turn_calls(turn):
            result = results.get(call.id)
            if result is not None and not result.is_error and pure(call.name):
                earlier.setdefault(_call_key(call), result)
        return {c.id: earlier[_call_key(c)] for c in calls if _call_key(c) in earlier}

    def after_repeats(self, calls: Sequence[ToolCall]) -> Next:
        """A step that asked for nothing but calls already made (`repeated`), which were
        not run again: the next step can only answer, told the request again. Seen on the
        real 1.5B (LoCoMo conv-26, issue #22): the same `recall {"turn": 39}` four times, or
        `find_tools` five, in 9 of 16 questions, until the step budget ran out."""
        _, turn = self._turn()
        nudge = Nudge(REPEAT_CALL, repeat_call_nudge(calls, turn.directive.text))
        return Next(nudge=nudge, bare=True)

    def after_answer(self, text: str, fences: FenceOutcome) -> Next:
        """After a step with no tool call (its fences already converged)."""
        chain, turn = self._turn()
        if fences.intercepted:
            return self._strike(chain, turn, _tag_of(fences.intercepted), fences.intercepted)
        carded = any(isinstance(e.payload, Presentation) for e in turn.entries)
        if not text.strip():
            if carded:
                return CONTINUE  # the card is the answer
            if not self.empty_redone:
                self.empty_redone = True
                request = turn.directive.text if turn_results(turn) else ""
                return Next(nudge=Nudge(EMPTY_STEP, empty_step_nudge(request)))
            if self.turn_find(turn) is not None:  # the find answers for the silent model
                return self.unanswered(turn, text, "empty")
            return Next(close=True, outcome="degraded", error="the model returned no answer")
        directive = turn.directive.text
        why = self.not_an_answer(text, turn)
        if why:  # never the answer; an asked-for action not yet performed comes first
            acted = self._unperformed(chain, turn, directive)
            if acted is not None:
                return acted
            if strikes(turn, PLAIN_ANSWER) == 0:
                return Next(nudge=Nudge(PLAIN_ANSWER, plain_answer_nudge(why)), bare=True)
            return self.unanswered(turn, text, why)
        ungrounded = self._ungrounded(turn, text)
        if ungrounded is not None:
            return ungrounded
        acted = self._unperformed(chain, turn, directive)
        if acted is not None:
            return acted
        if (
            not carded
            and seeks_live_data(directive, lexicons())
            and not observed(turn, self.observes)
            and not admits_no_live_value(text, lexicons())
        ):
            return self._strike(chain, turn, FRESHNESS_CHECK, freshness_nudge(directive))
        earlier = split_turns(chain)[:-1]
        repeated = repeated_narration(text, [card_of(t, FALLBACK_TOKENS_PER_CHAR) for t in earlier])
        if repeated is None:
            self.drift_events = 0
            return CONTINUE
        self.drift_events += 1
        self.ledger.append(
            self.session,
            Activity(
                type=MODEL_DRIFT,
                message="the answer repeats an earlier turn's answer word for word",
                detail={"repeats": repeated.turn_id, "event": self.drift_events},
            ),
        )
        if self.drift_events < DRIFT_EVENTS:
            return Next(nudge=Nudge(STEERING_DRIFT, steering_nudge(directive)), drift=True)
        return Next(
            close=True,
            outcome="degraded",
            error=f"the model repeated an earlier answer {DRIFT_EVENTS} times in a row",
            statement=(
                "The model kept repeating an earlier answer instead of answering this request, "
                "so the turn was stopped. Ask again, or try another model."
            ),
            drift=True,
        )

    def _strike(self, chain: list[Entry], turn: Turn, tag: str, text: str) -> Next:
        """One repair per check: the first strike is a nudge, the second fails closed."""
        if strikes(turn, tag) == 0:
            return Next(nudge=Nudge(tag, text))
        return self._closing(chain, turn, tag)

    def _fail_closed(self, chain: list[Entry], turn: Turn) -> Next | None:
        for tag in (FRESHNESS_CHECK, TOPIC_MISMATCH):
            if strikes(turn, tag) >= 2:
                return self._closing(chain, turn, tag)
        return None

    def _closing(self, chain: list[Entry], turn: Turn, tag: str) -> Next:
        if tag == FRESHNESS_CHECK:
            statement = freshness_statement(last_figure(chain, turn))
            error = "no current value was retrieved after one repair"
        else:
            quotes = [
                carry(e.payload.content, e.id).text
                for e in turn.entries
                if isinstance(e.payload, EvidenceBody)
                and not e.payload.is_error
                and self.observes(e.payload.tool_name)
            ]
            statement = mismatch_statement(quotes)
            error = "the cards did not match the retrieved evidence after one repair"
        self.ledger.append(
            self.session,
            Activity(
                type=FAILED_CLOSED, message=error, detail={"check": tag, "turn": turn.turn_id}
            ),
        )
        return Next(close=True, outcome="degraded", error=error, statement=statement)


def system_step(text: str) -> AssistantStep:
    """A step the runtime authors itself (a fail-closed statement), marked as such."""
    return AssistantStep(text=text, model=SYSTEM_AUTHOR, done_reason="fail_closed")


def runtime_call_step(call: ToolCall) -> AssistantStep:
    """A step whose call the runtime made itself (the asked search), marked as such."""
    return AssistantStep(
        text="", tool_calls=(call,), model=SYSTEM_AUTHOR, done_reason="runtime_call"
    )


def _tag_of(nudge: str) -> str:
    return FRESHNESS_CHECK if nudge.startswith(f"[{FRESHNESS_CHECK}]") else TOPIC_MISMATCH


def _call_key(call: ToolCall) -> tuple[str, str]:
    """A call's tool and arguments, the same however its arguments' keys were ordered."""
    return call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)
