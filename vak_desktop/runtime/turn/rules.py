"""The rules that keep a small model honest inside a turn (spec §6, §7), kept out of the loop.

`turn.py` runs steps; after each step it asks `TurnRules` what happens next:

- fences in the step's text converge on Presentation entries (the fallback for models without
  tool calling), through the same gate a card call passes;
- after tool calls: three consecutive batches of nothing but repeated cards close the turn on
  that card; a second `[freshness-check]` or `[topic-mismatch]` strike fails closed;
- after tool calls that performed the asked-for action and found something: one
  `[answer-check]` nudge telling the next step to answer with it (`answering.py`);
- after a step with no tool call: a text that is no answer (`answering.not_an_answer`: a JSON
  call, the tool list, the turn's own nudges echoed, a tool's name alone) gets one
  `[plain-answer]` redo without tools, then closes with the answer Vak composes from the
  turn's find (`answering.composed_answer`), or with a statement naming what came back;
  an empty step gets one `[empty-step]` redo unless a card was
  already written (a card-only turn is a complete answer); a live-data answer with nothing
  observed gets one `[freshness-check]` redo; a verbatim repeat of an earlier answer gets a
  `[steering-drift]` nudge, and the third in a row ends the turn degraded.

A strike is counted from the ledger (interception results and nudges of the turn), so what
decided a turn's ending can be read back from its entries. A turn that fails closed ends with a
system-authored step (model "vak") that says so instead of a wrong card or nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.evidence.text_calls import machine_text
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
from vak_desktop.context.planning.actions import (
    ACTION_CHECK,
    action_statement,
    requested_tool,
    requested_tools,
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
from vak_desktop.runtime.turn.answering import (
    ANSWER_CHECK,
    ANSWER_GROUNDING,
    PLAIN_ANSWER,
    answer_check_nudge,
    call_nudge,
    composed_answer,
    failed_call_statement,
    first_find,
    found,
    grounded,
    grounding_nudge,
    not_an_answer,
    plain_answer_nudge,
    referred_value,
)

SYSTEM_AUTHOR = "vak"  # the `model` of a step the runtime wrote itself
REPEAT_BATCHES = 3  # consecutive all-repeat card batches that close the turn on that card
DRIFT_EVENTS = 3  # consecutive verbatim repeats of an earlier answer that end the turn
REPEATED_CARDS = "repeated_cards"  # Activity types this module writes
FAILED_CLOSED = "failed_closed"
MODEL_DRIFT = "model_drift"


@dataclass(frozen=True)
class Next:
    """What the turn does after a step: go on (maybe after a nudge), or close."""

    close: bool = False
    outcome: str = "completed"
    error: str = ""
    statement: str = ""  # a system-authored step written before closing
    nudge: Nudge | None = None
    drift: bool = False  # a model-drift event (the instruction-failure hook is told)
    failed_instruction: str = ""  # an explicit instruction not followed (horizon feedback)
    bare: bool = False  # the next step is sent without tools: it can only answer
    composed: bool = False  # the statement is an answer Vak composed from the turn's find
    required: bool = False  # the next step must call a tool (where the server can insist)
    run: ToolCall | None = None  # a call Vak runs itself (the asked search, after a repair)


CONTINUE = Next()


def strikes(turn: Turn, tag: str) -> int:
    """How many times the turn was already intercepted by the check tagged `tag`."""
    marker = f"[{tag}]"
    count = 0
    for entry in turn.entries:
        payload = entry.payload
        if (isinstance(payload, ToolResult) and payload.is_error and marker in payload.content) or (
            isinstance(payload, Nudge) and payload.tag == tag
        ):
            count += 1
    return count


class TurnRules:
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

    def _turn(self) -> tuple[list[Entry], Turn]:
        chain = self.ledger.chain_to_root(self.session)
        return chain, split_turns(chain)[-1]

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
        results = {
            e.payload.tool_call_id: e.payload
            for e in turn.entries
            if isinstance(e.payload, ToolResult)
        }
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
                return Next(nudge=Nudge(EMPTY_STEP, empty_step_nudge()))
            return Next(close=True, outcome="degraded", error="the model returned no answer")
        directive = turn.directive.text
        why = self.not_an_answer(text, turn)
        if why:  # never the answer; an asked-for action not yet performed comes first
            acted = self._unperformed(chain, turn, directive)
            if acted is not None:
                return acted
            if strikes(turn, PLAIN_ANSWER) == 0:
                return Next(nudge=Nudge(PLAIN_ANSWER, plain_answer_nudge()), bare=True)
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

    def not_an_answer(self, text: str, turn: Turn | None = None) -> str:
        """Why `text`, a step's whole text, cannot be the answer ("" when it can)."""
        if turn is None:
            turn = self._turn()[1]
        nudges = [e.payload.text for e in turn.entries if isinstance(e.payload, Nudge)]
        return not_an_answer(text, nudges, self.described, self.offered)

    def withheld(self, text: str) -> str:
        """Why a step's text (a step without tool calls) is kept out of the answer: it is no
        answer (`not_an_answer`), or it reports results of an asked-for action that nothing in
        the turn performed (the 0.5B "found" `/home/user/documents/logs/auth12.log`)."""
        turn = self._turn()[1]
        why = self.not_an_answer(text, turn)
        if why or not text.strip():
            return why
        tool = requested_tool(turn.directive.text, self.offered, lexicons())
        if tool is not None and not self._performed(turn, tool):
            return "a report of a search no tool call made"
        return ""

    def _performed(self, turn: Turn, tool: str) -> bool:
        called = {
            c.name
            for e in turn.entries
            if isinstance(e.payload, AssistantStep)
            for c in e.payload.tool_calls
        }
        return bool(called & {"grep", "glob", "read", tool})

    def unanswered(self, turn: Turn | None, text: str, why: str) -> Next:
        """The turn ends without a usable answer from the model: with the answer Vak composes
        from the turn's find when a result holds what was asked for, else a statement."""
        if turn is None:
            turn = self._turn()[1]
        hit = self.turn_find(turn)
        if hit is not None:
            return Next(
                close=True,
                outcome="degraded",
                error=f"the model's answer was {why}; Vak composed it from the `{hit[0].name}` "
                "result",
                statement=composed_answer(
                    hit[0], hit[1], why, turn.directive.text, self._said_before(turn)
                ),
                composed=True,
            )
        if machine_text(text):
            statement = failed_call_statement(text)
        else:
            statement = (
                f"The model's reply was {why}, not an answer, and no tool result of this turn "
                "holds what was asked for. Ask again, or try another model."
            )
        return Next(
            close=True,
            outcome="degraded",
            error=f"the model's answer was {why}",
            statement=statement,
        )

    def _said_before(self, turn: Turn) -> list[str]:
        """What the user said in earlier turns (their directives), oldest first."""
        chain = self.ledger.chain_to_root(self.session)
        return [t.directive.text for t in split_turns(chain)[:-1] if t.turn_id != turn.turn_id]

    def turn_find(self, turn: Turn) -> tuple[ToolCall, ToolResult] | None:
        """The turn's first tool result that performed the asked-for action and found
        something (`_find` over every call of the turn so far)."""
        steps = [e.payload for e in turn.entries if isinstance(e.payload, AssistantStep)]
        calls = [c for step in steps for c in step.tool_calls]
        results = {
            e.payload.tool_call_id: e.payload
            for e in turn.entries
            if isinstance(e.payload, ToolResult)
        }
        return self._find(turn.directive.text, calls, results)

    def _answer_due(
        self, turn: Turn, calls: Sequence[ToolCall], results: dict[str, ToolResult]
    ) -> Next:
        """The asked-for action was performed and found something: the next step is told to
        answer with it (`[answer-check]`, once a turn; `answering.py`)."""
        if strikes(turn, ANSWER_CHECK):
            return CONTINUE
        hit = self._find(turn.directive.text, calls, results)
        if hit is None:
            return CONTINUE
        return Next(nudge=Nudge(ANSWER_CHECK, answer_check_nudge(hit[0].name, hit[1])))

    def _find(
        self, directive: str, calls: Sequence[ToolCall], results: dict[str, ToolResult]
    ) -> tuple[ToolCall, ToolResult] | None:
        """The first result of `calls` that performed the asked-for action and found
        something: the action's most fitting tool, or a file read (a glob listing is no
        answer to "search my files for …", though glob performs the search)."""
        asked = requested_tools(directive, self.offered, lexicons())
        if not asked:
            return None
        # grep's lines hold content whichever tool the words ask for first ("which file has
        # …" is a listing's words; a glob listing of names answers it only when asked first)
        acting = {asked[0], "read"} | ({"grep"} & set(asked))
        return next(
            (
                (c, results[c.id])
                for c in calls
                if c.name in acting and c.id in results and found(results[c.id])
            ),
            None,
        )

    def _ungrounded(self, turn: Turn, text: str) -> Next | None:
        """After `[answer-check]`, an answer that says nothing of the find: one redo."""
        if strikes(turn, ANSWER_CHECK) == 0:
            return None
        hit = self.turn_find(turn)
        if hit is None:
            return None
        call, result = hit
        asked_of = " ".join(str(v) for v in call.arguments.values())  # a read's path, say
        if grounded(text, f"{first_find(result)} {asked_of}", turn.directive.text):
            return None
        if strikes(turn, ANSWER_GROUNDING) == 0:
            return Next(nudge=Nudge(ANSWER_GROUNDING, grounding_nudge(result)))
        return self.unanswered(turn, text, "silent on what the search found")

    def _unperformed(self, chain: list[Entry], turn: Turn, directive: str) -> Next | None:
        """An asked-for action (`context/planning/actions.py`) the turn never performed: one
        nudge naming the tool, then the degraded outcome; both feed the horizon feedback."""
        tool = requested_tool(directive, self.offered, lexicons())
        if tool is None:
            return None
        if self._performed(turn, tool):
            return None
        instruction = f"call the `{tool}` tool the request asks for"
        if strikes(turn, ACTION_CHECK) == 0:
            asked = requested_tools(directive, self.offered, lexicons())
            nudge = Nudge(ACTION_CHECK, call_nudge(asked, self.specs, directive))
            return Next(nudge=nudge, failed_instruction=instruction, required=True)
        searched = self._search_for_model(turn)
        if searched is not None:
            return Next(run=searched, failed_instruction=instruction)
        self.ledger.append(
            self.session,
            Activity(
                type=FAILED_CLOSED,
                message=f"the asked-for `{tool}` call was not made after one repair",
                detail={"check": ACTION_CHECK, "turn": turn.turn_id},
            ),
        )
        return Next(
            close=True,
            outcome="degraded",
            error=f"the model did not call `{tool}` after one repair",
            statement=action_statement(tool),
            failed_instruction=instruction,
        )

    def _search_for_model(self, turn: Turn) -> ToolCall | None:
        """The asked-for search Vak runs itself once the model has not made it after one
        repair: grep for the one value of the earlier message the directive refers to
        (`answering.referred_value`), if grep is offered and such a value exists."""
        if "grep" not in self.offered:
            return None
        value = referred_value(turn.directive.text, self._said_before(turn))
        if value is None:
            return None
        return ToolCall(f"vak_search_{turn.turn_id[-12:]}", "grep", {"pattern": re.escape(value)})

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
