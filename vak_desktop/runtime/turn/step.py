"""One model call of a turn: streaming it into a `StepOutcome`, and the entries it leaves.

A step is streamed into memory as it arrives (text, thinking, tool calls, the final `Done`),
kept as a list of chunks joined once when read (appending to one string was quadratic: 10 MB
in 10,000 chunks took 155 s); what streams also reaches the ledger's stream journal every
quarter second or 16 KB (`ledger/journal.py`), so a kill keeps what the user saw (less a tail
that may be a secret's beginning, held until the rest arrives so it is redacted whole). What a
step leaves in the ledger proper is built here: the receipt that records what was sent and what it
cost, the assistant step kept when a stream stops early (marked interrupted), the record of a
repaired stream line, and the `output_limit` record of an answer the max output cut (never a
silent cut: the user is told, and the reserve grows from the receipt, `learn_output_reserve`).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.cache_watch import system_digest, tool_digests
from vak_desktop.context.capacity.feedback import OUTPUT_LIMIT
from vak_desktop.context.capacity.profile import learn_output_reserve
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Receipt,
    SignedThinking,
    ToolCall,
)
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
    Waiting,
)
from vak_desktop.redaction import redact, redactable_prefix
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.events import (
    Notice,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    TurnEvent,
)
from vak_desktop.runtime.tools.surface import ToolSurface
from vak_desktop.runtime.turn.markup import opening_markup
from vak_desktop.runtime.turn.projection import Projection

CHECKPOINT_S = 0.25  # the most streamed text a kill can lose, in time ...
CHECKPOINT_CHARS = 16_384  # ... and in size


class _Chunks:
    """Text arriving in chunks: appended in O(1), joined once when read."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)

    def get(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def set(self, text: str) -> None:
        self.parts[:] = [text] if text else []


@dataclass
class StepOutcome:
    """What one model call produced so far, and the request that was finally sent for it."""

    request: ChatRequest
    calls: list[ToolCall] = dataclasses.field(default_factory=list)
    done: Done | None = None
    signed_thinking: list[SignedThinking] = dataclasses.field(default_factory=list)
    _text: _Chunks = dataclasses.field(default_factory=_Chunks, repr=False)
    _thinking: _Chunks = dataclasses.field(default_factory=_Chunks, repr=False)

    @property
    def text(self) -> str:
        return self._text.get()

    @text.setter
    def text(self, value: str) -> None:
        self._text.set(value)

    @property
    def thinking(self) -> str:
        return self._thinking.get()

    @thinking.setter
    def thinking(self, value: str) -> None:
        self._thinking.set(value)


class _Journal:
    """What a step streamed since its last checkpoint, written to the stream journal when
    `CHECKPOINT_S` passed or `CHECKPOINT_CHARS` piled up."""

    def __init__(self, ledger: Ledger, session: str) -> None:
        self.ledger, self.session = ledger, session
        self.stream = secrets.token_hex(8)
        self.base_seq = ledger.last_seq()
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.pending = 0
        self.last = time.monotonic()

    def add(self, text: str = "", thinking: str = "") -> None:
        if text:
            self.text.append(text)
        if thinking:
            self.thinking.append(thinking)
        self.pending += len(text) + len(thinking)
        if self.pending >= CHECKPOINT_CHARS or time.monotonic() - self.last >= CHECKPOINT_S:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            text, self.text = _journalable(self.text)
            thinking, self.thinking = _journalable(self.thinking)
            if text or thinking:
                self.ledger.checkpoint(self.session, self.stream, self.base_seq, text, thinking)
            self.pending = sum(map(len, self.text)) + sum(map(len, self.thinking))
        self.last = time.monotonic()


class _Shown:
    """What the observers see of one channel of a stream (stdout, `--json`, the window): the
    same redaction as the journal's, a tail that may be a secret's beginning held until the
    rest arrives. Only what was stored used to be redacted; a server echoing a key had it
    printed in `--json` text events (issue 24 F8)."""

    def __init__(self, *, opening: bool = False) -> None:
        self.held = ""
        self.opening = opening  # a stray template tag at its start is cut (`markup`)

    def next(self, text: str) -> str:
        whole = self.held + text
        if self.opening:
            whole, waiting = opening_markup(whole)
            if waiting:
                self.held = whole
                return ""
            self.opening = False
        cut = redactable_prefix(whole)
        self.held = whole[cut:]
        return redact(whole[:cut])

    def rest(self) -> str:
        rest, self.held = redact(self.held), ""
        return rest


def _shown_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as shown, secrets redacted (the call itself runs with them)."""
    text = json.dumps(arguments, ensure_ascii=False)
    cleaned = redact(text)
    return arguments if cleaned == text else dict(json.loads(cleaned))


def _journalable(parts: list[str]) -> tuple[str, list[str]]:
    """(what can be journalled now, what waits for the next checkpoint): a tail that may be
    the start of a secret waits for the text after it, so that each checkpoint, redacted on
    its own, holds every secret whole (`redaction.redactable_prefix`)."""
    whole = "".join(parts)
    cut = redactable_prefix(whole)
    return whole[:cut], [whole[cut:]] if cut < len(whole) else []


async def stream_step(
    provider: ChatProvider, ledger: Ledger, session: str, out: StepOutcome
) -> AsyncIterator[TurnEvent]:
    """Stream one model call into `out`, yielding what the observers show as it arrives."""
    journal = _Journal(ledger, session)
    text, thinking = _Shown(opening=True), _Shown()
    async with contextlib.aclosing(provider.stream(out.request)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                out._text.add(event.text)
                journal.add(text=event.text)
                if thinking.held:  # the thinking ended: what it held back is shown first
                    yield ThinkingChunk(thinking.rest())
                if shown := text.next(event.text):
                    yield TextChunk(shown)
            elif isinstance(event, ThinkingDelta):
                out._thinking.add(event.text)
                journal.add(thinking=event.text)
                if shown := thinking.next(event.text):
                    yield ThinkingChunk(shown)
            elif isinstance(event, ThinkingSigned):
                out.signed_thinking.append(event.block)
            elif isinstance(event, ToolCallEvent):
                out.calls.append(event.call)
                if text.held:
                    yield TextChunk(text.rest())
                arguments = _shown_arguments(event.call.arguments)
                yield ToolCallRequested(event.call.id, event.call.name, arguments)
            elif isinstance(event, StreamNotice):
                ledger.append(session, repaired(event))
                yield Notice(event.message)
            elif isinstance(event, Waiting):  # e.g. the model still loading: shown, not kept
                yield Notice(event.message)
            elif isinstance(event, Done):
                out.done = event
    if rest := thinking.rest():
        yield ThinkingChunk(rest)
    if rest := text.rest():
        yield TextChunk(rest)


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
    """The record of a stream notice, with the raw bytes as they arrived (secrets redacted:
    base64 would hide one from the ledger's redaction): `stream_repaired` (a line repaired) or
    `stream_tool_call_cut` (a call the output limit cut off)."""
    kept = redact(notice.raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
    raw = base64.b64encode(kept).decode("ascii")
    return Activity(
        type=f"stream_{notice.kind}", message=notice.message, detail={"raw_base64": raw}
    )


_WINDOW_SLACK = 8  # tokens a server's own count may differ from ours at the window's edge


def output_limit_activity(
    binding: ModelBinding, request: ChatRequest, done: Done, profile: CapacityProfile, step: int
) -> Activity | None:
    """The record of an answer that stopped because it reached a limit (`done_reason` "length":
    Ollama's `done_reason`, OpenAI's `finish_reason`, Anthropic's `max_tokens`), or None. Its
    message is what the user is told: which limit, and that "continue" goes on; when the
    reserve this cut teaches is larger, how much room the next answer gets."""
    if done.done_reason != "length":
        return None
    limit, written = request.max_tokens or 0, done.usage.output_tokens
    prompt, window = done.usage.prompt_tokens(), request.num_ctx or 0
    # The window is named only when the counts show it full: a short count under the output
    # limit alone proves nothing (thinking tokens, or a server that counts one part, filled it).
    window_full = bool(window and prompt) and prompt + written >= window - _WINDOW_SLACK
    if window_full or (not limit and window):
        message = (
            f"the answer stopped when the model's {window:,}-token context window "
            f"was full ({prompt:,} prompt + {written:,} answer tokens); "
            'say "continue" to go on'
        )
    else:
        room = learn_output_reserve(profile, written or limit, stopped_at_limit=True)
        grown = f" (the next answer may run to {room:,} tokens)" if room > limit else ""
        message = (
            f"the answer stopped at the {limit:,}-token output limit{grown}; "
            'say "continue" to go on'
        )
    detail = {"provider": binding.provider, "model": binding.model, "step": step}
    detail |= {"limit": limit, "output_tokens": written, "num_ctx": request.num_ctx}
    return Activity(type=OUTPUT_LIMIT, message=message, detail=detail)
