"""`bench/probe.py --model PATH`: the capacity probe on a real GGUF beside a direct measurement.

Why a module of its own: it needs the optional embedded engine (xllamacpp) and the efficacy
benchmark's generated session; `bench/probe.py` without `--model` needs neither.

One server (the embedded engine, as `bench/efficacy.py` starts it: the Qwen tool template, its
prompt cache on) serves both halves, one after the other:

    probe    `run_probe` with the prefix a real turn of this model carries
             (`TurnRunner.probe_prefix` over the default tools of a workspace)
    direct   a fixed real-shaped request per size: that same prefix, the efficacy session
             (`bench/efficacy.py`'s `conversation`) cut from its oldest turns to the size, and
             "Search my files for the shipment code …"; `--tries` samples a size, each judged
             by the probe's own check (`sample_once` with a `ProbeTask`: a file tool called with
             the code in its arguments, natively or written as text)

The direct horizon is the largest size whose samples followed by a majority (every smaller
size too); the probe agrees within one bisection step when its horizon lies between the direct
horizon's lower neighbour and the first direct size that failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.efficacy import MAX_OUTPUT, naive_messages
from bench.efficacy_cases import CASES
from vak_desktop.context.capacity.probe_history import SEARCH_TOOLS, ProbePrefix, ProbeTask
from vak_desktop.context.evidence.digests import digest_result
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider, ModelDetails
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools, run_probe
from vak_desktop.runtime.capacity.probe import ProbeProgress, sample_once
from vak_desktop.runtime.evaluation.live import CODE, generated_session, shipment_files
from vak_desktop.runtime.providers.embedded import EngineConfig, chat_template, start_engine
from vak_desktop.runtime.settings import Settings

FRESH_ASK = CASES["shipment"].fresh_ask  # the probe's task: the shipment case's new-chat ask

RATIO = 0.3  # tokens per char for cutting the direct request (the server counts the real one)
TURNS = 40


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def direct_request(model: str, prefix: ProbePrefix, size: int) -> ChatRequest:
    """The real prefix, the newest whole turns of the efficacy session that fit `size`
    (estimated), and the ask: the same bytes for every sample of a size."""
    history = naive_messages(generated_session(TURNS), FRESH_ASK, None)[1:-1]  # no system, no ask
    # closed turns' results travel as their digests, as in every real request (spec §3)
    history = [
        dataclasses.replace(m, content=digest_result(m.content, f"b3:bench{i:04}"))
        if m.role == "tool"
        else m
        for i, m in enumerate(history)
    ]
    system = Message(role="system", content=prefix.system)
    ask = Message(role="user", content=FRESH_ASK)

    def tokens(messages: list[Message]) -> float:
        chars = sum(m.chars() for m in (system, *messages, ask))
        return (chars + sum(t.chars() for t in prefix.tools)) * RATIO

    kept = list(history)
    while kept and tokens(kept) > size:
        kept = kept[1:]
        while kept and kept[0].role != "user":  # never open on a tool result or an answer
            kept = kept[1:]
    return ChatRequest(
        model=model, messages=(system, *kept, ask), tools=prefix.tools, max_tokens=MAX_OUTPUT
    )


async def direct(
    provider: ChatProvider, model: str, prefix: ProbePrefix, sizes: list[int], tries: int
) -> list[tuple[int, int, int, float]]:
    """(size, median prompt tokens, samples followed, median seconds) per size."""
    task = ProbeTask(FRESH_ASK, SEARCH_TOOLS, CODE)
    rows = []
    for size in sizes:
        request = direct_request(model, prefix, size)
        samples = []
        for n in range(tries):
            samples.append(await sample_once(provider, request, n == 0, task, timeout_s=600))
            verdict = "followed" if samples[-1].followed else "not followed"
            say(f"direct {size:>6,}: sample {n + 1}: {verdict}: {samples[-1].reply[:100]!r}")
        prompt = statistics.median(s.prompt_tokens for s in samples)
        seconds = statistics.median(s.wall_ns / 1e9 for s in samples)
        rows.append((size, int(prompt), sum(s.followed for s in samples), seconds))
    return rows


def direct_horizon(rows: list[tuple[int, int, int, float]], tries: int) -> tuple[int, int | None]:
    """(largest prompt followed by a majority with every smaller size too, first failing)."""
    passed = 0
    for _, prompt, followed, _ in rows:
        if followed * 2 <= tries:
            return passed, prompt
        passed = prompt
    return passed, None


def _progress(progress: ProbeProgress) -> None:
    sample = progress.sample_result
    verdict = "followed" if sample.followed else f"not followed {sample.error[:60]}"
    verdict += f": {sample.reply[:80]!r}"
    say(
        f"probe rung {progress.rung:>2} {progress.phase:<7} {progress.tokens:>6,} tokens "
        f"sample {progress.sample}: {verdict} {sample.wall_ns / 1e9:.1f} s"
    )


async def real_model(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in args.direct.split(",") if s.strip()]
    config = EngineConfig(
        args.model.expanduser(),
        n_ctx=args.n_ctx,
        chat_template=chat_template("qwen2.5-tools"),
        threads=args.threads,
        max_output_tokens=MAX_OUTPUT,
    )
    say(f"starting the engine on {config.model_path.name} (n_ctx {args.n_ctx:,}) …")
    with tempfile.TemporaryDirectory() as root:
        files = shipment_files(Path(root))
        ledger = Ledger.open(Path(root) / "ledger.sqlite")
        tools = default_tools(Settings(workspace=(str(files),)))
        try:
            async with (
                await start_engine(config) as engine,
                httpx.AsyncClient(timeout=900) as client,
            ):
                provider = engine.provider(client)
                details = ModelDetails(name=engine.model, declared_window=args.n_ctx)
                binding = ModelBinding(provider=provider.name, model=engine.model, details=details)
                prefix = TurnRunner(ledger, provider, tools).probe_prefix(binding)
                began = time.monotonic()
                record = await run_probe(
                    provider,
                    engine.model,
                    details=details,
                    prefix=prefix,
                    nonce="bench",
                    on_sample=_progress,
                    deadline_s=args.budget,
                    memory=getattr(args, "memory", False),
                )
                probe_s = time.monotonic() - began
                rows = await direct(provider, engine.model, prefix, sizes, args.tries)
        finally:
            await tools.aclose()
            ledger.close()
    profile = record.profile
    horizon = profile.instruction_horizon
    verdict = profile.provenance.get("verdict", {})
    print(f"\nprobe vs direct: {config.model_path.name}, n_ctx {args.n_ctx:,}")
    print(
        f"probe   {profile.provenance['requests']} requests, {probe_s:.0f} s "
        f"(budget {args.budget:.0f} s, {profile.provenance['outcome']}): horizon "
        f"{horizon.tokens:,} tokens, confidence {horizon.confidence:.2f} "
        f"(passed {verdict.get('passed')}, failed {verdict.get('failed')} at "
        f"{verdict.get('failed_tokens')})"
    )
    if profile.memory_horizon is not None or "memory" in profile.provenance:
        recalled = profile.memory_horizon
        tool_s = int(profile.provenance.get("tool_wall_ns", 0)) / 1e9
        print(
            f"        tool task {tool_s:.0f} s; answer-from-memory horizon "
            + (
                f"{recalled.tokens:,} tokens, confidence {recalled.confidence:.2f}"
                if recalled is not None
                else "undecided"
            )
        )
    stopped = profile.provenance.get("stopped")
    if stopped:
        undecided = stopped.get("undecided") or {}
        print(
            f"        stopped at {stopped['elapsed_s']:.1f} s: {stopped['reason']}"
            + (
                f" (next sample predicted {stopped['predicted_s']:.1f} s)"
                if "predicted_s" in stopped
                else ""
            )
            + (
                f"; undecided rung {undecided['tokens']:,} tokens {undecided['samples']}"
                if undecided
                else ""
            )
        )
    print(f"{'direct size':>12}{'prompt tok':>12}{'followed':>10}{'median s':>10}")
    for size, prompt, followed, seconds in rows:
        print(f"{size:>12,}{prompt:>12,}{followed:>7}/{args.tries}{seconds:>10.1f}")
    passed, failed = direct_horizon(rows, args.tries)
    print(f"direct horizon {passed:,} tokens (first failing size: {failed or 'none'})")
    rungs = record.activity.detail["rungs"]
    marks = [f"{r['tokens']:,}{'+' if r['followed'] else '-'}{len(r['samples'])}" for r in rungs]
    print("probe rungs (tokens, verdict, samples): " + ", ".join(marks))
    return 0
