"""One turn's steps: stream a model call, record what it left, run its tools, ask the rules.

`TurnRunner` (`runner.py`) is the long-lived service — sessions, look-ahead, warm requests,
compaction — and owns a turn's first and last writes (the Directive, the close); `TurnLoop`
is one turn in between, in the order it writes to the ledger: each step's AssistantStep and
Receipt as its stream ends, then its tools' results, then whatever the rules decide (a Nudge
and another step, or the close). A turn has a step budget (`answering.step_budget`); its last
step is the `[answer-now]` one, sent without tools to a local model. Calls written as text
run as calls (spec §5 item 7), and a call with an invented name or argument that maps onto a
real tool runs as that tool (`context/evidence/call_repair.py`), each recorded as an Activity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR, is_small
from vak_desktop.context.evidence.call_repair import repair_calls
from vak_desktop.context.evidence.text_calls import adopt_text_calls, machine_text
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Nudge,
    ToolCall,
    ToolResult,
    Usage,
)
from vak_desktop.context.presentations.library import tool_name
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import chooses_tools, is_local
from vak_desktop.providers.errors import ContextOverflow, ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.events import (
    Notice,
    StepFinished,
    TextChunk,
    ToolCallRequested,
    TurnEvent,
)
from vak_desktop.runtime.presentations import acked_card, shown
from vak_desktop.runtime.tools import ToolOutput, record_results, run_tool_calls
from vak_desktop.runtime.tools.surface import ToolSurface
from vak_desktop.runtime.turn.answer_rules import Next
from vak_desktop.runtime.turn.answering import (
    ANSWER_NOW,
    RUNTIME_READ,
    RUNTIME_SEARCH,
    failed_call_statement,
    repeat_result,
    step_budget,
    withheld_activity,
)
from vak_desktop.runtime.turn.cache_watch import CacheWatch, previous_turn_receipt
from vak_desktop.runtime.turn.markup import markup_activity, stray_markup
from vak_desktop.runtime.turn.prefix_record import RecordedPrefix
from vak_desktop.runtime.turn.projection import Projection, project_turn, step_request
from vak_desktop.runtime.turn.recovery import (
    instruction_activity,
    overflow_activity,
    truncated,
    truncation_activity,
)
from vak_desktop.runtime.turn.reset import over_budget_activity
from vak_desktop.runtime.turn.rules import TurnRules, runtime_call_step, system_step
from vak_desktop.runtime.turn.step import (
    StepOutcome,
    output_limit_activity,
    partial_step,
    step_receipt,
    stream_step,
)

if TYPE_CHECKING:
    from vak_desktop.runtime.turn.runner import TurnRunner

BUDGET_SPENT = "step_budget_spent"  # Activity: the answer-now step still asked for tools
# the output cap of a step that must call: the 0.5B wrote its call in ~20 tokens, then card
# lines until the 256-token cap (2 minutes at 2 tok/s on this machine's load)
CALL_TOKENS = 128


@dataclass
class _State:
    """What a turn carries from step to step: its tool surface, its plan, the current model
    call, and whether its one re-plan after a contradiction of the profile is spent."""

    surface: ToolSurface
    projection: Projection | None = None
    ratio: float = FALLBACK_TOKENS_PER_CHAR
    current: StepOutcome | None = None
    recovered: bool = False


class TurnLoop:
    """The steps of one turn of `session`, asking `text`, whose Directive is `turn_id`.
    After `steps()` is exhausted, `outcome`, `error`, `total` and `ratio` say how it ended."""

    def __init__(
        self,
        runner: TurnRunner,
        session: str,
        binding: ModelBinding,
        turn_id: str,
        text: str,
        surface: ToolSurface,
        think: bool | None,
        planned: Projection | None = None,
    ) -> None:
        self.runner, self.ledger = runner, runner.ledger
        self.session, self.binding, self.turn_id, self.text = session, binding, turn_id, text
        self.think = think
        self.state = _State(surface)
        self.state.projection = planned  # the reset check's plan stands unless the prefix moved
        self.outcome, self.error, self.total = "completed", "", Usage()
        self.called: list[str] = []
        self.largest_prompt = 0
        self.call_prompt = 0  # the request in which the model first called a tool
        chain = self.ledger.chain_to_root(session)
        self.watch = CacheWatch(previous_turn_receipt(chain))
        self.prefixes = RecordedPrefix.of(chain)  # what earlier steps' prefixes were
        observes = runner.tools.observes_now
        self.rules = TurnRules(self.ledger, session, runner.cards, observes, runner.tools.specs())

    @property
    def ratio(self) -> float:
        return self.state.ratio

    async def steps(self) -> AsyncIterator[TurnEvent]:
        """Run the turn's steps until it answers, fails, or spends its budget."""
        meter = self.runner.prefix_meter
        measured = None
        if meter is not None:  # the turn's own prefix, counted once per profile
            surface = self.state.surface
            measured = await meter.ensure(
                self.session,
                self.binding,
                system=surface.system,
                tools=surface.tools,
                keep_alive=self.runner.keep_alive,
            )
        self.replan(again=measured is not None)
        assert self.state.projection is not None
        budget = step_budget(self.state.projection.profile)
        self.rules.small = is_small(self.state.projection.profile)  # Vak acts for it sooner
        bare = required = False
        for step in range(budget):
            last = step == budget - 1 and step > 0
            if last:  # the budget's end: one step that can only answer
                nudge = Nudge(ANSWER_NOW, self.rules.answer_now())
                self.ledger.append(self.session, nudge)
                yield Notice(nudge.text)
                bare = True
            try:
                async for event in self._step(step, bare, required):
                    yield event
            except ProviderError as exc:
                self.keep_partial()
                self.outcome, self.error = "failed", str(exc)
                self.ledger.append(
                    self.session, Activity(type="provider_error", message=self.error)
                )
                return
            after = Next()
            async for item in self._record(step, last, bare):
                if isinstance(item, Next):
                    after = item
                else:
                    yield item
            redo = after.nudge
            if redo is not None:
                if last:  # no step is left to redo in
                    after = self._spent("")
                else:
                    self.ledger.append(self.session, redo)
                    yield Notice(redo.text)
                    bare, required = after.bare, after.required
                    continue
            if after.statement:
                self.ledger.append(self.session, system_step(after.statement))
                yield TextChunk(after.statement)
            if after.close or last or not (self.state.current and self.state.current.calls):
                self.outcome, self.error = after.outcome, after.error
                self._finish()
                return
            bare = required = False
        self.outcome, self.error = "degraded", f"stopped after {budget} steps of tool calls"

    async def _record(self, step: int, last: bool, bare: bool) -> AsyncIterator[TurnEvent | Next]:
        """What step `step` left: its entries, its tools' results, then the rules' `Next`."""
        ledger, session, out = self.ledger, self.session, self.state.current
        projection, surface = self.state.projection, self.state.surface
        assert out is not None and out.done is not None and projection is not None
        done, specs = out.done, self.runner.tools.specs()
        if (unmarked := stray_markup(out.text)) != out.text:  # "<tools>\n\nThe hall is …"
            ledger.append(session, markup_activity(out.text, step))
            out.text = unmarked
        adopted = adopt_text_calls(
            out.text, out.calls, specs, key=f"{self.turn_id}:{step}", step=step, invented=True
        )
        if adopted is not None:  # calls written as text run as calls (spec §5 item 7)
            ledger.append(session, adopted.activity)
            out.text, out.calls = adopted.text, list(adopted.calls)
        calls, repaired = repair_calls(out.calls, specs, step=step)
        if repaired is not None:  # `read_file {"q": …}` runs as `read` / `grep` (issue #22)
            ledger.append(session, repaired)
            out.calls = calls
        if adopted is not None:
            for call in out.calls:
                yield ToolCallRequested(call.id, call.name, call.arguments)
        # the text beside a call is judged too: the 0.5B wrote its call, then grep's
        # description paraphrased to the output cap, which was shown (shipment, 2026-12-02)
        withheld = self.rules.not_an_answer(out.text) if out.calls else ""
        withheld = withheld or ("" if out.calls else self.rules.withheld(out.text))
        if withheld:  # never shown as the answer; what was said is kept here
            ledger.append(session, withheld_activity(out.text, withheld, step))
        step_entry = ledger.append(
            session,
            AssistantStep(
                text="" if withheld else out.text,
                thinking=out.thinking,
                tool_calls=tuple(out.calls),
                model=done.model or self.binding.model,
                done_reason=done.done_reason,
                signed_thinking=tuple(out.signed_thinking),
            ),
        )
        receipt = step_receipt(self.binding, out.request, done, projection, step, surface)
        ledger.append(session, receipt)
        recorded = self.prefixes.note(surface.system, out.request.tools)
        if recorded is not None:  # a system text or schema not sent before: kept exactly
            ledger.append(session, recorded)
        if not bare:  # a step without tools is no cache break worth recording
            for activity in self.watch.observe(
                out.request, receipt, projection.profile, self.ratio
            ):
                ledger.append(session, activity)
        self.total = self.total.plus(done.usage)
        self.called += [c.name for c in out.calls]
        self.largest_prompt = max(self.largest_prompt, done.usage.prompt_tokens())
        self.call_prompt = self.call_prompt or (done.usage.prompt_tokens() if out.calls else 0)
        yield StepFinished(step, receipt)
        cut = output_limit_activity(self.binding, out.request, done, projection.profile, step)
        if cut is not None and not out.calls:  # a cut call says so itself (providers)
            ledger.append(session, cut)
            yield Notice(cut.message)
        fences = self.rules.fences(step_entry)
        self.called += [tool_name(t) for t in fences.types]
        for presentation in fences.presented:
            yield shown(ledger, presentation)
        if last and (out.calls or machine_text(out.text)):
            yield self._spent(out.calls[0].name if out.calls else "")
            return
        repeats = self.rules.repeated(out.calls, self._pure) if out.calls else {}
        if out.calls and len(repeats) == len(out.calls):  # asked again: not run, answer now
            outputs = [ToolOutput(repeat_result(repeats[c.id])) for c in out.calls]
            for result in record_results(ledger, session, out.calls, outputs):
                yield result
            after = self.rules.after_repeats(out.calls)
        elif out.calls:
            async for event in run_tool_calls(self.runner.tools, ledger, session, out.calls):
                yield event
                if isinstance(event, Notice):  # a tool's progress while it runs
                    continue
                card = acked_card(ledger, event.name, event.preview, event.is_error)
                if card is not None:
                    yield card
            self.state.surface, misreads = surface.after(out.calls)  # find_tools loads
            for misread in misreads:
                ledger.append(session, misread)
            after = self.rules.after_calls(out.calls, fences)
        else:
            after = self.rules.after_answer(out.text, fences)
        while after.run is not None:  # a call Vak makes itself (`answer_rules`)
            ran = after.run
            async for ready in self._run_for_model(ran):
                yield ready
            failed = after.failed_instruction  # the model's, though Vak then acted
            after = self.rules.after_calls([ran], fences)
            if ran.name == "grep" and not (after.nudge or after.close or after.run):
                after = self._nothing_found(ran)
            after = dataclasses.replace(after, failed_instruction=failed)
        if after.drift:  # near the horizon, a drifting model is a size signal
            self.instruction_failed("answer the current request instead of repeating an old answer")
        if after.failed_instruction:  # an asked-for action not performed
            self.instruction_failed(after.failed_instruction)
        yield after

    def _pure(self, tool: str) -> bool:
        return self.runner.tools.traits(tool).pure

    async def _run_for_model(self, call: ToolCall) -> AsyncIterator[TurnEvent]:
        """Run `call` as a step Vak authors (model "vak"), saying so in an Activity."""
        ledger, session = self.ledger, self.session
        if call.name == "read":
            path = call.arguments.get("path", "")
            kind, message = (
                RUNTIME_READ,
                (
                    f"the search found it in {path}: Vak read the file, so the answer can use "
                    "the lines around the match"
                ),
            )
        else:
            pattern = call.arguments.get("pattern", "")
            kind, message = (
                RUNTIME_SEARCH,
                (
                    f"the model did not make the asked search: Vak ran `{call.name}` for "
                    f"{pattern!r}, the value the request names"
                ),
            )
        detail = {"call": {"name": call.name, "arguments": call.arguments}}
        ledger.append(session, Activity(type=kind, message=message, detail=detail))
        ledger.append(session, runtime_call_step(call))
        yield ToolCallRequested(call.id, call.name, call.arguments)
        self.called.append(call.name)
        async for event in run_tool_calls(self.runner.tools, ledger, session, [call]):
            if not isinstance(event, Notice):
                yield event

    def _nothing_found(self, call: ToolCall) -> Next:
        results = [
            e.payload
            for e in self.ledger.chain_to_root(self.session)[-4:]
            if isinstance(e.payload, ToolResult) and e.payload.tool_call_id == call.id
        ]
        said = results[-1].content.splitlines()[0] if results else "no result"
        statement = (
            f"Vak ran `{call.name}` for “{call.arguments.get('pattern', '')}” itself (the "
            f"value the request names): {said}."
        )
        return Next(
            close=True,
            outcome="degraded",
            error="the asked search found nothing",
            statement=statement,
        )

    def _spent(self, tool: str) -> Next:
        """The budget's last step did not answer: it asked for `tool` again (not run), wrote
        a call as text, or needed a redo no step is left for."""
        out = self.state.current
        assert out is not None
        self.ledger.append(
            self.session,
            Activity(
                type=BUDGET_SPENT,
                message=f"the last step of the turn's budget did not answer ({tool or 'no call'})",
                detail={"turn": self.turn_id, "tool": tool},
            ),
        )
        why = f"a call of `{tool}` after its steps were spent" if tool else ""
        why = why or self.rules.not_an_answer(out.text) or "no answer within its steps"
        after = self.rules.unanswered(None, out.text, why)
        if after.composed:
            return dataclasses.replace(after, error=f"the step budget ran out; {after.error}")
        if tool:
            why = f"its last step asked for `{tool}` again, which was not run"
            statement = f"The model used every step this turn allows without answering ({why}). "
            statement += "Ask again, or try another model."
        elif machine_text(out.text):
            statement = failed_call_statement(out.text)
        else:
            statement = "The model did not answer within the steps this turn allows. Ask again."
        return Next(
            close=True, outcome="degraded", error="the step budget ran out", statement=statement
        )

    def _finish(self) -> None:
        """The turn answered (or closed): the instruction checks and the horizon feedback."""
        projection = self.state.projection
        assert projection is not None
        runner = self.runner
        offered = [spec.name for spec in runner.tools.specs()]
        if runner.without_tools(self.binding):  # fences stand in for the card tools
            offered = [tool_name(kind) for kind in runner.cards.types()]
        for check in runner.instruction_checks:
            instruction = check(self.text, offered, self.called)
            if instruction is not None:
                self.instruction_failed(instruction)
        # followed well above the horizon, again and again: a re-probe is due
        runner.capacity.instruction_followed(
            self.session, self.binding, projection.profile, self.text, self.called, self.call_prompt
        )

    def instruction_failed(self, instruction: str) -> None:
        """An explicit instruction the model did not follow: recorded always; above 0.8 ×
        horizon it lowers the horizon (folded from the record) and asks for a re-probe."""
        projection = self.state.projection
        assert projection is not None
        activity, tightens = instruction_activity(
            instruction, self.largest_prompt, projection.profile, utc_now()
        )
        self.ledger.append(self.session, activity)
        if tightens:
            self.runner.capacity.reprobe(self.binding)

    async def _step(self, step: int, bare: bool, required: bool) -> AsyncIterator[TurnEvent]:
        """Stream one model call into `state.current`. A request that contradicts the profile
        (refused as over-length, or silently cut) is recorded, the turn re-planned against the
        tightened profile and the step sent again — once per turn, never in a loop."""
        state = self.state
        while True:
            assert state.projection is not None
            out = state.current = StepOutcome(self._request(bare, required))
            try:
                async for event in stream_step(
                    self.runner.provider, self.ledger, self.session, out
                ):
                    yield event
            except ContextOverflow as exc:
                if state.recovered or out.text or out.calls:
                    raise
                contradiction = overflow_activity(
                    exc, out.request, state.projection.profile, state.ratio, step
                )
            else:
                assert out.done is not None
                if state.recovered or not truncated(out.done, out.request, state.ratio):
                    return
                contradiction = truncation_activity(
                    out.done,
                    out.request,
                    state.projection.profile,
                    state.ratio,
                    step,
                    text=out.text,
                    thinking=out.thinking,
                    calls=out.calls,
                )
            state.recovered = True
            self.ledger.append(self.session, contradiction)
            yield Notice(contradiction.message)
            self.replan()

    def replan(self, *, again: bool = True) -> None:
        """Plan the turn against the profile the ledger gives now (again after a contradiction;
        at step 0 the reset check's plan stands unless `again`: a measured prefix moved it).
        A plan past its budget is never silent: an Activity says by how much and why."""
        state, runner = self.state, self.runner
        if again or state.projection is None:
            state.projection = project_turn(
                self.ledger,
                self.session,
                self.binding,
                system=state.surface.system,
                tools=state.surface.prefix,  # the plan prices the prefix loaded at step 0
                capacity=runner.capacity,
                indexes=runner.indexes,
            )
        state.ratio = state.projection.ratio
        over = over_budget_activity(state.projection.plan)
        if over is not None:
            self.ledger.append(self.session, over)

    def _request(self, bare: bool, required: bool = False) -> ChatRequest:
        """The step's request: the step-0 tools, then any find_tools loaded since. A step that
        can only answer says `tool_choice: "none"` where the provider sends it (the tools, and
        so the cached prefix, stay); else, on a local model, it goes without tools (a hosted
        API such as Anthropic's refuses tool results in a request that declares no tools). `required`:
        the `[action-check]` redo, whose reply must be a call (`tool_choice`): on the 0.5B
        the nudge alone drew the tool's name, its description or a card's `did:` line."""
        state, runner = self.state, self.runner
        assert state.projection is not None
        request = step_request(
            self.ledger,
            self.session,
            self.binding,
            state.projection,
            system=state.surface.system,
            tools=state.surface.tools,
            keep_alive=runner.keep_alive,
            think=self.think,
            indexes=runner.indexes,
        )
        if bare and request.tools and chooses_tools(runner.provider):  # the prefix holds
            request = dataclasses.replace(request, tool_choice="none")
        elif bare and is_local(runner.provider):
            request = dataclasses.replace(request, tools=())
        elif required and request.tools:  # a call needs few tokens; babble after it, many
            limit = min(request.max_tokens or CALL_TOKENS, CALL_TOKENS)
            request = dataclasses.replace(request, tool_choice="required", max_tokens=limit)
        return request

    def keep_partial(self) -> None:
        """Whatever streamed before a failure or a stop is kept, marked interrupted."""
        step = partial_step(self.binding, self.state.current)
        if step is not None:
            self.ledger.append(self.session, step)

    @property
    def streaming(self) -> bool:
        """A model call is under way (its stream has not ended)."""
        return self.state.current is not None and self.state.current.done is None
