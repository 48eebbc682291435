"""One model call of a turn: streaming it into a `StepOutcome`, and the entries it leaves.

A step is streamed into memory as it arrives (text, thinking, tool calls, the final `Done`);
what it leaves in the ledger is built here: the receipt that records what was sent and what it
cost, the assistant step kept when a stream stops early (marked interrupted), the record of a
repaired stream line.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass

from vak_desktop.context.capacity.cache_watch import system_digest, tool_digests
from vak_desktop.context.payloads import Activity, AssistantStep, Receipt, SignedThinking, ToolCall
from vak_desktop.context.planning.assemble import prefix_digest
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import (
    ChatProvider,
    Done,
    StreamNotice,
    TextDelta,
    ThinkingDelta,
    ThinkingSigned,
    ToolCallEvent,
)
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.events import (
    Notice,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    TurnEvent,
)
from vak_desktop.runtime.tools.surface import ToolSurface
from vak_desktop.runtime.turn.projection import Projection


@dataclass
class StepOutcome:
    """What one model call produced so far, and the request that was finally sent for it."""

    request: ChatRequest
    text: str = ""
    thinking: str = ""
    calls: list[ToolCall] = dataclasses.field(default_factory=list)
    done: Done | None = None
    signed_thinking: list[SignedThinking] = dataclasses.field(default_factory=list)


async def stream_step(
    provider: ChatProvider, ledger: Ledger, session: str, out: StepOutcome
) -> AsyncIterator[TurnEvent]:
    """Stream one model call into `out`, yielding what the observers show as it arrives."""
    async with contextlib.aclosing(provider.stream(out.request)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                out.text += event.text
                yield TextChunk(event.text)
            elif isinstance(event, ThinkingDelta):
                out.thinking += event.text
                yield ThinkingChunk(event.text)
            elif isinstance(event, ThinkingSigned):
                out.signed_thinking.append(event.block)
            elif isinstance(event, ToolCallEvent):
                out.calls.append(event.call)
                yield ToolCallRequested(event.call.id, event.call.name, event.call.arguments)
            elif isinstance(event, StreamNotice):
                ledger.append(session, repaired(event))
                yield Notice(event.message)
            elif isinstance(event, Done):
                out.done = event


def partial_step(binding: ModelBinding, out: StepOutcome | None) -> AssistantStep | None:
    """Whatever streamed before a failure or a stop, as a step marked interrupted (or None)."""
    if out is None or not (out.text or out.thinking or out.calls):
        return None
    return AssistantStep(
        text=out.text,
        thinking=out.thinking,
        tool_calls=tuple(out.calls),
        model=binding.model,
        interrupted=True,
        signed_thinking=tuple(out.signed_thinking),
    )


def step_receipt(
    binding: ModelBinding,
    request: ChatRequest,
    done: Done,
    projection: Projection,
    step: int,
    surface: ToolSurface,
) -> Receipt:
    """The receipt of step `step`: usage, timings, digests of what was sent; the first step's
    receipt also records the plan and tail block it followed."""
    return Receipt(
        provider=binding.provider,
        model=binding.model,
        usage=done.usage,
        timings=done.timings,
        prefix_digest=prefix_digest(surface.system, surface.prefix),
        request_chars=request.chars(),
        request_messages=len(request.messages),
        num_ctx=request.num_ctx,
        step=step,
        done_reason=done.done_reason,
        plan=projection.plan.to_json() if step == 0 else {"planned_at_step": 0},
        tail=projection.tail if step == 0 else "",
        system_digest=system_digest(surface.system),
        tool_digests=tool_digests(request.tools),
    )


def repaired(notice: StreamNotice) -> Activity:
    """The record of a stream notice, with the raw bytes as they arrived: `stream_repaired`
    (a line repaired) or `stream_tool_call_cut` (a call the output limit cut off)."""
    raw = base64.b64encode(notice.raw).decode("ascii")
    return Activity(
        type=f"stream_{notice.kind}", message=notice.message, detail={"raw_base64": raw}
    )
