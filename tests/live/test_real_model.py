"""A real model, end to end: the embedded llama.cpp engine serving Qwen2.5-Coder-0.5B-Instruct
through our own openai-compatible adapter — a real turn, a real tool call, the probe ladder,
and the profile all of that measured, printed.

The tests run in file order and share one engine and one ledger: the probe stores the profile,
the turns plan against it (and measure the prefix once), the last test prints what the next
turn would be planned with. Sampling is greedy (temperature 0, fixed seed) so a run is as
repeatable as the hardware allows; the timings are whatever this machine does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from vak_desktop.context.capacity.prefix import PREFIX_MEASURED
from vak_desktop.context.capacity.profile import profile_to_json
from vak_desktop.context.evidence.text_calls import TEXT_FORM_CALL
from vak_desktop.context.payloads import Activity, AssistantStep, Receipt
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import LEDGER_FILENAME, Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ModelDetails
from vak_desktop.runtime import ModelBinding, ToolOutput, ToolRegistry, TurnRunner
from vak_desktop.runtime.capacity.service import capacity_profile_for
from vak_desktop.runtime.events import StepFinished, TurnFinished
from vak_desktop.runtime.providers.embedded import (
    EmbeddedEngine,
    EngineConfig,
    chat_template,
    start_engine,
)
from vak_desktop.runtime.tools import ToolContext

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).resolve().parents[2]
N_CTX = 8_192
# The ladder's ceiling. 8k is the brief's cap; on 2 CPU cores a cold 4k-token sample alone
# takes 40-100 s, so a smaller cap (VAK_LIVE_PROBE_TOKENS) keeps a slow machine in minutes.
PROBE_CAP = int(os.environ.get("VAK_LIVE_PROBE_TOKENS", "8192"))
LIVE_MAX_STEPS = 4  # a tool call, its answer, and room for one retry
PROVIDER = "openai-compatible"
# llama.cpp's threads: unset lets it use every core (best on an idle machine); on a machine
# shared with other work 1 thread is steadier (measured: 2 threads under load fell to 0.6-3
# tokens/s generation, 1 thread held 6-7)
THREADS = int(os.environ["VAK_LIVE_THREADS"]) if os.environ.get("VAK_LIVE_THREADS") else None
MAX_OUTPUT_TOKENS = 256  # greedy decoding of a 0.5B model can repeat itself until the window fills


def say(*lines: str) -> None:
    """Print for the person running `make test-live` (pytest runs with -s there)."""
    for line in lines:
        print(line, flush=True)


@dataclass
class Live:
    """What the tests of this module share: the ledger's folder and the sessions they made."""

    data_dir: Path
    sessions: list[str]

    def ledger(self) -> Ledger:
        return Ledger.open(self.data_dir / LEDGER_FILENAME)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Live:
    return Live(tmp_path_factory.mktemp("live-data"), [])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine(model_path: Path) -> AsyncIterator[EmbeddedEngine]:
    started = time.perf_counter()
    config = EngineConfig(
        model_path,
        n_ctx=N_CTX,
        chat_template=chat_template("qwen2.5-tools"),
        threads=THREADS,
        temperature=0.0,
        seed=7,
        max_output_tokens=MAX_OUTPUT_TOKENS,
    )
    engine = await start_engine(config)
    say(
        "",
        f"engine: {model_path.name} served by llama.cpp (xllamacpp) at {engine.base_url}, "
        f"n_ctx {N_CTX}, threads {THREADS or 'all'}, ready in {time.perf_counter() - started:.1f} s",
    )
    try:
        yield engine
    finally:
        await engine.stop()


def binding_for(engine: EmbeddedEngine) -> ModelBinding:
    """What `bind_model` gives for this server (it has no /api/show), with the window we set."""
    details = ModelDetails(engine.model, N_CTX, capabilities=("completion", "tools"))
    return ModelBinding(provider=PROVIDER, model=engine.model, details=details)


def receipt_line(receipt: Receipt) -> str:
    usage, timings = receipt.usage, receipt.timings
    prompt, cached = usage.prompt_tokens(), usage.cache_read_tokens
    prefill_s, decode_s = timings.prompt_eval_ns / 1e9, timings.eval_ns / 1e9
    prefill = (
        f"{(prompt - cached) / prefill_s:,.0f} tok/s" if prefill_s and prompt > cached else "-"
    )
    decode = f"{usage.output_tokens / decode_s:,.0f} tok/s" if decode_s else "-"
    return (
        f"    step {receipt.step}: prompt {prompt:,} tokens ({cached:,} from the cache), "
        f"prefill {prefill} over {prefill_s:.2f} s, {usage.output_tokens} tokens out at {decode}, "
        f"wall {timings.wall_ns / 1e9:.1f} s"
    )


async def bounded_turn(runner: TurnRunner, session: str, text: str, binding: ModelBinding) -> str:
    """Run a turn, stopping it after LIVE_MAX_STEPS model calls: a small model that keeps
    calling tools would otherwise spend the runner's whole step allowance at CPU speed."""
    steps, outcome = 0, ""
    async with contextlib.aclosing(runner.run(session, text, binding)) as events:
        async for event in events:
            if isinstance(event, StepFinished):
                steps += 1
                if steps >= LIVE_MAX_STEPS:
                    return f"stopped after {LIVE_MAX_STEPS} steps"
            elif isinstance(event, TurnFinished):
                outcome = event.outcome
    return outcome


def payloads(ledger: Ledger, session: str, kind: type[Any]) -> list[Any]:
    return [e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, kind)]


def activities(ledger: Ledger, session: str, name: str) -> list[Activity]:
    return [a for a in payloads(ledger, session, Activity) if a.type == name]


async def test_the_server_renders_the_corrected_tool_template(engine: EmbeddedEngine) -> None:
    body = {
        "messages": [{"role": "system", "content": "S."}, {"role": "user", "content": "U."}],
        "tools": [{"type": "function", "function": {"name": "t", "parameters": {}}}],
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(engine.base_url + "/apply-template", json=body, timeout=60)
    prompt = response.json()["prompt"]
    example = (
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )
    assert example in prompt and "{{" not in prompt


async def test_the_probe_ladder_measures_the_model(engine: EmbeddedEngine, live: Live) -> None:
    say(
        "",
        f"probe: `vak probe` through the openai-compatible adapter, ladder capped at {PROBE_CAP:,} tokens",
    )
    command = [sys.executable, "-m", "vak_desktop.cli", "probe", engine.model, "--force"]
    command += ["--provider", PROVIDER, "--host", engine.base_url]
    command += ["--max-tokens", str(PROBE_CAP), "--data-dir", str(live.data_dir)]
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out, _ = await process.communicate()  # progress lines go to our stderr as they happen
    say(out.decode().rstrip(), f"  (the probe took {time.perf_counter() - started:.0f} s)")
    assert process.returncode == 0
    ledger = live.ledger()
    try:
        stored = ledger.profiles().latest(PROVIDER, engine.model)
    finally:
        ledger.close()
    assert stored is not None and stored.profile.provenance["source"] == "probe"
    assert stored.profile.prefill_tps.value > 0


async def test_a_real_turn_and_a_second_that_reuses_the_cached_prefix(
    engine: EmbeddedEngine, live: Live
) -> None:
    ledger = live.ledger()
    binding = binding_for(engine)
    say("", "turns: two real turns without tools, the prefix measured once")
    try:
        async with httpx.AsyncClient() as client:
            # No tools: offered `recall`, the 0.5B model answers a plain question by writing
            # recall calls with invented ids (seen in this tier); tools are the next test's job
            runner = TurnRunner(
                ledger, engine.provider(client), ToolRegistry(), measure_prefix=True
            )
            session = ledger.create_session().id
            live.sessions.append(session)
            for question in (
                "In one short sentence: what is the capital of France?",
                "And the capital of Italy, in one short sentence?",
            ):
                seen = len(payloads(ledger, session, Receipt))
                events = [e async for e in runner.run(session, question, binding)]
                finished = events[-1]
                assert isinstance(finished, TurnFinished), finished
                answer = payloads(ledger, session, AssistantStep)[-1].text
                say(f"  > {question}", f"  < {answer.strip()}  [{finished.outcome}]")
                for receipt in payloads(ledger, session, Receipt)[seen:]:
                    say(receipt_line(receipt))
                assert finished.outcome == "completed" and answer.strip()
        (measured,) = activities(ledger, session, PREFIX_MEASURED)
        prefix = measured.detail["prefix_tokens"]
        say(
            f"  prefix: {prefix:,} tokens measured for {measured.detail['prefix_chars']:,} chars "
            "(the system prompt), "
            f"{measured.detail['wall_ns'] / 1e9:.1f} s"
        )
        receipts = [r for r in payloads(ledger, session, Receipt) if r.step == 0]
        assert [r.plan["budget"]["prefix_tokens"] for r in receipts] == [prefix, prefix]
        # every turn's first request finds at least the prefix in the server's cache (§10)
        assert all(r.usage.cache_read_tokens >= 0.9 * prefix for r in receipts)
    finally:
        ledger.close()


class NotesTool:
    """The user's notes, by name."""

    spec = ToolSpec(
        "read_note",
        "Read one of the user's notes by its name and return its text.",
        {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "the note's name"}},
            "required": ["name"],
        },
    )

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        self.asked.append(arguments)
        if arguments.get("name") == "groceries":
            return ToolOutput("The note 'groceries' says: buy eggs, basmati rice and three lemons.")
        return ToolOutput(f"there is no note named {arguments.get('name')!r}", True)


async def test_a_real_tool_call_runs_whether_native_or_written_as_text(
    engine: EmbeddedEngine, live: Live
) -> None:
    ledger = live.ledger()
    notes = NotesTool()
    say("", "tool call: read_note")
    try:
        async with httpx.AsyncClient() as client:
            tools = ToolRegistry([notes])
            runner = TurnRunner(ledger, engine.provider(client), tools, measure_prefix=True)
            session = ledger.create_session().id
            live.sessions.append(session)
            question = (
                'Use the read_note tool to read my note named "groceries", '
                "then tell me what I need to buy."
            )
            outcome = await bounded_turn(runner, session, question, binding_for(engine))
        steps = payloads(ledger, session, AssistantStep)
        as_text = activities(ledger, session, TEXT_FORM_CALL)
        say(f"  > {question}")
        for step in steps:
            calls = ", ".join(f"{c.name}({json.dumps(c.arguments)})" for c in step.tool_calls)
            say(
                f"  < {step.text.strip() or '(no text)'}" + (f"  [calls: {calls}]" if calls else "")
            )
        say(
            f"  the call came {'written as text' if as_text else 'through the tool channel'}; "
            f"turn {outcome}"
        )
        for receipt in payloads(ledger, session, Receipt):
            say(receipt_line(receipt))
        assert {"name": "groceries"} in notes.asked
        assert outcome in ("completed", f"stopped after {LIVE_MAX_STEPS} steps")
    finally:
        ledger.close()


async def test_the_measured_profile_is_printed(engine: EmbeddedEngine, live: Live) -> None:
    ledger = live.ledger()
    try:
        assert live.sessions, "no session ran"
        chain = ledger.chain_to_root(live.sessions[0])
        profile = capacity_profile_for(
            binding_for(engine), chain, utc_now(), store=ledger.profiles()
        )
    finally:
        ledger.close()
    say("", "profile (probe + feedback from the turns above):")
    say(json.dumps(profile_to_json(profile), indent=2))
    assert profile.provenance.get("source") == "probe"
    assert profile.prefix_tokens.samples >= 1


async def test_the_engine_stops_cleanly(engine: EmbeddedEngine) -> None:
    assert await engine.stop() == 0
    assert not engine.running
