"""Efficacy on a real model: does the turn the user refers to reach it, and does it act?

    python bench/efficacy.py --model ~/.cache/vak-desktop/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        [--cases shipment,locker,venue] [--tries 6] [--fresh-tries 3] [--arms vak,fresh,full,truncated] \
        [--horizon 4096 | --probe] [--turn-timeout 240] [--direct 1000,2000,4000] [--n-ctx 32768] [--threads N] [--out DIR]

One llama.cpp server (the project's embedded engine, `runtime/providers/embedded.py`; its prompt
cache is on, and every arm runs against the same server and the same tools) serves each case of
`bench/efficacy_cases.py`: a generated session with tool results (some over 30k characters)
and a fact planted at one turn, a workspace of files, and a directive that needs a tool call
*and* that early fact ("Search my files for the shipment code I gave you earlier."). The
success rules are that module's, fixed before any run: the first call is right when a file tool
is called with the value (or the words leading to its file); the final answer is right when the
turn's answer names what was found — the file's name or the value the directive asked for — and
is not a raw JSON call. A turn out of `--turn-timeout` is undecided. Arms:

    vak        a real TurnRunner turn, run to its end, planned against the bound profile
               (`--horizon` tokens measured, or the real probe with `--probe`)
    full       the naive full history (what Open WebUI / LM Studio send), first step only
    truncated  the naive history cut to its newest 4,096 tokens (Ollama's default), first step
    fresh      a Vak turn in a new chat asking the same with the value in it (`--fresh-tries`):
               the first-token baseline the imported session is measured against
    vak-typed, fresh-typed
               (the shipment case, first step only) the same turns typed into the window: a
               pause in typing sent the runner's warm request (`runtime/turn/warm.py`) before
               Enter; the clock starts at Enter, as the user feels it

The naive arms get the same text-form recogniser a Vak turn runs (a small model writes its calls
as text), so their tool-call rates are the best those apps could show. Every try starts from a
cold prompt cache: a short unrelated request (`flush`) goes first, so the server holds nothing
of the try's request — not even the system text and tools — and first-token times compare cold
to cold across arms and tries (before, tries 2–n of an arm re-sent the same request and were
served from the cache in 0.2 s, which made an imported session look ten times faster than a
fresh chat). A first token is the first text or the first whole call, so a turn that opens with
a call waits on its generation too; the server's own prefill time ("prefill", from its timings)
is printed beside it. The engine keeps no prompts in RAM beside its slot for this
(`prompt_ram_mib=0`: llama.cpp would restore the try before's prompt). The tokens the server
still read from its cache are printed ("cached"). `--warm-tries` keeps the old order (each try
on the cache the one before left).

Per case and arm: tool-call rate, first call right, the fact sent, final answer right (whole
turns), median prompt tokens of the first request, median seconds to the first token and to the
end of the turn (naive arms: of the step), median steps. `--probe` times the probe (requests, seconds); `--direct` is the
direct measurement beside it: a fixed real-shaped request (the naive history cut to each
size) sampled `--tries` times a size, its tool-call rate per size. Progress goes to stderr;
`--out DIR` writes each whole turn's entries and requests as `<case>-<arm>-<try>.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from efficacy_cases import CASES, Case

from vak_desktop.cli.eval import scratch_tools
from vak_desktop.context.codec import to_json_value
from vak_desktop.context.evidence.text_calls import find_text_calls
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Ewma,
    Horizon,
    ToolCall,
)
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider, Done, ModelDetails, TextDelta, ToolCallEvent
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools, run_probe
from vak_desktop.runtime.evaluation.live import ASK, live_try
from vak_desktop.runtime.events import StepFinished, TextChunk, ToolCallRequested
from vak_desktop.runtime.providers.embedded import EngineConfig, chat_template, start_engine
from vak_desktop.runtime.sessions.interchange import import_openai
from vak_desktop.runtime.sessions.transcripts import session_turns
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.turn.answering import COMPOSED, RUNTIME_SEARCH

DEFAULT_MODEL = Path.home() / ".cache/vak-desktop/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
TRUNCATED_TOKENS = 4_096  # Ollama's default num_ctx
RATIO = 0.3  # tokens per char for the naive cut (the server counts the real prompt)
MAX_OUTPUT = 256


COMPOSED_MARK = COMPOSED.split("`")[0]  # "Vak composed this answer from the "


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Sample:
    tool_call: bool
    correct: bool  # the first call was right
    prompt_tokens: int
    first_token_s: float
    end_s: float
    refused: str = ""
    reached: bool = False  # the request carried the early fact
    answered: bool | None = None  # the final answer was right (None: first step only)
    steps: int = 1
    undecided: bool = False  # the turn ran out of its time: neither right nor wrong
    answer: str = ""
    record: dict[str, Any] = field(default_factory=dict)  # what `--out` writes of the try
    composed: bool = False  # the shown answer is one Vak composed from the find, not the model's
    searched: bool = False  # Vak ran the asked search itself (the model did not, after a repair)
    cached: int = 0  # of the first request's prompt tokens, those read from the server's cache
    prefill_s: float = 0.0  # the server's own seconds on the first request's prompt


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
        n = len(self.samples)
        final = ""
        if any(s.answered is not None for s in ok):
            undecided = sum(s.undecided for s in ok)
            by_model = sum(bool(s.answered) and not s.composed for s in ok)
            final = (
                f"final answer {sum(bool(s.answered) for s in ok)}/{n} "
                f"(the model's own {by_model}, Vak-composed {sum(s.composed for s in ok)}, "
                f"Vak searched {sum(s.searched for s in ok)}"
                + (f", {undecided} undecided)  " if undecided else ")  ")
            )
        return (
            f"{self.name:<10} tool {sum(s.tool_call for s in ok)}/{n}  "
            f"first call right {sum(s.correct for s in ok)}/{n}  "
            f"fact sent {sum(s.reached for s in ok)}/{n}  {final}"
            f"prompt {med(s.prompt_tokens for s in ok):>7,.0f} tok  "
            f"first token {med(s.first_token_s for s in ok):6.1f} s "
            f"(first try {ok[0].first_token_s:.1f} s, cached {med(s.cached for s in ok):,.0f} tok, "
            f"prefill {med(s.prefill_s for s in ok):.1f} s)  "
            f"end {med(s.end_s for s in ok):6.1f} s  steps {med(s.steps for s in ok):.0f}"
        )


async def timed_stream(provider: ChatProvider, request: ChatRequest, case: Case) -> Sample:
    """One model call, timed from send to the first text or call and to its end."""
    start = time.monotonic()
    first, calls, text, prompt, cached, prefill = 0.0, [], "", 0, 0, 0.0
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
                    prompt, cached = event.usage.prompt_tokens(), event.usage.cache_read_tokens
                    prefill = event.timings.prompt_eval_ns / 1e9
    except ProviderError as exc:
        return Sample(False, False, 0, 0.0, 0.0, refused=str(exc))
    if not calls:  # the same recogniser a Vak turn runs: calls written as text count here too
        admitted = {t.name: t.parameters for t in request.tools}
        calls = [ToolCall("text", c.name, c.arguments) for c in find_text_calls(text, admitted)]
    called, right = case.first_call_right(calls)
    end = time.monotonic() - start
    reached = any(case.value in m.content for m in request.messages)
    return Sample(
        called, right, prompt, first or end, end, reached=reached, cached=cached, prefill_s=prefill
    )


async def flush(provider: ChatProvider, model: str) -> None:
    """Leave the server's prompt cache holding nothing a try will send: one short request
    (a system text no arm sends, one output token). llama.cpp keeps one slot's prompt here, so
    the next request is prefilled from its first token (the chat template's opening aside)."""
    request = ChatRequest(
        model=model,
        messages=(
            Message(role="system", content=f"Cache flush {time.time_ns()}."),
            Message(role="user", content="Say ok."),
        ),
        max_tokens=1,
    )
    async with contextlib.aclosing(provider.stream(request)) as events:
        async for _ in events:
            pass


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
    """One real turn's first step (`vak eval --live`'s try, the shipment case), as a sample."""
    try:
        done = await live_try(
            provider, binding, document, files, profile, scratch_tools, ask, typed=typed
        )
    except ProviderError as exc:
        return Sample(False, False, 0, 0.0, 0.0, refused=str(exc))
    return Sample(
        done.tool_call, done.correct, done.prompt_tokens, done.first_token_s, done.end_s,
        reached=done.reached, cached=done.cached, prefill_s=done.prefill_s,
    )  # fmt: skip


class _Recording:
    """The provider, keeping the requests a turn sent (did the fact reach the model?)."""

    def __init__(self, provider: ChatProvider) -> None:
        self.inner = provider
        self.name = provider.name
        self.requests: list[ChatRequest] = []

    def stream(self, request: ChatRequest) -> Any:
        self.requests.append(request)
        return self.inner.stream(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def imported(document: dict[str, Any], folder: Path) -> tuple[Path, str]:
    """`document` imported once into a ledger file in `folder`: (the file, the session).
    Each try runs on a copy, so every try asks the same session with the same entry ids —
    as a user asks again in the session they imported — and the server's prompt cache
    holds across tries (a new import per try gave new evidence ids in every card line, and
    the cache broke after the system text: 523 of 2,549 tokens read from it)."""
    path = folder / "imported.sqlite"
    ledger = Ledger.open(path)
    session = import_openai(ledger, document, title="planted fact").session
    ledger.close()
    return path, session


async def whole_turn(
    provider: ChatProvider,
    binding: ModelBinding,
    case: Case,
    source: tuple[Path, str] | None,
    files: Path,
    profile: CapacityProfile | None,
    ask: str,
    timeout_s: float,
) -> Sample:
    """A real turn run to its end on a copy of the imported session `source` (None: a new
    chat) in a scratch ledger, judged by the case's rules: its first step, and its final
    answer as `vak show` has it. Out of `timeout_s`: undecided."""
    with tempfile.TemporaryDirectory() as scratch:
        if source is not None:  # the ledger and its head anchor beside it
            for part in source[0].parent.glob(f"{source[0].name}*"):
                suffix = part.name.removeprefix(source[0].name)
                shutil.copyfile(part, Path(scratch) / f"ledger.sqlite{suffix}")
        ledger = Ledger.open(Path(scratch) / "ledger.sqlite")
        tools = default_tools(Settings(workspace=(str(files),)), ledger)
        recording = _Recording(provider)
        session = ledger.create_session("fresh").id if source is None else source[1]
        if profile is not None:
            ledger.append(session, profile)
        runner = TurnRunner(ledger, recording, tools, keep_alive=None)
        start = time.monotonic()
        first, calls, prompt, steps, undecided, cached, prefill = 0.0, [], 0, 0, False, 0, 0.0
        try:
            async with asyncio.timeout(timeout_s):
                turn = cast(AsyncGenerator[Any, None], runner.run(session, ask, binding))
                async with contextlib.aclosing(turn) as events:
                    async for event in events:
                        if isinstance(event, TextChunk | ToolCallRequested) and not first:
                            first = time.monotonic() - start
                        if isinstance(event, ToolCallRequested) and not steps:
                            calls.append(ToolCall(event.id, event.name, event.arguments))
                        if isinstance(event, StepFinished):
                            steps += 1
                            if steps == 1:
                                prompt = event.receipt.usage.prompt_tokens()
                                cached = event.receipt.usage.cache_read_tokens
                                prefill = event.receipt.timings.prompt_eval_ns / 1e9
        except TimeoutError:
            undecided = True
        except ProviderError as exc:
            return Sample(False, False, 0, 0.0, 0.0, refused=str(exc))
        finally:
            await tools.aclose()
        end = time.monotonic() - start
        answer = "" if undecided else session_turns(ledger, session)[-1].answer
        record = turn_record(ledger, session, recording.requests, answer)
        chain = ledger.chain_to_root(session)
        searched = any(
            isinstance(e.payload, Activity) and e.payload.type == RUNTIME_SEARCH for e in chain
        )
        last = next(
            (e.payload for e in reversed(chain) if isinstance(e.payload, AssistantStep)), None
        )
        composed = last is not None and last.model == "vak" and COMPOSED_MARK in last.text
        ledger.close()
    called, right = case.first_call_right(calls)
    sent = recording.requests[0].messages if recording.requests else ()
    reached = any(case.value in m.content for m in sent)
    answered = False if undecided else case.answer_right(answer)
    return Sample(
        called, right, prompt, first or end, end, reached=reached, answered=answered,
        steps=steps, undecided=undecided, answer=answer, record=record,
        composed=composed and not undecided, searched=searched, cached=cached, prefill_s=prefill,
    )  # fmt: skip


def turn_record(
    ledger: Ledger, session: str, requests: list[ChatRequest], answer: str
) -> dict[str, Any]:
    """The try as `--out` keeps it: the last turn's entries (kind and payload) and every
    request's system text, tools and messages since the turn's directive."""
    chain = ledger.chain_to_root(session)
    start = max(
        (i for i, e in enumerate(chain) if type(e.payload).__name__ == "Directive"), default=0
    )
    entries = [
        {"kind": type(e.payload).__name__, "payload": to_json_value(e.payload)}
        for e in chain[start:]
    ]
    sent = [
        {
            "tools": [t.name for t in r.tools],
            "messages": [to_json_value(m) for m in r.messages],
        }
        for r in requests
    ]
    return {"answer": answer, "entries": entries, "requests": sent}


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


async def probed_profile(
    provider: ChatProvider, binding: ModelBinding, files: Path, budget_s: float
) -> CapacityProfile:
    """The real probe's profile, with the prefix a real turn sends; its figures printed."""
    say("probing …")
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:  # the prefix a real turn sends
        ledger = Ledger.open(Path(scratch) / "ledger.sqlite")
        tools = default_tools(Settings(workspace=(str(files),)))
        prefix = TurnRunner(ledger, provider, tools).probe_prefix(binding)
        await tools.aclose()
        ledger.close()
    record = await run_probe(
        provider, binding.model, details=binding.details, prefix=prefix, nonce="efficacy",
        deadline_s=budget_s, memory=True,  # both tasks, as the app probes (`models.py`)
    )  # fmt: skip
    spent = time.monotonic() - start
    profile = dataclasses.replace(record.profile, provider=binding.provider)
    horizon, memory = profile.instruction_horizon, profile.memory_horizon
    recalled = f", memory horizon {memory.tokens:,}" if memory else ""
    print(
        f"probe: horizon {horizon.tokens:,} tokens at confidence {horizon.confidence:.2f}"
        f"{recalled}, {record.activity.detail.get('requests', '?')} requests, {spent:.0f} s"
        f"\n  {record.activity.message}"  # why: undecided, from memory, stopped by the budget
    )
    return profile


async def run_case(
    provider: ChatProvider,
    binding: ModelBinding,
    case: Case,
    profile: CapacityProfile,
    arms: list[str],
    args: argparse.Namespace,
) -> dict[str, Arm]:
    """Every arm's tries on one case (arm by arm, so each keeps its prompt cache warm)."""
    document = case.session()
    results: dict[str, Arm] = {name: Arm(name) for name in arms}
    with tempfile.TemporaryDirectory() as root:
        files = case.files(Path(root))
        specs = default_tools(Settings(workspace=(str(files),))).specs()
        source = imported(document, Path(root)) if "vak" in arms else None
        for name in arms:
            typed = name.endswith("-typed")
            if typed and case.name != "shipment":
                continue  # the warm-request arms measure the original case only
            tries = args.fresh_tries if name.startswith("fresh") else args.tries
            for attempt in range(tries):
                say(f"{case.name} try {attempt + 1}/{tries}: {name} …")
                if not args.warm_tries:
                    await flush(provider, binding.model)
                if typed:
                    sample = await vak_try(
                        provider, binding, None if name.startswith("fresh") else document,
                        files, profile, case.fresh_ask if name.startswith("fresh") else case.ask,
                        typed=True,
                    )  # fmt: skip
                elif name in ("vak", "fresh"):
                    fresh = name == "fresh"
                    sample = await whole_turn(
                        provider, binding, case, None if fresh else source, files, profile,
                        case.fresh_ask if fresh else case.ask, args.turn_timeout,
                    )  # fmt: skip
                else:
                    budget = TRUNCATED_TOKENS if name == "truncated" else None
                    request = ChatRequest(
                        model=binding.model,
                        messages=tuple(naive_messages(document, case.ask, budget)),
                        tools=specs,
                        max_tokens=MAX_OUTPUT,
                    )
                    sample = await timed_stream(provider, request, case)
                results[name].samples.append(sample)
                if args.out is not None and sample.record:
                    args.out.mkdir(parents=True, exist_ok=True)
                    path = args.out / f"{case.name}-{name}-{attempt + 1}.json"
                    record = {**sample.record, "answered": sample.answered}
                    path.write_text(json.dumps(record, indent=1, ensure_ascii=False))
                if sample.answer:
                    say(f"  answer: {sample.answer[:160]!r}")
                say(f"  {results[name].row()}")
        for size in [int(s) for s in args.direct.split(",") if s.strip()]:
            request = ChatRequest(
                model=binding.model,
                messages=tuple(naive_messages(document, case.fresh_ask, size)),
                tools=specs,
                max_tokens=MAX_OUTPUT,
            )
            samples = [await timed_stream(provider, request, case) for _ in range(args.tries)]
            called = sum(s.tool_call for s in samples)
            tokens = statistics.median(s.prompt_tokens for s in samples)
            print(f"direct: {tokens:>7,.0f} prompt tokens: tool call {called}/{len(samples)}")
    return results


def load_average() -> str:
    with contextlib.suppress(OSError):
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    return "unknown"


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--cases", default=",".join(CASES), help="of bench/efficacy_cases.py")
    parser.add_argument("--tries", type=int, default=6)
    parser.add_argument("--fresh-tries", type=int, default=3, help="tries of the fresh arms")
    parser.add_argument("--arms", default="vak,fresh,full,truncated")
    parser.add_argument("--horizon", type=int, default=4_096, help="the measured horizon")
    parser.add_argument("--probe", action="store_true", help="measure it with the real probe")
    parser.add_argument(
        "--probe-budget",
        type=float,
        default=300.0,
        help="the probe's seconds (the app allows 30 min; with both tasks it takes 80-230 s on "
        "the 1.5B)",
    )
    parser.add_argument(
        "--warm-tries",
        action="store_true",
        help="no cache flush before a try: each starts on the cache the one before left",
    )
    parser.add_argument("--turn-timeout", type=float, default=240.0, help="a whole turn's seconds")
    parser.add_argument("--direct", default="", help="sizes for the direct measurement")
    parser.add_argument("--n-ctx", type=int, default=32_768)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="a folder for each try's record")
    args = parser.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    cases = [CASES[c.strip()] for c in args.cases.split(",") if c.strip()]
    config = EngineConfig(
        args.model,
        n_ctx=args.n_ctx,
        chat_template=chat_template("qwen2.5-tools"),
        threads=args.threads,
        max_output_tokens=MAX_OUTPUT,
        prompt_ram_mib=None if args.warm_tries else 0,  # nothing restored: a flush is cold
    )
    before = load_average()
    say(f"starting the engine on {args.model.name} (n_ctx {args.n_ctx:,}) …")
    async with await start_engine(config) as engine, httpx.AsyncClient(timeout=900) as client:
        provider = engine.provider(client)
        details = ModelDetails(name=engine.model, declared_window=args.n_ctx)
        binding = ModelBinding(provider=provider.name, model=engine.model, details=details)
        profile = measured_profile(binding, args.horizon, args.n_ctx)
        if args.probe:
            with tempfile.TemporaryDirectory() as root:
                files = cases[0].files(Path(root))
                profile = await probed_profile(provider, binding, files, args.probe_budget)
        done = [
            (case, await run_case(provider, binding, case, profile, arms, args)) for case in cases
        ]
    print(
        f"\nefficacy: {engine.model}, {args.tries} tries an arm ({args.fresh_tries} fresh), "
        f"horizon {profile.instruction_horizon.tokens:,}; load average {before} before, "
        f"{load_average()} after"
    )
    for case, results in done:
        print(f"case {case.name}: {case.ask}")
        for arm in results.values():
            if arm.samples:
                print(f"  {arm.row()}")
        for suffix, how in (("", "sent at once"), ("-typed", "typed in the window")):
            fresh, vak = results.get(f"fresh{suffix}"), results.get(f"vak{suffix}")
            if fresh and vak and fresh.samples and vak.samples:
                ratio = statistics.median(s.first_token_s for s in vak.samples) / max(
                    1e-9, statistics.median(s.first_token_s for s in fresh.samples)
                )
                cache = "each try on the cache the one before left" if args.warm_tries else "cold"
                prefill = statistics.median(s.prefill_s for s in vak.samples) / max(
                    1e-9, statistics.median(s.prefill_s for s in fresh.samples)
                )
                print(
                    f"  first token, imported session ÷ fresh one-turn chat ({how}, {cache}): "
                    f"{ratio:.2f}× (the server's prefill after Enter: {prefill:.2f}×)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
