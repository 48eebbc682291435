"""`vak eval --live`: the live replay on the bound model (spec "Verification", issue #17).

Why it exists: the engine's promise for a small model — the turn the user refers to reaches
it, and it acts — can only be shown on the real model. This check builds a long generated
session (40 turns, varied tool results, some over 30k characters, a fact stated in turn 3),
imports it into a scratch ledger (never the user's), binds it to the model's profile as the
user's ledger knows it (its probe, if one ran), and runs the first step of a real turn asking
for a tool call that needs the early fact: "Search my files for the shipment code I gave you
earlier." A try is correct when the model calls a file tool whose arguments carry the code.
It passes when at least 5 tries in 6 are correct. `bench/efficacy.py` runs the same session
and turn beside the naive arms.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from vak_desktop.context.payloads import CapacityProfile, Receipt, ToolCall
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.evaluation.checks import Check
from vak_desktop.runtime.events import StepFinished, TextChunk, ToolCallRequested
from vak_desktop.runtime.sessions.interchange import import_openai
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.runtime.turn.runner import TurnRunner

# the tools a try runs with, over the generated files' folder (the CLI's and the bench's
# `default_tools` with that folder as the workspace)
ToolsFor = Callable[[Path], ToolRegistry]

LIVE_EFFICACY = "live_efficacy"
CODE = "ZX-4471-Q"
ASK = "Search my files for the shipment code I gave you earlier."
FILE_TOOLS = ("grep", "glob", "read")
PASS_RATE = 5 / 6


def generated_session(turns: int = 40) -> dict[str, Any]:
    """The session in the OpenAI chat format: facts early, varied tool results after."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    for n in range(1, turns + 1):
        if n in (3, 5):
            fact = (
                f"Note for later: the shipment code is {CODE}."
                if n == 3
                else "Also remember: the warehouse is in Tilburg."
            )
            noted = (
                "Noted: I will keep the shipment code in mind."
                if n == 3
                else "Noted: the warehouse is in Tilburg."
            )
            messages += [{"role": "user", "content": fact}, {"role": "assistant", "content": noted}]
            continue
        messages.append(
            {"role": "user", "content": f"Step {n}: check the build log of module {n}."}
        )
        if n % 4 in (0, 1):
            tool = "read" if n % 4 == 0 else "grep"
            arguments = (
                {"path": f"logs/module{n}.log"} if tool == "read" else {"pattern": f"mod{n}"}
            )
            call = {
                "id": f"call{n}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            lines = 900 if n % 8 == 0 else 40  # every 8th result is over 30k characters
            body = "\n".join(
                f"[{i:04}] module{n}: compiled unit {i} in {i % 97} ms" for i in range(lines)
            )
            messages.append({"role": "tool", "tool_call_id": f"call{n}", "content": body})
        messages.append(
            {"role": "assistant", "content": f"Module {n} builds cleanly; {n % 7} warnings remain."}
        )
    return {"messages": messages}


def shipment_files(root: Path) -> Path:
    """The user's files the directive asks to search: the manifest holds the code."""
    folder = root / "files"
    (folder / "shipping").mkdir(parents=True)
    (folder / "shipping" / "manifest.txt").write_text(
        f"Shipment {CODE}: 40 crates, due Friday.\nShipment AB-1000-X: 2 crates.\n"
    )
    (folder / "notes.md").write_text("# Notes\nNothing about shipments here.\n")
    return folder


@dataclass(frozen=True)
class LiveTry:
    """One try: a file tool called, one carrying the code, the code in the request sent, the
    request's prompt tokens, seconds to the first text or call and to the step's end."""

    tool_call: bool
    correct: bool
    reached: bool
    prompt_tokens: int
    first_token_s: float
    end_s: float
    cached: int = 0  # of `prompt_tokens`, those the server read from its prompt cache
    prefill_s: float = 0.0  # the server's own time on the prompt (0 when it does not say)


def judged(calls: Sequence[ToolCall]) -> tuple[bool, bool]:
    """(a file tool was called, one of them carried the code)."""
    files = [c for c in calls if c.name in FILE_TOOLS]
    return bool(files), any(CODE in json.dumps(c.arguments) for c in files)


class _Recording:
    """The provider, keeping the requests it was sent (did the fact reach the model?)."""

    def __init__(self, provider: ChatProvider) -> None:
        self.inner = provider
        self.name = provider.name
        self.requests: list[ChatRequest] = []

    def stream(self, request: ChatRequest) -> AsyncIterator[Any]:
        self.requests.append(request)
        return self.inner.stream(request)

    def __getattr__(self, name: str) -> Any:  # everything else is the provider's
        return getattr(self.inner, name)


async def live_try(
    provider: ChatProvider,
    binding: ModelBinding,
    document: dict[str, Any] | None,
    files: Path,
    profile: CapacityProfile | None,
    tools_for: ToolsFor,
    ask: str = ASK,
    *,
    typed: bool = False,
) -> LiveTry:
    """The first step of a real turn on a fresh import of `document` (None: a new chat), in a
    scratch ledger. `typed`: the question was typed into the window first, so the runner's warm
    request (`turn/warm.py`) ran before the user pressed Enter — the clock starts at Enter.
    ProviderError propagates: the caller says what the server refused."""
    with tempfile.TemporaryDirectory() as scratch:
        ledger = Ledger.open(Path(scratch) / "ledger.sqlite")
        tools = tools_for(files)
        try:
            if document is None:
                session = ledger.create_session("fresh").id
            else:
                session = import_openai(ledger, document, title="live replay").session
            if profile is not None:
                ledger.append(session, profile)
            recording = _Recording(provider)
            runner = TurnRunner(ledger, recording, tools, keep_alive=None)  # type: ignore[arg-type]
            warming = runner.warm(session, ask, binding) if typed else None
            if warming is not None:
                await warming
                recording.requests.clear()  # the turn's own requests are the ones judged
            start = time.monotonic()
            first, calls, receipt = 0.0, [], Receipt("", "")
            turn = cast(AsyncGenerator[Any, None], runner.run(session, ask, binding))
            async with contextlib.aclosing(turn) as events:
                async for event in events:
                    if isinstance(event, TextChunk | ToolCallRequested) and not first:
                        first = time.monotonic() - start
                    if isinstance(event, ToolCallRequested):
                        calls.append(ToolCall(event.id, event.name, event.arguments))
                    if isinstance(event, StepFinished):
                        receipt = event.receipt
                        break
            end = time.monotonic() - start
        finally:
            await tools.aclose()
            ledger.close()
    called, right = judged(calls)
    sent = recording.requests[0].messages if recording.requests else ()
    reached = any(CODE in m.content for m in sent)
    usage, timings = receipt.usage, receipt.timings
    return LiveTry(
        called, right, reached, usage.prompt_tokens(), first or end, end,
        cached=usage.cache_read_tokens, prefill_s=timings.prompt_eval_ns / 1e9,
    )  # fmt: skip


async def live_efficacy(
    provider: ChatProvider,
    binding: ModelBinding,
    profile: CapacityProfile,
    tries: int,
    tools_for: ToolsFor,
) -> Check:
    """The check: `tries` live tries on the generated session; ok at ≥ 5 correct in 6."""
    document = generated_session()
    with tempfile.TemporaryDirectory() as root:
        files = shipment_files(Path(root))
        done = [
            await live_try(provider, binding, document, files, profile, tools_for)
            for _ in range(tries)
        ]
    correct = sum(t.correct for t in done)
    prompts = sorted(t.prompt_tokens for t in done)
    firsts = sorted(t.first_token_s for t in done)
    detail = (
        f"{correct}/{tries} correct, {sum(t.tool_call for t in done)}/{tries} called a file "
        f"tool, the early fact sent {sum(t.reached for t in done)}/{tries}; median prompt "
        f"{prompts[len(prompts) // 2]:,} tokens, first token {firsts[len(firsts) // 2]:.1f} s "
        f"(horizon {profile.instruction_horizon.tokens:,})"
    )
    data = {"tries": [t.__dict__ for t in done]}
    return Check(LIVE_EFFICACY, tries > 0 and correct >= PASS_RATE * tries, detail, data=data)
