"""Efficacy on a real model: does the turn the user refers to reach it, and does it act?

    python bench/efficacy.py --model ~/.cache/vak-desktop/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        [--tries 6] [--arms vak,full,truncated,fresh] [--turns 40] [--horizon 4096 | --probe] \
        [--direct 1000,2000,4000] [--n-ctx 32768] [--threads N]

One llama.cpp server (the project's embedded engine, `runtime/providers/embedded.py`; its prompt
cache is on, and every arm runs against the same server and the same tools) serves a generated
session: `--turns` turns with varied tool results (some over 30k characters) and a fact stated
in turn 3 ("the shipment code is …"). The directive then needs a tool call *and* that early
fact: "Search my files for the shipment code I gave you earlier." A try is correct when the
model calls a file tool whose arguments carry the code. Arms:

    vak        a real TurnRunner turn, planned against the bound profile (`--horizon` tokens
               measured, or the real probe with `--probe`), first step only
    full       the naive full history (what Open WebUI / LM Studio send)
    truncated  the naive history cut to its newest 4,096 tokens (Ollama's default)
    fresh      a Vak turn in a new chat asking the same with the code in it: the first-token
               baseline the imported session is measured against
    vak-typed, fresh-typed
               the same turns typed into the window: a pause in typing sent the runner's warm
               request (`runtime/turn/warm.py`, the next request up to its tail) before Enter;
               the clock starts at Enter, as the user feels it

The naive arms get the same text-form recogniser a Vak turn runs (a small model writes its
calls as text), so their tool-call rates are the best those apps could show. Each arm's first
try is also printed alone ("cold"): later tries reuse the server's prompt cache.

Per arm: tool-call rate, correct rate, median prompt tokens, median seconds to the first token
and to the end of the step. `--probe` times the probe (requests, seconds); `--direct` is the
direct measurement beside it: a fixed real-shaped request (the naive history cut to each
size) sampled `--tries` times a size, its tool-call rate per size. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vak_desktop.cli.eval import scratch_tools
from vak_desktop.context.evidence.text_calls import find_text_calls
from vak_desktop.context.payloads import CapacityProfile, Ewma, Horizon, ToolCall
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider, Done, ModelDetails, TextDelta, ToolCallEvent
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools, run_probe
from vak_desktop.runtime.evaluation.live import (
    ASK,
    CODE,
    generated_session,
    judged,
    live_try,
    shipment_files,
)
from vak_desktop.runtime.providers.embedded import EngineConfig, chat_template, start_engine
from vak_desktop.runtime.settings import Settings

DEFAULT_MODEL = Path.home() / ".cache/vak-desktop/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
FRESH_ASK = f"Search my files for the shipment code {CODE}."
TRUNCATED_TOKENS = 4_096  # Ollama's default num_ctx
RATIO = 0.3  # tokens per char for the naive cut (the server counts the real prompt)
MAX_OUTPUT = 256


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Sample:
    tool_call: bool
    correct: bool
    prompt_tokens: int
    first_token_s: float
    end_s: float
    refused: str = ""
    reached: bool = False  # the request carried the early fact


@dataclass
class Arm:
    name: str
    samples: list[Sample] = field(default_factory=list)

    def row(self) -> str:
        ok = [s for s in self.samples if not s.refused]
        if not ok:
            why = self.samples[0].refused if self.samples else "not run"
            return f"{self.name:<10} refused: {why[:80]}"
        med = statistics.median
        return (
            f"{self.name:<10} tool {sum(s.tool_call for s in ok)}/{len(self.samples)}  "
            f"correct {sum(s.correct for s in ok)}/{len(self.samples)}  "
            f"fact sent {sum(s.reached for s in ok)}/{len(self.samples)}  "
            f"prompt {med(s.prompt_tokens for s in ok):>7,.0f} tok  "
            f"first token {med(s.first_token_s for s in ok):6.1f} s "
            f"(cold {ok[0].first_token_s:.1f} s)  "
            f"end {med(s.end_s for s in ok):6.1f} s"
        )


async def timed_stream(provider: ChatProvider, request: ChatRequest) -> Sample:
    """One model call, timed from send to the first text or call and to its end."""
    start = time.monotonic()
    first, calls, text, prompt = 0.0, [], "", 0
    try:
        async with contextlib.aclosing(provider.stream(request)) as stream:
            async for event in stream:
                if isinstance(event, TextDelta | ToolCallEvent) and not first:
                    first = time.monotonic() - start
                if isinstance(event, TextDelta):
                    text += event.text
                elif isinstance(event, ToolCallEvent):
                    calls.append(event.call)
                elif isinstance(event, Done):
                    prompt = event.usage.prompt_tokens()
    except ProviderError as exc:
        return Sample(False, False, 0, 0.0, 0.0, refused=str(exc))
    if not calls:  # the same recogniser a Vak turn runs: calls written as text count here too
        admitted = {t.name: t.parameters for t in request.tools}
        calls = [ToolCall("text", c.name, c.arguments) for c in find_text_calls(text, admitted)]
    called, right = judged(calls)
    end = time.monotonic() - start
    reached = any(CODE in m.content for m in request.messages)
    return Sample(called, right, prompt, first or end, end, reached=reached)


def naive_messages(document: dict[str, Any], ask: str, budget: int | None) -> list[Message]:
    """The history as chat apps send it: every message whole, or only the newest that fit."""
    raw = document["messages"]
    out: list[Message] = []
    for m in raw:
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in m.get("tool_calls", ())
        )
        out.append(
            Message(
                role=m["role"],
                content=m.get("content") or "",
                tool_calls=calls,
                tool_call_id=m.get("tool_call_id", ""),
            )
        )
    out.append(Message(role="user", content=ask))
    if budget is None:
        return out
    system, rest = out[0], out[1:]
    while rest and sum(m.chars() for m in (system, *rest)) * RATIO > budget:
        rest = rest[1:]
    while rest and rest[0].role != "user":  # never open on a tool result or an answer
        rest = rest[1:]
    return [system, *rest]


async def vak_try(
    provider: ChatProvider,
    binding: ModelBinding,
    document: dict[str, Any] | None,
    files: Path,
    profile: CapacityProfile | None,
    ask: str = ASK,
    *,
    typed: bool = False,
) -> Sample:
    """One real turn's first step (`vak eval --live`'s try), as a sample of its arm."""
    try:
        done = await live_try(
            provider, binding, document, files, profile, scratch_tools, ask, typed=typed
        )
    except ProviderError as exc:
        return Sample(False, False, 0, 0.0, 0.0, refused=str(exc))
    return Sample(
        done.tool_call, done.correct, done.prompt_tokens, done.first_token_s, done.end_s,
        reached=done.reached,
    )  # fmt: skip


def measured_profile(binding: ModelBinding, horizon: int, n_ctx: int) -> CapacityProfile:
    return CapacityProfile(
        provider=binding.provider,
        model=binding.model,
        declared_window=n_ctx,
        instruction_horizon=Horizon(horizon, 0.9, "2026-12-01T00:00:00Z"),
        output_reserve=MAX_OUTPUT,
        tokens_per_char=Ewma(RATIO, 5),
        provenance={"source": "bench", "probed_at": "2026-12-01T00:00:00Z"},
    )


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--tries", type=int, default=6)
    parser.add_argument("--arms", default="vak,full,truncated,fresh,vak-typed,fresh-typed")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--horizon", type=int, default=4_096, help="the measured horizon")
    parser.add_argument("--probe", action="store_true", help="measure it with the real probe")
    parser.add_argument("--probe-budget", type=float, default=90.0, help="the probe's seconds")
    parser.add_argument("--direct", default="", help="sizes for the direct measurement")
    parser.add_argument("--n-ctx", type=int, default=32_768)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    document = generated_session(args.turns)
    config = EngineConfig(
        args.model,
        n_ctx=args.n_ctx,
        chat_template=chat_template("qwen2.5-tools"),
        threads=args.threads,
        max_output_tokens=MAX_OUTPUT,
    )
    say(f"starting the engine on {args.model.name} (n_ctx {args.n_ctx:,}) …")
    with tempfile.TemporaryDirectory() as root:
        files = shipment_files(Path(root))
        async with await start_engine(config) as engine, httpx.AsyncClient(timeout=900) as client:
            provider = engine.provider(client)
            details = ModelDetails(name=engine.model, declared_window=args.n_ctx)
            binding = ModelBinding(provider=provider.name, model=engine.model, details=details)
            specs = default_tools(Settings(workspace=(str(files),))).specs()
            profile: CapacityProfile | None = measured_profile(binding, args.horizon, args.n_ctx)
            if args.probe:
                say("probing …")
                start = time.monotonic()
                with tempfile.TemporaryDirectory() as scratch:  # the prefix a real turn sends
                    ledger = Ledger.open(Path(scratch) / "ledger.sqlite")
                    tools = default_tools(Settings(workspace=(str(files),)))
                    prefix = TurnRunner(ledger, provider, tools).probe_prefix(binding)
                    await tools.aclose()
                    ledger.close()
                record = await run_probe(
                    provider,
                    engine.model,
                    details=details,
                    prefix=prefix,
                    nonce="efficacy",
                    deadline_s=args.probe_budget,
                )
                spent = time.monotonic() - start
                profile = dataclasses.replace(record.profile, provider=binding.provider)
                requests = record.activity.detail.get("requests", "?")
                print(
                    f"probe: horizon {profile.instruction_horizon.tokens:,} tokens, "
                    f"{requests} requests, {spent:.0f} s"
                )
            results: dict[str, Arm] = {name: Arm(name) for name in arms}
            for attempt in range(args.tries):
                for name in arms:
                    say(f"try {attempt + 1}/{args.tries}: {name} …")
                    typed = name.endswith("-typed")
                    if name.startswith("vak"):
                        sample = await vak_try(
                            provider, binding, document, files, profile, typed=typed
                        )
                    elif name.startswith("fresh"):
                        sample = await vak_try(
                            provider, binding, None, files, profile, FRESH_ASK, typed=typed
                        )
                    else:
                        budget = TRUNCATED_TOKENS if name == "truncated" else None
                        request = ChatRequest(
                            model=engine.model,
                            messages=tuple(naive_messages(document, ASK, budget)),
                            tools=specs,
                            max_tokens=MAX_OUTPUT,
                        )
                        sample = await timed_stream(provider, request)
                    results[name].samples.append(sample)
                    say(f"  {results[name].row()}")
            print(f"\nefficacy: {engine.model}, {args.turns} turns, {args.tries} tries an arm")
            for arm in results.values():
                print(arm.row())
            for suffix, how in (("", "sent at once"), ("-typed", "typed in the window")):
                fresh, vak = results.get(f"fresh{suffix}"), results.get(f"vak{suffix}")
                if fresh and vak and fresh.samples and vak.samples:
                    ratio = statistics.median(s.first_token_s for s in vak.samples) / max(
                        1e-9, statistics.median(s.first_token_s for s in fresh.samples)
                    )
                    print(
                        f"first token, imported session ÷ fresh one-turn chat ({how}): {ratio:.2f}×"
                    )
            for size in [int(s) for s in args.direct.split(",") if s.strip()]:
                request = ChatRequest(
                    model=engine.model,
                    messages=tuple(naive_messages(document, FRESH_ASK, size)),
                    tools=specs,
                    max_tokens=MAX_OUTPUT,
                )
                samples = [await timed_stream(provider, request) for _ in range(args.tries)]
                called = sum(s.tool_call for s in samples)
                tokens = statistics.median(s.prompt_tokens for s in samples)
                print(f"direct: {tokens:>7,.0f} prompt tokens: tool call {called}/{len(samples)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
