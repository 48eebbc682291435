"""Long-conversation memory on a real model: Vak beside three naive arms on one LoCoMo chat.

    python bench/longmem.py /tmp/locomo/locomo10.json --conversation conv-30 \
        --model ~/.cache/vak-desktop/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
        [-n 16] [--seed 1] [--arms evidence,truncated,full,vak,vak-memory] \
        [--horizon 4096 | --probe [--idle-retries 3] | --profile FILE] [--save-profile FILE] \
        [--memory-horizon 4096] [--plan-only] \
        [--timeout 420] [--only QUESTIONS.json] [--out /tmp/longmem.jsonl] \
        [--keep /tmp/longmem-ledgers] [--now 2026-12-01T10:20Z]
    python bench/longmem.py FILE --base-url http://127.0.0.1:8080   # a server already running

The data is LoCoMo's public `data/locomo10.json` (github.com/snap-research/LoCoMo); it is never
shipped here. Conversation `conv-26` is kept for outside checks: develop on the other nine.

The conversation is imported as a chat through `vak import` (the ChatGPT format, so each
message keeps its session's time; `bench/longmem_data.py` says how it is shaped). N questions,
spread over categories 1–4, are each asked as "Answer from our conversation in a few words: …"
in four arms on the same server (one llama.cpp server, its prompt cache on; each arm's questions
run together so a shared history prefix stays cached):

    vak        a real turn (TurnRunner, tools and all) on a fresh copy of the imported ledger,
               so no question sees another; the answer is the turn's answer as `vak show` has it
    vak-memory the same, the profile also holding an answer-from-memory horizon
               (`--memory-horizon`): a turn that asks for no tool is planned against it
    full       the whole history as chat apps send it, then the question
    truncated  the newest messages that fit 4,096 tokens (Ollama's default), then the question
    evidence   only the evidence utterances, under their sessions' dates (the ceiling)

Printed per arm: token F1 overall and per category, the share of evidence utterances the request
carried, median prompt tokens and seconds per question, and how many questions ran out of
`--timeout` (undecided: left out of the F1, never scored 0). Also the profile's horizon (the
real probe's with `--probe`) and the load average before and after. Progress goes to stderr;
every question's raw result to `--out` as JSON lines.

`--now` pins the clock the request's tail reads ("Today's date: …"). An A/B of two engines
should pin it: the line changes every minute, and on the real 1.5B requests that differed only
by it got different greedy answers to 3 of 16 questions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from dataclasses import asdict, dataclass, fields
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, cast

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from longmem_data import (
    CATEGORIES,
    Conversation,
    chat_messages,
    chatgpt_export,
    evidence_messages,
    evidence_shown,
    f1,
    load,
    stratified,
)

from vak_desktop.cli import main as vak
from vak_desktop.context.capacity.probe import left_undecided
from vak_desktop.context.capacity.probe_result import resume_from
from vak_desktop.context.capacity.profile import profile_from_json, profile_to_json
from vak_desktop.context.payloads import CapacityProfile, Ewma, Horizon, Timings, Usage
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import LEDGER_FILENAME, Ledger
from vak_desktop.providers.base import ChatProvider, Done, ModelDetails, TextDelta
from vak_desktop.providers.deadlines import Deadlines
from vak_desktop.providers.errors import ProviderError
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.runtime import ModelBinding, ProbeRecord, TurnRunner, default_tools, run_probe
from vak_desktop.runtime.events import StepFinished
from vak_desktop.runtime.sessions.transcripts import session_turns
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.turn import projection

ASK = "Answer from our conversation in a few words: {question}"
DEFAULT_MODEL = Path.home() / ".cache/vak-desktop/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
NAIVE_SYSTEM = "You are a helpful assistant."
TRUNCATED_TOKENS = 4_096
RATIO = 0.3  # tokens per character for the naive cut, on the safe side (the server counts)
MAX_OUTPUT = 64  # "a few words"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load_average() -> str:
    with contextlib.suppress(OSError):
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    return "unknown"


@dataclass
class Result:
    arm: str
    question: str
    answer: str
    category: int
    prediction: str = ""
    f1: float = 0.0
    evidence: float = 0.0  # share of the evidence utterances the (first) request carried
    prompt_tokens: int = 0  # the first request's
    steps: int = 0
    seconds: float = 0.0
    undecided: str = ""  # why no answer was had (a timeout is not a wrong answer)


class Recording:
    """The provider, keeping the requests a turn sent (what did the request carry?). Each is
    sent greedy, as the naive arms' are: a turn sets no temperature, and at the server's default
    (llama.cpp's 0.8) the same request answered differently run to run, so two builds' F1 on 32
    questions differed by more than their requests did."""

    def __init__(self, inner: ChatProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.requests: list[ChatRequest] = []

    def stream(self, request: ChatRequest) -> Any:
        self.requests.append(request)
        return self.inner.stream(dataclasses.replace(request, temperature=0.0))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class PlansOnly:
    """`--plan-only`: no model. Each request is answered at once with nothing, so a run prints
    what every arm's request carried (the evidence share, the prompt's size) in seconds, on
    as many conversations as are asked for. It measures the plan, never the model: no F1."""

    name = "openai_compatible"
    host = "127.0.0.1"
    local = True

    async def stream(self, request: ChatRequest) -> AsyncGenerator[Any, None]:
        chars = sum(m.chars() for m in request.messages)
        yield TextDelta("")
        yield Done("stop", Usage(input_tokens=int(chars * RATIO)), Timings())


def sent_text(request: ChatRequest | None) -> str:
    return "\n".join(m.content for m in request.messages) if request else ""


def naive_messages(conversation: Conversation, arm: str, q: dict[str, Any]) -> list[Message]:
    if arm == "evidence":
        history = evidence_messages(conversation, q.get("evidence", []))
    else:
        history = chat_messages(conversation)
    messages = [Message(role=m["role"], content=m["content"]) for m in history]
    if arm == "truncated":
        room = TRUNCATED_TOKENS - (len(NAIVE_SYSTEM) + len(ASK) + 200) * RATIO - MAX_OUTPUT
        while messages and sum(m.chars() for m in messages) * RATIO > room:
            messages.pop(0)
    system = Message(role="system", content=NAIVE_SYSTEM)
    return [system, *messages, Message(role="user", content=ASK.format(question=q["question"]))]


async def naive(
    provider: ChatProvider, model: str, conversation: Conversation, arm: str, q: dict[str, Any]
) -> Result:
    result = Result(arm, q["question"], str(q["answer"]), int(q["category"]), steps=1)
    request = ChatRequest(
        model=model,
        messages=tuple(naive_messages(conversation, arm, q)),
        max_tokens=MAX_OUTPUT,
        temperature=0.0,
    )
    result.evidence = evidence_shown(conversation, q.get("evidence", []), sent_text(request))
    async with contextlib.aclosing(provider.stream(request)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                result.prediction += event.text
            elif isinstance(event, Done):
                result.prompt_tokens = event.usage.prompt_tokens()
    return result


async def prefill(
    provider: ChatProvider,
    model: str,
    conversation: Conversation,
    arm: str,
    q: dict[str, Any],
    args: argparse.Namespace,
) -> None:
    """Send the arm's history alone (one token out) so the server's prompt cache holds it:
    every question then pays only its own words. Timed and printed, never scored: a long
    history's first answer costs this much more."""
    history = naive_messages(conversation, arm, q)[:-1]
    request = ChatRequest(model=model, messages=tuple(history), max_tokens=1, temperature=0.0)
    start, tokens = time.monotonic(), 0
    try:
        async with asyncio.timeout(args.prefill_timeout):
            async with contextlib.aclosing(provider.stream(request)) as events:
                async for event in events:
                    if isinstance(event, Done):
                        tokens = event.usage.prompt_tokens()
        note = f"{tokens:,} tokens in {time.monotonic() - start:.0f} s"
    except (TimeoutError, ProviderError) as exc:
        note = f"not done in {time.monotonic() - start:.0f} s ({type(exc).__name__})"
    print(f"{arm}: history prefilled: {note}", flush=True)
    say(f"{arm}: history prefilled: {note}")


def copy_ledger(source: Path, target: Path) -> None:
    """A consistent copy of a ledger (WAL and all) and its head anchor: each question's own
    branch of the history."""
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)
    for sidecar in source.parent.glob(f"{source.name}.*"):
        if not sidecar.name.endswith(("-wal", "-shm")):
            shutil.copyfile(
                sidecar, target.parent / f"{target.name}{sidecar.name[len(source.name) :]}"
            )


async def vak_turn(
    provider: ChatProvider,
    binding: ModelBinding,
    imported: tuple[Path, str],
    conversation: Conversation,
    q: dict[str, Any],
    arm: str = "vak",
    profile: CapacityProfile | None = None,
    keep: Path | None = None,
) -> Result:
    result = Result(arm, q["question"], str(q["answer"]), int(q["category"]))
    source, session = imported
    with contextlib.ExitStack() as stack:
        if keep is None:
            scratch = stack.enter_context(tempfile.TemporaryDirectory())
        else:  # a data directory `vak --data-dir` reads: `vak request`, `vak show`
            os.makedirs(keep, exist_ok=True)
            scratch = str(keep)
        path = Path(scratch) / LEDGER_FILENAME
        copy_ledger(source, path)
        ledger = Ledger.open(path)
        if profile is not None:  # this arm's own measurement of the model
            ledger.append(session, profile)
        tools = default_tools(Settings(), ledger, data_directory=Path(scratch))
        recording = Recording(provider)
        runner = TurnRunner(ledger, recording, tools, keep_alive=None)
        try:
            ask = ASK.format(question=q["question"])
            turn = cast(AsyncGenerator[Any, None], runner.run(session, ask, binding))
            async with contextlib.aclosing(turn) as events:
                async for event in events:
                    if isinstance(event, StepFinished):
                        result.steps += 1
                        if result.steps == 1:
                            result.prompt_tokens = event.receipt.usage.prompt_tokens()
            result.prediction = session_turns(ledger, session)[-1].answer
        finally:
            first = recording.requests[0] if recording.requests else None
            result.evidence = evidence_shown(conversation, q.get("evidence", []), sent_text(first))
            if isinstance(provider, PlansOnly) and first is not None:  # no server counted it
                result.prompt_tokens = int(sum(m.chars() for m in first.messages) * RATIO)
            await tools.aclose()
            ledger.close()
    return result


def import_chat(conversation: Conversation, data_dir: Path) -> tuple[Path, str]:
    """`vak import` of the conversation's ChatGPT export; (the ledger, the session)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    export = data_dir / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(conversation)), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = vak(["--data-dir", str(data_dir), "--json", "import", str(export)])
    report = json.loads(out.getvalue().strip().splitlines()[-1])
    if code != 0 or not report.get("sessions"):
        raise SystemExit(f"vak import failed ({code}): {out.getvalue()[:300]}")
    say(f"imported: {report['turns']} turns; skipped: {report.get('skipped') or 'nothing'}")
    return data_dir / LEDGER_FILENAME, str(report["sessions"][0])


def stated_profile(binding: ModelBinding, horizon: int, window: int) -> CapacityProfile:
    return CapacityProfile(
        provider=binding.provider,
        model=binding.model,
        declared_window=window,
        instruction_horizon=Horizon(horizon, 0.9, "2026-12-01T00:00:00Z"),
        output_reserve=MAX_OUTPUT * 4,
        tokens_per_char=Ewma(0.28, 5),
        provenance={"source": "bench", "probed_at": "2026-12-01T00:00:00Z"},
    )


async def profile_for(
    provider: ChatProvider,
    binding: ModelBinding,
    args: argparse.Namespace,
    imported: tuple[Path, str],
) -> CapacityProfile:
    """The horizon the Vak arm plans with: stated (`--horizon`) or the real probe's, in the
    imported session (every question's copy carries it)."""
    if args.profile is not None:  # a measurement kept from an earlier run (`vak profile --json`)
        try:
            document = json.loads(args.profile.read_text(encoding="utf-8"))
            stated = stated_profile(binding, args.horizon, args.n_ctx)
            profile = profile_from_json(document, stated)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--profile {args.profile}: {exc}") from None
        profile = dataclasses.replace(profile, provider=binding.provider, model=binding.model)
        note = f"from {args.profile}"
    elif not args.probe:
        profile = stated_profile(binding, args.horizon, args.n_ctx)
        note = "stated"
    else:
        say(f"probing (budget {args.probe_budget:.0f} s) …")
        start = time.monotonic()
        with tempfile.TemporaryDirectory() as scratch:
            ledger = Ledger.open(Path(scratch) / "ledger.sqlite")
            tools = default_tools(Settings(), ledger)
            prefix = TurnRunner(ledger, provider, tools).probe_prefix(binding)
            await tools.aclose()
            ledger.close()

        async def probe(after: ProbeRecord | None) -> ProbeRecord:
            """The probe, or (`after`) an idle retry: the scheduler's resume of that probe."""
            record = await run_probe(
                provider, binding.model, details=binding.details, prefix=prefix, nonce="longmem",
                deadline_s=args.probe_budget, memory=True,
                keep=after.profile if after else None,
                resume=resume_from(after.activity) if after else None,
            )  # fmt: skip
            say(record.activity.message)
            return record

        record, retries = await probe(None), 0
        while retries < args.idle_retries and left_undecided(record.profile):
            record, retries = await probe(record), retries + 1
        profile = record.profile
        detail = record.activity.detail
        note = (
            f"probed in {time.monotonic() - start:.0f} s ({retries} idle retries), "
            f"{detail.get('requests', '?')} requests, outcome {detail.get('outcome', '?')}"
        )
    if args.save_profile is not None:  # for later runs' --profile
        args.save_profile.write_text(json.dumps(profile_to_json(profile), indent=1), "utf-8")
    h, m = profile.instruction_horizon, profile.memory_horizon
    recalled = f"; memory horizon {m.tokens:,} at {m.confidence:.2f}" if m else ""
    print(f"horizon: {h.tokens:,} tokens at confidence {h.confidence:.2f}{recalled} ({note})")
    ledger = Ledger.open(imported[0])  # the vak arm: every turn on the tool horizon
    ledger.append(imported[1], dataclasses.replace(profile, memory_horizon=None))
    ledger.close()
    return profile


def with_memory_horizon(profile: CapacityProfile, tokens: int) -> CapacityProfile:
    """The `vak-memory` arm's profile: the Vak arm's, plus an answer-from-memory horizon of
    `tokens` (stated, in place of the probe's `memory_horizon`): a turn that asks for no tool is
    planned against the larger of the two. Which scores better is what the arm shows."""
    at = profile.instruction_horizon.last_confirmed
    return dataclasses.replace(profile, memory_horizon=Horizon(tokens, 0.9, at))


def table(results: list[Result], arms: list[str]) -> list[str]:
    cats = sorted({r.category for r in results})
    head = f"{'arm':<10} {'F1':>5} " + " ".join(f"{CATEGORIES[c][:11]:>11}" for c in cats)
    rows = [head + "  evidence  prompt tok  s/question  undecided"]
    for arm in arms:
        mine = [r for r in results if r.arm == arm]
        done = [r for r in mine if not r.undecided]
        if not mine:
            continue
        mean = statistics.fmean([r.f1 for r in done]) if done else float("nan")
        per = []
        for c in cats:
            scored = [r.f1 for r in done if r.category == c]
            per.append(f"{statistics.fmean(scored):>11.2f}" if scored else f"{'–':>11}")
        ev = statistics.fmean(r.evidence for r in mine)
        tok = statistics.median(r.prompt_tokens for r in done) if done else 0
        sec = statistics.median(r.seconds for r in done) if done else 0
        rows.append(
            f"{arm:<10} {mean:>5.2f} {' '.join(per)}  {ev:>7.0%}  {tok:>10,.0f}  {sec:>10.1f}  "
            f"{len(mine) - len(done):>5}/{len(mine)}"
        )
    return rows


async def run_arms(
    provider: ChatProvider,
    binding: ModelBinding,
    conversation: Conversation,
    args: argparse.Namespace,
) -> list[Result]:
    questions = stratified(conversation.qa, args.n, args.seed)
    if args.only is not None:  # an A/B's questions: those of the N whose request changed
        wanted = set(json.loads(args.only.read_text(encoding="utf-8")))
        questions = [q for q in questions if q["question"] in wanted]
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as data_dir:
        imported = import_chat(conversation, Path(data_dir))
        memory = None
        if "vak" in arms or "vak-memory" in arms:
            profile = await profile_for(provider, binding, args, imported)
            memory = (
                profile
                if profile.memory_horizon is not None and args.memory_horizon is None
                else with_memory_horizon(profile, args.memory_horizon or 4_096)
            )
        out = args.out.open("a", encoding="utf-8") if args.out else None
        for arm in arms:
            if arm in ("full", "truncated") and questions:
                await prefill(provider, binding.model, conversation, arm, questions[0], args)
            for i, q in enumerate(questions, 1):
                start = time.monotonic()
                keep = args.keep / f"{conversation.sample_id}-{arm}-{i}" if args.keep else None
                work = (
                    vak_turn(provider, binding, imported, conversation, q, keep=keep)
                    if arm == "vak"
                    else vak_turn(provider, binding, imported, conversation, q, arm, memory, keep)
                    if arm == "vak-memory"
                    else naive(provider, binding.model, conversation, arm, q)
                )
                try:
                    result = await asyncio.wait_for(work, args.timeout)
                except TimeoutError:
                    result = Result(arm, q["question"], str(q["answer"]), int(q["category"]))
                    result.undecided = f"no answer within {args.timeout:.0f} s"
                except ProviderError as exc:
                    result = Result(arm, q["question"], str(q["answer"]), int(q["category"]))
                    result.undecided = f"the server refused: {exc}"[:200]
                result.seconds = time.monotonic() - start
                result.f1 = f1(result.prediction, result.answer, result.category)
                results.append(result)
                say(
                    f"{arm} {i}/{len(questions)} ({result.seconds:.0f} s, {result.prompt_tokens:,} tok, "
                    f"F1 {result.f1:.2f}{', ' + result.undecided if result.undecided else ''}): "
                    f"{result.question} → {result.prediction[:100]!r} (truth {result.answer!r})"
                )
                if out:
                    out.write(
                        json.dumps(asdict(result) | {"conversation": conversation.sample_id}) + "\n"
                    )
                    out.flush()
        if out:
            out.close()
    return results


def pin_clock(now: datetime) -> None:
    """Every request's tail reads `now` (`projection.tail_context_now`), not the clock."""
    if now.tzinfo is None:
        raise SystemExit(f"--now {now.isoformat()}: give its zone (…Z or …+01:00)")

    class Pinned(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> Pinned:
            return cast(Pinned, now.astimezone(tz))

    projection.datetime = Pinned  # type: ignore[misc]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("data", type=Path, help="LoCoMo-format JSON (data/locomo10.json)")
    parser.add_argument(
        "--conversation", default="", help="its sample_id (default: the first not conv-26)"
    )
    parser.add_argument(
        "-n", type=int, default=16, help="questions, stratified over categories 1–4"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--arms", default="evidence,truncated,full,vak")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--base-url", default="", help="use this OpenAI-compatible server")
    parser.add_argument("--model-name", default="", help="the model's name there")
    parser.add_argument("--horizon", type=int, default=4_096, help="a stated horizon")
    parser.add_argument(
        "--memory-horizon",
        type=int,
        default=None,
        help="the vak-memory arm's answer-from-memory horizon, on which a turn that asks for "
        "no tool is planned (default: the probe's with --probe, else 4,096)",
    )
    parser.add_argument("--probe", action="store_true", help="the real probe's horizon")
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="plan with this CapacityProfile JSON (`vak profile --json`: a probe kept from an "
        "earlier run), in place of --horizon and --probe",
    )
    parser.add_argument(
        "--save-profile", type=Path, default=None, help="write the profile used here, for --profile"
    )
    parser.add_argument("--probe-budget", type=float, default=300.0)
    parser.add_argument(
        "--idle-retries",
        type=int,
        default=0,
        help="with --probe: continue a probe that left rungs undecided up to this many times, "
        "as the app's idle retries do (each gives the answer-from-memory task its 90 s again)",
    )
    parser.add_argument("--n-ctx", type=int, default=32_768)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=420.0, help="seconds a question may take")
    parser.add_argument("--prefill-timeout", type=float, default=1_500.0, help="seconds")
    parser.add_argument("--report", action="store_true", help="DATA is raw results: the table")
    parser.add_argument(
        "--plan-only",
        action="store_true",
        help="no model: what each arm's request carried (evidence share, prompt size); "
        "--conversation may then be a comma list or 'dev' (all but conv-26)",
    )
    parser.add_argument(
        "--only", type=Path, default=None, help="a JSON list of questions: ask only these of the N"
    )
    parser.add_argument("--out", type=Path, default=None, help="raw results, JSON lines")
    parser.add_argument(
        "--now", type=datetime.fromisoformat, default=None,
        help="pin the clock the request's tail reads (ISO 8601 with a zone): an A/B's requests "
        "then differ only by the engines",
    )  # fmt: skip
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep each Vak question's data directory here (CONV-ARM-I), for `vak --data-dir`",
    )
    return parser.parse_args(argv)


def pick(conversations: list[Conversation], wanted: str) -> Conversation:
    for c in conversations:
        if c.sample_id == wanted or (not wanted and c.sample_id != "conv-26"):
            return c
    raise SystemExit(f"no conversation {wanted!r}: {', '.join(c.sample_id for c in conversations)}")


def report(path: Path) -> int:
    """The table of raw results (`--out` files, one or several runs appended)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    names = {f.name for f in fields(Result)}
    results = [Result(**{k: v for k, v in r.items() if k in names}) for r in rows]
    arms = list(dict.fromkeys(r.arm for r in results))
    print(f"longmem (from {path}): {', '.join(sorted({r['conversation'] for r in rows}))}")
    for row in table(results, arms):
        print(row)
    return 0


async def plan_only(args: argparse.Namespace) -> int:
    """`--plan-only`: every arm's requests on each asked conversation, without a model."""
    try:
        found = load(args.data)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    wanted = args.conversation.split(",") if args.conversation not in ("", "dev") else []
    chosen = (
        [pick(found, w.strip()) for w in wanted]
        if wanted
        else [c for c in found if c.sample_id != "conv-26"]
    )
    if not args.conversation:
        chosen = chosen[:1]
    provider = PlansOnly()
    binding = ModelBinding(
        provider=provider.name,
        model="plan-only",
        details=ModelDetails(name="plan-only", declared_window=args.n_ctx),
    )
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    pooled: list[Result] = []
    planned = f"profile {args.profile}" if args.profile else f"horizon {args.horizon:,}"
    for conversation in chosen:
        results = await run_arms(cast(ChatProvider, provider), binding, conversation, args)
        pooled += results
        print(f"\n{conversation.sample_id} (plan only, {planned}):")
        for row in table(results, arms):
            print(row)
    if len(chosen) > 1:
        print(f"\nall {len(chosen)} conversations (plan only, {planned}):")
        for row in table(pooled, arms):
            print(row)
    return 0


async def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.report:
        return report(args.data)
    if args.plan_only:
        return await plan_only(args)
    try:
        conversation = pick(load(args.data), args.conversation)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    before = load_average()
    if args.now is not None:
        pin_clock(args.now)
    deadlines = Deadlines(first_byte=args.timeout + 5)  # a long prefill is slow, not silent
    async with contextlib.AsyncExitStack() as stack:
        client = await stack.enter_async_context(httpx.AsyncClient(timeout=args.timeout + 30))
        if args.base_url:
            provider = OpenAICompatibleProvider(client, args.base_url, deadlines=deadlines)
            model = args.model_name or args.model.stem
        else:
            from vak_desktop.runtime.providers.embedded import (
                EngineConfig,
                chat_template,
                start_engine,
            )

            config = EngineConfig(
                args.model, n_ctx=args.n_ctx, chat_template=chat_template("qwen2.5-tools"),
                threads=args.threads, max_output_tokens=256,
            )  # fmt: skip
            say(f"starting the engine on {args.model.name} (n_ctx {args.n_ctx:,}) …")
            engine = await stack.enter_async_context(await start_engine(config))
            provider = OpenAICompatibleProvider(client, engine.base_url, deadlines=deadlines)
            model = engine.model
        details = ModelDetails(name=model, declared_window=args.n_ctx)
        binding = ModelBinding(provider=provider.name, model=model, details=details)
        results = await run_arms(provider, binding, conversation, args)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    print(
        f"\nlongmem: {model}, {conversation.sample_id} ({len(conversation.utterances)} utterances, "
        f"~{conversation.chars() // 4:,} tokens), {args.n} questions, seed {args.seed}; "
        f"load average {before} before, {load_average()} after"
    )
    for row in table(results, arms):
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
