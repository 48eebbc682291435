"""The default probe's time on a 2-core runner, estimated without one: `python bench/probe_estimate.py`.

What the loopback Ollama double reports (not realtime: nothing sleeps) prices each sample's
prefill — the tokens its prefix cache lacks — at PREFILL tokens/s, and every sample's decode is
taken at the worst case, SAMPLE_MAX_TOKENS at DECODE tokens/s. Printed for the ladder's old
(4,096) and new (2,048) first rung, with and without the answer-from-memory task, at two tool
horizons (the 1.5B's 1,358 and a larger one): requests, prefill seconds, decode seconds, and
the horizons found. The double prices prefill linearly; a real runner's later tokens cost more
(decision 0080), so this is a floor above ~5k tokens. Real models: `bench/probe.py --model`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the double lives in tests/

import httpx

import vak_desktop.context.capacity.probe as probe_mod
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.probe import run_probe

PREFILL, DECODE, MAXTOK = 100.0, 12.0, probe_mod.SAMPLE_MAX_TOKENS
MODEL = "qwen2.5-coder:1.5b"


async def once(first: int, horizon: int, memory_h: int | None, memory: bool) -> str:
    probe_mod.FIRST_RUNG = first
    with tempfile.TemporaryDirectory() as d:
        ledger = Ledger.open(Path(d) / "l.db")
        with OllamaDouble(
            instruction_horizon=horizon,
            memory_horizon=memory_h,
            search_requests=True,
            prefill_tps=PREFILL,
            decode_tps=DECODE,
        ) as double:
            double.add_model(MODEL, trained_window=32_768)
            async with httpx.AsyncClient() as http:
                provider = OllamaProvider(http, double.url)
                binding = await bind_model(provider, MODEL)
                prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
                record = await run_probe(provider, MODEL, prefix=prefix, memory=memory, nonce="est")
        ledger.close()
    rungs = record.activity.detail["rungs"] + record.activity.detail.get("memory_rungs", [])
    samples = [s for r in rungs for s in r["sample_detail"]]
    prefill_s = sum(s["prompt_eval_ns"] for s in samples) / 1e9
    decode_s = len(samples) * MAXTOK / DECODE
    p = record.profile
    mem = p.memory_horizon.tokens if p.memory_horizon else None
    return (
        f"first rung {first:>5}, tool horizon {horizon:>5}, memory {'on ' if memory else 'off'}: "
        f"{len(samples):>2} requests, prefill {prefill_s:5.1f} s + decode ≤ {decode_s:5.1f} s = "
        f"≤ {prefill_s + decode_s:5.1f} s; found {p.instruction_horizon.tokens:,}"
        + (f", memory {mem:,}" if memory else "")
    )


async def main() -> None:
    for horizon, mem in ((1_358, 6_000), (3_400, 6_000)):
        for first in (4_096, 2_048):
            for memory in (False, True):
                print(await once(first, horizon, mem, memory), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
