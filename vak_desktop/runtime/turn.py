"""Running one turn: directive in, streamed steps and tool exchanges out, everything in the ledger.

The order of writes is what makes a turn survive anything: the Directive is committed before the
first byte is requested; each assistant step, tool result and receipt is committed as soon as it
exists; a turn ends with a `turn_closed` Activity carrying its outcome. A process killed mid-turn
leaves a turn with no close, which the next turn in that session marks `turn_interrupted`.
A cancelled stream keeps whatever text had arrived, marked interrupted.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass

from vak_desktop.context.assemble import prefix_digest
from vak_desktop.context.capacity import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.cards import build_turn_card
from vak_desktop.context.evidence import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    Receipt,
    ToolCall,
    ToolResult,
    Usage,
)
from vak_desktop.context.request import ChatRequest
from vak_desktop.context.turns import TURN_CLOSED, TURN_INTERRUPTED, split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import (
    ChatProvider,
    Done,
    StreamNotice,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
)
from vak_desktop.providers.errors import ContextOverflow, ProviderError
from vak_desktop.runtime.binding import ModelBinding
from vak_desktop.runtime.events import (
    Notice,
    StepFinished,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    ToolResultReady,
    TurnEvent,
    TurnFinished,
    TurnStarted,
)
from vak_desktop.runtime.projection import Projection, project_turn, step_request
from vak_desktop.runtime.tools import ToolContext, ToolRegistry

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant running in Vak Desktop on the user's own machine. "
    "Answer clearly and directly. Tool results you have seen before may be shown as a digest or "
    "a window with an evidence id; call `recall` with that id to read them in full."
)
MAX_STEPS = 32  # a runaway tool loop guard, not a budget: each step is still planned in full


@dataclass
class _StepOutcome:
    """What one model call produced so far, and the request that was finally sent for it."""

    request: ChatRequest
    text: str = ""
    thinking: str = ""
    calls: list[ToolCall] = dataclasses.field(default_factory=list)
    done: Done | None = None


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
    ) -> None:
        self.ledger = ledger
        self.provider = provider
        self.tools = tools
        self.keep_alive = keep_alive
        self.system_prompt = system_prompt

    def close_interrupted(self, session: str) -> str | None:
        """Close the session's last turn as interrupted if it never closed (the process died
        mid-turn): its TurnCard, then the mark. Returns the turn's id if it did."""
        turns = split_turns(self.ledger.chain_to_root(session))
        if not turns or turns[-1].closed:
            return None
        last = turns[-1]
        self.ledger.append(session, build_turn_card(last, "interrupted", FALLBACK_TOKENS_PER_CHAR))
        self.ledger.append(
            session,
            Activity(
                type=TURN_INTERRUPTED,
                message="the turn ended without closing: the app stopped while it ran",
                detail={"turn": last.turn_id},
            ),
        )
        return last.turn_id

    def _close(self, session: str, outcome: str, usage: Usage, error: str, ratio: float) -> None:
        """Write the turn's TurnCard (deterministic, no model call), then the closing mark."""
        turn = split_turns(self.ledger.chain_to_root(session))[-1]
        self.ledger.append(session, build_turn_card(turn, outcome, ratio))
        self.ledger.append(session, _closed(outcome, usage, error))

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
        """Run one turn and yield what happens. `parent` starts a branch (edit / regenerate)."""
        ledger = self.ledger
        self.close_interrupted(session)
        directive = Directive(
            text=text,
            images=images,
            model=binding.model,
            provider=binding.provider,
            system=self.system_prompt,
        )
        if parent is None:
            turn = ledger.append(session, directive)
        else:
            turn = ledger.append(session, directive, parent=parent)
        yield TurnStarted(session, turn.id, binding.model)
        total = Usage()
        outcome, error = "completed", ""
        outcome_step: _StepOutcome | None = None
        projected: list[Projection] = []
        ratio = FALLBACK_TOKENS_PER_CHAR
        try:
            async for event in project_turn(
                ledger,
                session,
                self.provider,
                binding,
                system=self.system_prompt,
                tools=self.tools.specs(),
                keep_alive=self.keep_alive,
                out=projected,
            ):
                yield event
            projection = projected[0]
            ratio = projection.ratio
            for step in range(MAX_STEPS):
                outcome_step = _StepOutcome(
                    step_request(
                        ledger,
                        session,
                        binding,
                        projection,
                        system=self.system_prompt,
                        tools=self.tools.specs(),
                        keep_alive=self.keep_alive,
                        think=think,
                    )
                )
                try:
                    async for event in self._stream_step(session, binding, outcome_step):
                        yield event
                except ProviderError as exc:
                    self._keep_partial(session, binding, outcome_step)
                    outcome, error = "failed", str(exc)
                    ledger.append(session, Activity(type="provider_error", message=error))
                    break
                done, request = outcome_step.done, outcome_step.request
                assert done is not None
                ledger.append(
                    session,
                    AssistantStep(
                        text=outcome_step.text,
                        thinking=outcome_step.thinking,
                        tool_calls=tuple(outcome_step.calls),
                        model=done.model or binding.model,
                        done_reason=done.done_reason,
                    ),
                )
                receipt = Receipt(
                    provider=binding.provider,
                    model=binding.model,
                    usage=done.usage,
                    timings=done.timings,
                    prefix_digest=prefix_digest(self.system_prompt, request.tools),
                    request_chars=request.chars(),
                    request_messages=len(request.messages),
                    num_ctx=request.num_ctx,
                    step=step,
                    done_reason=done.done_reason,
                    plan=projection.plan.to_json() if step == 0 else {"planned_at_step": 0},
                    tail=projection.tail if step == 0 else "",
                )
                ledger.append(session, receipt)
                total = total.plus(done.usage)
                yield StepFinished(step, receipt)
                if not outcome_step.calls:
                    break
                async for event in self._run_tools(session, outcome_step.calls):
                    yield event
            else:
                outcome, error = "degraded", f"stopped after {MAX_STEPS} steps of tool calls"
        except (asyncio.CancelledError, GeneratorExit):
            if outcome_step is not None and outcome_step.done is None:
                self._keep_partial(session, binding, outcome_step)
            self._close(session, "cancelled", total, "stopped by the user", ratio)
            raise
        self._close(session, outcome, total, error, ratio)
        yield TurnFinished(session, turn.id, outcome, total, error)

    async def _stream_step(
        self, session: str, binding: ModelBinding, out: _StepOutcome
    ) -> AsyncIterator[TurnEvent]:
        """Stream one model call into `out`. An over-length rejection grows the window once."""
        for attempt in range(2):
            request = out.request
            try:
                async with contextlib.aclosing(self.provider.stream(request)) as stream:
                    async for event in stream:
                        if isinstance(event, TextDelta):
                            out.text += event.text
                            yield TextChunk(event.text)
                        elif isinstance(event, ThinkingDelta):
                            out.thinking += event.text
                            yield ThinkingChunk(event.text)
                        elif isinstance(event, ToolCallEvent):
                            out.calls.append(event.call)
                            yield ToolCallRequested(
                                event.call.id, event.call.name, event.call.arguments
                            )
                        elif isinstance(event, StreamNotice):
                            self.ledger.append(session, _repaired(event))
                            yield Notice(event.message)
                        elif isinstance(event, Done):
                            out.done = event
                return
            except ContextOverflow as exc:
                grown = attempt == 0 and not (out.text or out.calls)
                if not (grown and binding.grow_to(exc.requested or request.num_ctx * 2)):
                    raise
                self.ledger.append(
                    session,
                    Activity(
                        type="num_ctx_raised",
                        message=f"request did not fit num_ctx {request.num_ctx}: {exc}",
                        detail={"from": request.num_ctx, "to": binding.num_ctx},
                    ),
                )
                out.request = dataclasses.replace(request, num_ctx=binding.num_ctx)

    def _keep_partial(self, session: str, binding: ModelBinding, out: _StepOutcome) -> None:
        """Whatever streamed before a failure or a stop is kept, marked interrupted."""
        if out.text or out.thinking or out.calls:
            self.ledger.append(
                session,
                AssistantStep(
                    text=out.text,
                    thinking=out.thinking,
                    tool_calls=tuple(out.calls),
                    model=binding.model,
                    interrupted=True,
                ),
            )

    async def _run_tools(self, session: str, calls: list[ToolCall]) -> AsyncIterator[TurnEvent]:
        context = ToolContext(self.ledger, session)
        outputs = await self.tools.run_all(calls, context)
        for call, output in zip(calls, outputs, strict=True):
            body = self.ledger.append(
                session,
                EvidenceBody(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=output.content,
                    chars=len(output.content),
                    is_error=output.is_error,
                ),
            )
            carried = carry(output.content, body.id)
            self.ledger.append(
                session,
                ToolResult(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=carried.text,
                    evidence=body.id,
                    chars=len(output.content),
                    is_error=output.is_error,
                    windowed=carried.windowed,
                ),
            )
            yield ToolResultReady(
                call.id,
                call.name,
                body.id,
                len(output.content),
                output.is_error,
                carried.windowed,
                carried.text[:2_000],
            )


def _repaired(notice: StreamNotice) -> Activity:
    """The record of a repaired stream line, with the raw bytes as they arrived."""
    raw = base64.b64encode(notice.raw).decode("ascii")
    return Activity(type="stream_repaired", message=notice.message, detail={"raw_base64": raw})


def _closed(outcome: str, usage: Usage, error: str) -> Activity:
    return Activity(
        type=TURN_CLOSED,
        message=error,
        detail={
            "outcome": outcome,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        },
    )
