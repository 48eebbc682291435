"""Probe speed: the shared-prefix ladder beside a naive one, on the loopback Ollama double;
with `--model PATH`, the probe on a real GGUF beside a direct measurement.

    python bench/probe.py [--horizon 13000] [--prefill-tps 8000] [--decode-tps 200]
    python bench/probe.py --model ~/.cache/vak-desktop/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        [--direct 2000,4000,8000,12000] [--tries 6] [--budget 90] [--n-ctx 32768] [--threads 2]
        [--memory]

Real model (issue #17): one llama.cpp server (the project's embedded engine, started as
`bench/efficacy.py` starts it) serves both. The probe runs with the prefix a real turn of this
model carries (`TurnRunner.probe_prefix`: system text, catalogue, loaded schemas); the direct
measurement is a fixed real-shaped request — the same prefix, the efficacy benchmark's
generated session cut to each size, the ask "Search my files for the shipment code …" — sent
`--tries` times a size and judged by the same check (a file tool called with the code in its
arguments, natively or written as text). Printed: the probe's requests, seconds and horizon
(with its confidence), and the direct table with the largest size followed by a majority.

The double runs in real time: it sleeps for model loads (a changed num_ctx reloads), for
prefilling every prompt token its prefix cache does not hold, and for decoding. Both ladders
find the horizon of the same double:

    shared   `run_probe`: every sample a prefix of one conversation, num_ctx only stepping up,
             a sequential verdict (two agreeing, else three of five), both ends of the bracket
             confirmed
    naive    the same rungs and bisection, but each request starts with new bytes (nothing is
             shared with the previous one), num_ctx fitted to each request, one sample a rung

Printed: requests sent, prompt tokens sent (the provider's counts), prompt tokens prefilled
(not served from the cache), wall time, the horizon found, and naive ÷ shared for each.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the double lives in tests/

from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.context.capacity.probe import (
    SAMPLE_MAX_TOKENS,
    HorizonSearch,
    Rung,
    probe_ceiling,
)
from vak_desktop.context.capacity.probe_history import PROBE_TOOLS, ProbeHistory
from vak_desktop.context.capacity.profile import choose_num_ctx
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime.capacity.probe import run_probe, sample_once

MODEL = "bench-model"
TRAINED = 131_072


@dataclass
class Result:
    name: str
    requests: int
    prompt_tokens: int
    prefilled: int
    wall_s: float
    horizon: int


def _prefilled(double: OllamaDouble, start: int) -> int:
    """Prompt tokens the double had to process (not cached), from what it was sent."""
    total, previous = 0, None
    for body in double.chat_bodies()[start:]:
        messages, tools = body["messages"], body.get("tools")
        tokens = double.prompt_tokens(messages, tools)
        same_window = previous is not None and previous[2] == body["options"]["num_ctx"]
        shared = 0
        if same_window and previous is not None:
            for mine, theirs in zip(messages, previous[0], strict=False):
                if mine != theirs:
                    break
                shared += 1
        total += tokens - (double.prompt_tokens(messages[:shared], tools) if shared else 0)
        previous = (messages, tools, body["options"]["num_ctx"])
    return total


async def shared_ladder(provider: OllamaProvider, double: OllamaDouble) -> Result:
    start = len(double.chat_bodies())
    began = time.perf_counter()
    record = await run_probe(provider, MODEL, nonce="shared")
    wall = time.perf_counter() - began
    provenance = record.profile.provenance
    return Result(
        "shared prefix",
        provenance["requests"],
        provenance["prompt_tokens"],
        _prefilled(double, start),
        wall,
        record.profile.instruction_horizon.tokens,
    )


async def naive_ladder(provider: OllamaProvider, double: OllamaDouble) -> Result:
    start = len(double.chat_bodies())
    began = time.perf_counter()
    search = HorizonSearch(ProbeHistory("naive"), probe_ceiling(TRAINED), votes=1, confirm=False)
    requests = prompt_tokens = 0
    while (planned := search.next_rung()) is not None:
        phase, turns, target = planned
        history = ProbeHistory(f"naive-{requests}")  # new leading bytes: nothing shared
        num_ctx = choose_num_ctx(int(search.estimate(turns) * 1.1) + SAMPLE_MAX_TOKENS, TRAINED)
        request = ChatRequest(
            model=MODEL,
            messages=history.messages(turns),
            tools=PROBE_TOOLS,
            num_ctx=num_ctx,
            max_tokens=SAMPLE_MAX_TOKENS,
        )
        sample = await sample_once(provider, request, miss=True)
        requests += 1
        prompt_tokens += sample.prompt_tokens
        search.record(Rung(phase, turns, target, request.chars(), num_ctx, (sample,), votes=1))
    wall = time.perf_counter() - began
    passed = search.horizon_rung
    return Result(
        "naive",
        requests,
        prompt_tokens,
        _prefilled(double, start),
        wall,
        passed.tokens if passed else 0,
    )


async def run(args: argparse.Namespace) -> list[Result]:
    results = []
    for ladder in (shared_ladder, naive_ladder):
        with OllamaDouble(
            instruction_horizon=args.horizon,
            realtime=True,
            prefill_tps=args.prefill_tps,
            decode_tps=args.decode_tps,
            cold_load_ns=int(args.cold_load_s * 1e9),
            warm_load_ns=5_000_000,
        ) as double:
            double.add_model(MODEL, trained_window=TRAINED)
            async with httpx.AsyncClient() as client:
                results.append(await ladder(OllamaProvider(client, double.url), double))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--horizon", type=int, default=13_000)
    parser.add_argument("--prefill-tps", type=float, default=8_000.0)
    parser.add_argument("--decode-tps", type=float, default=200.0)
    parser.add_argument("--cold-load-s", type=float, default=0.5)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF: the real-model mode")
    parser.add_argument("--direct", default="2000,4000,8000,12000")
    parser.add_argument("--tries", type=int, default=6)
    parser.add_argument("--n-ctx", type=int, default=32_768)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--budget", type=float, default=90.0, help="the probe's time, seconds")
    parser.add_argument(
        "--memory",
        action="store_true",
        help="real-model mode: probe the answer-from-memory task too (as the app does)",
    )
    args = parser.parse_args()
    if args.model is not None:
        from bench.probe_real import real_model  # the engine is an optional extra

        raise SystemExit(asyncio.run(real_model(args)))
    shared, naive = asyncio.run(run(args))
    print(
        f"double: instruction horizon {args.horizon:,} tokens, trained window {TRAINED:,}, "
        f"prefill {args.prefill_tps:,.0f} tok/s, decode {args.decode_tps:,.0f} tok/s, "
        f"cold load {args.cold_load_s} s (real time)"
    )
    print(f"{'':<14}{'requests':>10}{'prompt tok':>12}{'prefilled':>11}{'wall s':>9}{'horizon':>9}")
    for r in (shared, naive):
        print(
            f"{r.name:<14}{r.requests:>10}{r.prompt_tokens:>12,}{r.prefilled:>11,}"
            f"{r.wall_s:>9.2f}{r.horizon:>9,}"
        )
    print(
        f"{'naive/shared':<14}{naive.requests / shared.requests:>10.2f}"
        f"{naive.prompt_tokens / shared.prompt_tokens:>12.2f}"
        f"{naive.prefilled / shared.prefilled:>11.2f}{naive.wall_s / shared.wall_s:>9.2f}"
    )


if __name__ == "__main__":
    main()
