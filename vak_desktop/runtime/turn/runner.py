"""Running one turn: directive in, streamed steps and tool exchanges out, everything in the ledger.

The order of writes is what makes a turn survive anything: the Directive is committed before the
first byte is requested; each assistant step, tool result and receipt is committed as soon as it
exists; a turn ends with a `turn_closed` Activity carrying its outcome. A process killed mid-turn
leaves a turn with no close, which the next turn in that session marks `turn_interrupted`.
A cancelled stream keeps whatever text had arrived, marked interrupted.

Over 400 lines on purpose: `TurnRunner.run` is the order in which a turn writes to the ledger,
read top to bottom in one place; what is not that order lives beside it (`step`, `closing`,
`lookahead`, `projection`, `rules`, `recovery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass

from vak_desktop.context.capacity.probe_history import PROBE_REQUEST, ProbePrefix
from vak_desktop.context.capacity.profile import (
    FALLBACK_TOKENS_PER_CHAR,
)
from vak_desktop.context.evidence.text_calls import adopt_text_calls
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    Usage,
)
from vak_desktop.context.presentations.library import fence_guide, tool_name
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, is_local
from vak_desktop.providers.errors import ContextOverflow, ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.prefix import PrefixMeter
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.events import (
    CompactionEvent,
    Notice,
    StepFinished,
    TextChunk,
    ToolCallRequested,
    TurnEvent,
    TurnFinished,
    TurnStarted,
)
from vak_desktop.runtime.presentations import acked_card, card_library, shown
from vak_desktop.runtime.sessions.system_prompts import system_prompt_of
from vak_desktop.runtime.tools import ToolRegistry, run_tool_calls
from vak_desktop.runtime.tools.surface import (
    ToolSurface,
    fitted_surface,
    sent_tools,
    tool_surface,
)
from vak_desktop.runtime.turn.cache_watch import CacheWatch, previous_turn_receipt
from vak_desktop.runtime.turn.closing import close_interrupted, close_turn
from vak_desktop.runtime.turn.compaction import (
    CompactionResult,
    compact_session,
    compaction_events,
)
from vak_desktop.runtime.turn.lookahead import Lookahead
from vak_desktop.runtime.turn.projection import (
    Projection,
    TurnIndexes,
    project_turn,
    step_request,
)
from vak_desktop.runtime.turn.recovery import (
    DEFAULT_INSTRUCTION_CHECKS,
    InstructionCheck,
    instruction_activity,
    overflow_activity,
    truncated,
    truncation_activity,
)
from vak_desktop.runtime.turn.reset import check_reset, over_budget_activity
from vak_desktop.runtime.turn.rules import TurnRules, system_step
from vak_desktop.runtime.turn.step import (
    StepOutcome,
    output_limit_activity,
    partial_step,
    step_receipt,
    stream_step,
)
from vak_desktop.runtime.turn.summariser import SummaryWatch
from vak_desktop.runtime.turn.warm import Warmed, Warmer, draft_request, stable_part

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant running in Vak Desktop on the user's own machine. "
    "Answer clearly and directly. Tool results you have seen before may be shown as a digest or "
    "a window with an evidence id; call `recall` with that id to read them in full."
)
MAX_STEPS = 32  # a runaway tool loop guard, not a budget: each step is still planned in full


@dataclass
class _TurnState:
    """What a turn carries from step to step: its tool surface, its plan, the current model
    call, and whether its one re-plan after a contradiction of the profile is spent."""

    surface: ToolSurface
    projection: Projection | None = None
    ratio: float = FALLBACK_TOKENS_PER_CHAR
    current: StepOutcome | None = None
    recovered: bool = False


class TurnRunner:
    """Runs turns of any session against one provider, with one set of tools."""

    def __init__(
        self,
        ledger: Ledger,
        provider: ChatProvider,
        tools: ToolRegistry,
        *,
        keep_alive: str | int | None = "30m",
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        capacity: CapacityService | None = None,
        instruction_checks: tuple[InstructionCheck, ...] = DEFAULT_INSTRUCTION_CHECKS,
        compact_ahead: bool = False,
        measure_prefix: bool = False,
    ) -> None:
        self.ledger = ledger
        self.provider = provider
        self.tools = tools
        self.keep_alive = keep_alive
        self.system_prompt = system_prompt
        # Without a scheduler (the default) nothing probes in the background; the window
        # passes `runtime.scheduler.probing_capacity(...)` to probe idle local models.
        self.capacity = capacity if capacity is not None else CapacityService(ledger)
        self.instruction_checks = instruction_checks
        # After a turn closes, write the packet the next turn will want in the background (the
        # window and the REPL turn this on; a one-shot command has no next turn to prepare).
        self.compact_ahead = compact_ahead
        self.lookahead = Lookahead()
        self.indexes = TurnIndexes()  # each session's TurnIndex, advanced request by request
        self.warmer = Warmer()  # the next request's stable part sent while the user types
        self._running = 0  # turns running on this runner now
        self.cards = card_library()  # the card definitions the fence fallback reads

        # Opt-in: one usage-only request per profile counts the prefix (spec §6)
        self.prefix_meter = PrefixMeter(ledger, provider, self.capacity) if measure_prefix else None

    def _surface(
        self, binding: ModelBinding, directive: str, session: str = "", prompt: str = ""
    ) -> ToolSurface:
        """The turn's tool surface. A model that says it cannot call tools is sent none
        (Ollama refuses the request otherwise) and its system text says how to write a card as
        a ```vak fence instead. `prompt`: the session's own system prompt, if it set one. A
        small model, or a full prefix over a third of the horizon, gets the compact form
        (`fitted_surface`); a session's own prompt is kept whole in it."""
        prompt = prompt or self.system_prompt
        if session:
            chain = self.ledger.chain_to_root(session)
            profile = self.capacity.profile_for(binding, chain, utc_now())
            own = prompt if prompt != DEFAULT_SYSTEM_PROMPT else ""
            earlier = sent_tools(chain)  # the session's tools only grow: the prefix cache holds
            surface = fitted_surface(
                self.tools, prompt, directive, profile, own_prompt=own, earlier=earlier
            )
        else:
            surface = tool_surface(self.tools, prompt, directive)
        if not self._without_tools(binding):
            return surface
        system = f"{prompt.rstrip()}\n\n{fence_guide(self.cards)}"
        return dataclasses.replace(surface, system=system, prefix=(), catalogue=())

    def probe_prefix(self, binding: ModelBinding, session: str = "") -> ProbePrefix:
        """The stable prefix this model's real requests carry, for its capacity probe (issue
        #17): the surface this runner builds for the probe's own request — the session's
        system text, the catalogue, the schemas that request loads — for the bound profile."""
        chain = self.ledger.chain_to_root(session) if session else []
        prompt = system_prompt_of(chain, self.system_prompt)
        surface = self._surface(binding, PROBE_REQUEST.format(token="QX-1000"), session, prompt)
        return ProbePrefix(surface.system, surface.tools)

    @staticmethod
    def _without_tools(binding: ModelBinding) -> bool:
        return bool(binding.capabilities) and "tools" not in binding.capabilities

    def close_interrupted(self, session: str) -> str | None:
        """Close the session's last turn as interrupted if it never closed (the process died
        mid-turn). Returns the turn's id if it did."""
        return close_interrupted(self.ledger, session)

    async def run(
        self,
        session: str,
        text: str,
        binding: ModelBinding,
        *,
        images: tuple[str, ...] = (),
        think: bool | None = None,
        parent: str | None = None,
    ) -> AsyncIterator[TurnEvent]:
        """Run one turn and yield what happens. `parent` starts a branch (edit / regenerate).
        The session is held for the whole turn: SessionBusy if another turn runs in it. It is
        free again before `TurnFinished` is yielded, so an observer that stops reading there
        (without closing the generator) never keeps the session held."""
        finished: TurnFinished | None = None
        self._running += 1
        try:
            with self.ledger.hold(session):
                turn = self._run(session, text, binding, images=images, think=think, parent=parent)
                async with contextlib.aclosing(turn) as events:
                    async for event in events:
                        if isinstance(event, TurnFinished):
                            finished = event  # the turn's last event: yielded once the hold ends
                        else:
                            yield event
        finally:
            self._running -= 1
        if finished is not None:
            yield finished

    async def _run(
        self,
        session: str,
        text: str,
        binding: ModelBinding,
        *,
        images: tuple[str, ...] = (),
        think: bool | None = None,
        parent: str | None = None,
    ) -> AsyncGenerator[TurnEvent, None]:
        ledger = self.ledger
        # a real turn never waits on a summary being written ahead: it cancels it (the
        # deterministic packet stands in) and the look-ahead starts again after this turn
        await self.abandon_lookahead(session)
        await self.warmer.wait()  # a warm request in flight prefills what this turn sends
        self.close_interrupted(session)
        self.capacity.turn_starting(binding)  # a probe of this model yields the runner
        self.capacity.catch_up(session, binding)  # a probe finished since: into the ledger
        # the branch's own system prompt (runtime/sessions/system_prompts.py), else ours
        before = ledger.chain_to_root(session, parent) if parent else []
        if parent is None:
            before = ledger.chain_to_root(session)
        prompt = system_prompt_of(before, self.system_prompt)
        state = _TurnState(self._surface(binding, text, session, prompt))
        if parent is None:  # no room even for a packet: the boundary goes in before the turn
            reset, state.projection = check_reset(
                ledger,
                session,
                binding,
                text,
                system=state.surface.system,
                tools=state.surface.prefix,
                capacity=self.capacity,
                images=tuple(images),
            )
            if reset is not None:
                yield Notice(reset.reason)
        directive = Directive(
            text=text,
            images=images,
            model=binding.model,
            provider=binding.provider,
            system=prompt,
        )
        if parent is None:
            turn = ledger.append(session, directive)
        else:  # "" (branches.ROOT): an alternative of the first turn starts at the root
            turn = ledger.append(session, directive, parent=parent or None)
        yield TurnStarted(session, turn.id, binding.model)
        total = Usage()
        outcome, error = "completed", ""
        called: list[str] = []
        largest_prompt = 0
        call_prompt = 0  # the request in which the model first called a tool
        watch = CacheWatch(previous_turn_receipt(ledger.chain_to_root(session)))
        offered = [spec.name for spec in self.tools.specs()]
        rules = TurnRules(ledger, session, self.cards, self.tools.observes_now, offered)
        try:
            measured = None
            if self.prefix_meter is not None:  # the turn's own prefix, counted once per profile
                measured = await self.prefix_meter.ensure(
                    session,
                    binding,
                    system=state.surface.system,
                    tools=state.surface.tools,
                    keep_alive=self.keep_alive,
                )
            self._replan(session, binding, state, again=measured is not None)
            for step in range(MAX_STEPS):
                try:
                    async for event in self._step(session, binding, step, think, state):
                        yield event
                except ProviderError as exc:
                    self._keep_partial(session, binding, state.current)
                    outcome, error = "failed", str(exc)
                    ledger.append(session, Activity(type="provider_error", message=error))
                    break
                out, projection = state.current, state.projection
                assert out is not None and out.done is not None and projection is not None
                done = out.done
                adopted = adopt_text_calls(
                    out.text, out.calls, self.tools.specs(), key=f"{turn.id}:{step}", step=step
                )
                if adopted is not None:  # calls written as text run as calls (spec §5 item 7)
                    ledger.append(session, adopted.activity)
                    out.text, out.calls = adopted.text, list(adopted.calls)
                    for call in adopted.calls:
                        yield ToolCallRequested(call.id, call.name, call.arguments)
                step_entry = ledger.append(
                    session,
                    AssistantStep(
                        text=out.text,
                        thinking=out.thinking,
                        tool_calls=tuple(out.calls),
                        model=done.model or binding.model,
                        done_reason=done.done_reason,
                        signed_thinking=tuple(out.signed_thinking),
                    ),
                )
                receipt = step_receipt(binding, out.request, done, projection, step, state.surface)
                ledger.append(session, receipt)
                for activity in watch.observe(
                    out.request, receipt, projection.profile, state.ratio
                ):
                    ledger.append(session, activity)
                total = total.plus(done.usage)
                called += [c.name for c in out.calls]
                largest_prompt = max(largest_prompt, done.usage.prompt_tokens())
                call_prompt = call_prompt or (done.usage.prompt_tokens() if out.calls else 0)
                yield StepFinished(step, receipt)
                cut = output_limit_activity(binding, out.request, done, projection.profile, step)
                if cut is not None and not out.calls:  # a cut call says so itself (providers)
                    ledger.append(session, cut)
                    yield Notice(cut.message)
                fences = rules.fences(step_entry)
                called += [tool_name(t) for t in fences.types]
                for presentation in fences.presented:
                    yield shown(ledger, presentation)
                if out.calls:
                    async for event in run_tool_calls(self.tools, ledger, session, out.calls):
                        yield event
                        if isinstance(event, Notice):  # a tool's progress while it runs
                            continue
                        card = acked_card(ledger, event.name, event.preview, event.is_error)
                        if card is not None:
                            yield card
                    state.surface, misreads = state.surface.after(out.calls)  # find_tools loads
                    for misread in misreads:
                        ledger.append(session, misread)
                    after = rules.after_calls(out.calls, fences)
                else:
                    after = rules.after_answer(out.text, fences)
                if after.drift:  # near the horizon, a drifting model is a size signal
                    instruction = "answer the current request instead of repeating an old answer"
                    self.instruction_failed(
                        session, binding, projection, instruction, largest_prompt
                    )
                if after.failed_instruction:  # an asked-for action not performed
                    self.instruction_failed(
                        session, binding, projection, after.failed_instruction, largest_prompt
                    )
                if after.nudge is not None:
                    ledger.append(session, after.nudge)
                    yield Notice(after.nudge.text)
                    continue
                if after.statement:
                    ledger.append(session, system_step(after.statement))
                    yield TextChunk(after.statement)
                if after.close or not out.calls:
                    outcome, error = after.outcome, after.error
                    self._check_instructions(
                        session, binding, projection, text, called, largest_prompt
                    )
                    # followed well above the horizon, again and again: a re-probe is due
                    self.capacity.instruction_followed(
                        session, binding, projection.profile, text, called, call_prompt
                    )
                    break
            else:
                outcome, error = "degraded", f"stopped after {MAX_STEPS} steps of tool calls"
        except (asyncio.CancelledError, GeneratorExit):
            if state.current is not None and state.current.done is None:
                self._keep_partial(session, binding, state.current)
            close_turn(ledger, session, "cancelled", total, "stopped by the user", state.ratio)
            raise
        close_turn(ledger, session, outcome, total, error, state.ratio)
        if self.compact_ahead and outcome != "failed":
            self.start_compaction(session, binding)
        # the model is idle: a probe may run now, shaped like this session's requests
        self.capacity.turn_finished(binding, lambda: self.probe_prefix(binding, session))
        yield TurnFinished(session, turn.id, outcome, total, error)

    def warm(
        self, session: str, draft: str, binding: ModelBinding, *, think: bool | None = None
    ) -> asyncio.Task[Warmed | None] | None:
        """Prefill the model's prompt cache with what the session's next turn would send for
        `draft`, before its tail (`turn/warm.py`); nothing is written to the ledger. None when
        it would cost money (a hosted model) or time another request needs: a turn, a probe, a
        look-ahead summary or another warm request holds the model."""
        if not is_local(self.provider) or self._running or self.warmer.busy:
            return None
        if self.lookahead.busy or self.capacity.probing(binding):
            return None
        chain = self.ledger.chain_to_root(session)
        surface = self._surface(
            binding, draft, session, system_prompt_of(chain, self.system_prompt)
        )
        request = draft_request(
            self.indexes.index_of(session, chain),
            session,
            binding,
            self.capacity.profile_for(binding, chain, utc_now()),
            draft,
            surface=surface,
            keep_alive=self.keep_alive,
            think=think,
        )
        stable = stable_part(request)
        return self.warmer.start(self.provider, stable) if stable is not None else None

    async def compact(
        self, session: str, binding: ModelBinding, watch: SummaryWatch | None = None
    ) -> CompactionResult:
        """Write the packet the session's next turn will want, if it wants one not stored
        (the look-ahead after each turn; `compact_events` for `/compact` and "Compact now")."""
        prompt = system_prompt_of(self.ledger.chain_to_root(session), self.system_prompt)
        floor = self._surface(binding, "", session, prompt)  # the next ask is unknown
        return await compact_session(
            self.ledger,
            session,
            self.provider,
            binding,
            system=floor.system,
            tools=floor.prefix,
            keep_alive=self.keep_alive,
            capacity=self.capacity,
            watch=watch,
        )

    def compact_events(self, session: str, binding: ModelBinding) -> AsyncIterator[CompactionEvent]:
        """`compact` in the foreground (`/compact`, "Compact now"): its progress while the
        summariser writes, then its `CompactionResult`. Closing the stream early cancels it."""
        return compaction_events(lambda watch: self.compact(session, binding, watch))

    def start_compaction(
        self, session: str, binding: ModelBinding
    ) -> asyncio.Task[CompactionResult]:
        """`compact` in the background; the session's next turn waits for it to land."""
        return self.lookahead.start(session, lambda: self.compact(session, binding))

    async def settle(self, session: str | None = None) -> None:
        """Wait for the look-ahead compaction of `session` (default: every session) to end."""
        await self.lookahead.settle(session)

    async def abandon_lookahead(self, session: str) -> None:
        """Cancel the look-ahead compaction of `session`, if one runs: the session's next turn
        goes to another provider's runner, whose model plans its own working set."""
        await self.lookahead.abandon(session)

    async def aclose(self) -> None:
        """Stop look-ahead work (the app is quitting); nothing half-written reaches the ledger."""
        await self.warmer.aclose()
        await self.lookahead.aclose()

    async def _step(
        self,
        session: str,
        binding: ModelBinding,
        step: int,
        think: bool | None,
        state: _TurnState,
    ) -> AsyncIterator[TurnEvent]:
        """Stream one model call into `state.current`. A request that contradicts the profile
        (refused as over-length, or silently cut) is recorded, the turn re-planned against the
        tightened profile and the step sent again — once per turn, never in a loop."""
        while True:
            assert state.projection is not None
            out = state.current = StepOutcome(
                self._request(session, binding, state.projection, think, state.surface)
            )
            try:
                async for event in stream_step(self.provider, self.ledger, session, out):
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
            self.ledger.append(session, contradiction)
            yield Notice(contradiction.message)
            self._replan(session, binding, state)

    def _replan(
        self, session: str, binding: ModelBinding, state: _TurnState, *, again: bool = True
    ) -> None:
        """Plan the turn against the profile the ledger gives now (again after a contradiction;
        at step 0 the reset check's plan stands unless `again`: a measured prefix moved it).
        A plan past its budget is never silent: an Activity says by how much and why."""
        if again or state.projection is None:
            state.projection = project_turn(
                self.ledger,
                session,
                binding,
                system=state.surface.system,
                tools=state.surface.prefix,  # the plan prices the prefix loaded at step 0
                capacity=self.capacity,
                indexes=self.indexes,
            )
        state.ratio = state.projection.ratio
        over = over_budget_activity(state.projection.plan)
        if over is not None:
            self.ledger.append(session, over)

    def _request(
        self,
        session: str,
        binding: ModelBinding,
        projection: Projection,
        think: bool | None,
        surface: ToolSurface,
    ) -> ChatRequest:
        return step_request(
            self.ledger,
            session,
            binding,
            projection,
            system=surface.system,
            tools=surface.tools,  # the step-0 tools, then any find_tools loaded since
            keep_alive=self.keep_alive,
            think=think,
            indexes=self.indexes,
        )

    def _check_instructions(
        self,
        session: str,
        binding: ModelBinding,
        projection: Projection,
        directive: str,
        called: list[str],
        request_tokens: int,
    ) -> None:
        """Run the instruction-failure classifiers over the finished turn."""
        offered = [spec.name for spec in self.tools.specs()]
        if self._without_tools(binding):  # fences stand in for the card tools
            offered = [tool_name(kind) for kind in self.cards.types()]
        for check in self.instruction_checks:
            instruction = check(directive, offered, called)
            if instruction is not None:
                self.instruction_failed(session, binding, projection, instruction, request_tokens)

    def instruction_failed(
        self,
        session: str,
        binding: ModelBinding,
        projection: Projection,
        instruction: str,
        request_tokens: int,
    ) -> None:
        """The hook for an explicit instruction the model did not follow: recorded always; above
        0.8 × horizon it lowers the horizon (folded from the record) and asks for a re-probe."""
        activity, tightens = instruction_activity(
            instruction, request_tokens, projection.profile, utc_now()
        )
        self.ledger.append(session, activity)
        if tightens:
            self.capacity.reprobe(binding)

    def _keep_partial(self, session: str, binding: ModelBinding, out: StepOutcome | None) -> None:
        """Whatever streamed before a failure or a stop is kept, marked interrupted."""
        step = partial_step(binding, out)
        if step is not None:
            self.ledger.append(session, step)
