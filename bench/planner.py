"""Planner speed: plan + assemble one request over sessions of 10 to 10,000 turns.

    python bench/planner.py [--sizes 10 100 1000 10000] [--repeats 21] [--profile]

Every turn of a session is what the runtime writes: a directive, a step calling a tool, the
result stored whole (EvidenceBody) and as carried (ToolResult), the answer, the TurnCard, the
closing Activity. Results rotate through search JSON (~14k chars), command output (~3k) and
markdown (~2k). Entries are held in memory (the engine is pure; reading the ledger is
`bench/ledger.py`'s business).

Two ways to reach a request, under a small model (8k horizon: cards and a packet) and a frontier
model (200k: as many turns whole as fit):
- incremental, as a running session does it: the pending turn closes and the next directive
  arrives (the entries are written outside the timing), the previous request's TurnIndex is
  advanced over them (`advance_turn_index`, which carries the card index on), then `plan_request`
  + `assemble` for the new turn. Every timed round is the next turn of the same session, under a
  tokens/char moved a little as each receipt's feedback moves it, so nothing priced is reused.
- rebuild: the TurnIndex built from the whole chain, then plan + assemble (what every request
  paid before the index was kept across requests).
The baseline, measured in the same run, serialises the whole history with `json.dumps` (every
message of every turn, the minimum any "send everything" path pays). Goals (issue #17): the
incremental request ≤ 5 ms at 1,000 turns and ≤ 50 ms at 10,000 turns.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import blake3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Directive,
    EvidenceBody,
    Ewma,
    Horizon,
    Payload,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.planning.assemble import (
    TailContext,
    assemble,
    current_turn_messages,
    plan_request,
)
from vak_desktop.context.planning.planner import Fidelity
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import (
    TURN_CLOSED,
    Turn,
    TurnIndex,
    advance_turn_index,
    build_turn_index,
)
from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.lexicons import lexicons

SYSTEM = "You are a helpful assistant running in Vak Desktop on the user's own machine. " * 4
TOOLS = (
    ToolSpec("recall", "Bring back anything from earlier in this conversation."),
    ToolSpec("search", "Search the web.", {"type": "object", "properties": {"q": {}}}),
    ToolSpec("run", "Run a command."),
)
TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
RATIO = 0.25
WORDS = ("copper", "price", "noida", "weather", "rust", "parser", "sqlite", "wal", "python")
_PROSE = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "


@dataclass(frozen=True)
class Stored:
    """An entry as the engine reads it: an id and a payload."""

    id: str
    payload: Payload


def prose(chars: int) -> str:
    return (_PROSE * (chars // len(_PROSE) + 1))[:chars]


def result(n: int) -> tuple[str, str]:
    """(tool, content) of turn `n`'s tool call."""
    kind = n % 3
    if kind == 0:
        hits = [
            {
                "title": f"Result {i} on {n}",
                "url": f"https://example.org/{n}/{i}",
                "body": prose(1300),
            }
            for i in range(10)
        ]
        return "search", json.dumps({"query": f"query {n}", "results": hits})
    if kind == 1:
        lines = "\n".join(f"{n}:{i} {prose(50)}" for i in range(50))
        return "run", f"exit code: 0\n{lines}"
    body = "\n".join(f"- {prose(60)}" for _ in range(25))
    return "search", f"# Notes {n}\n\nFirst paragraph of note {n}.\n\n## Details\n{body}"


class SessionBuilder:
    def __init__(self) -> None:
        self.entries: list[Stored] = []
        self.turns = 0

    def add(self, payload: Payload) -> Stored:
        digest = blake3.blake3(f"{len(self.entries)}".encode()).hexdigest()
        entry = Stored(f"b3:{digest}", payload)
        self.entries.append(entry)
        return entry

    def turn(self, n: int, directive: Directive | None = None) -> None:
        """Turn `n` whole; `directive` when it was written already (the pending one)."""
        topic = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(3))
        if directive is None:
            directive = Directive(text=f"What is new on {topic}? (turn {n + 1})", model="m")
            head = self.add(directive)
        else:
            head = next(e for e in reversed(self.entries) if e.payload is directive)
        tool, content = result(n)
        call = ToolCall(f"call_{n}", tool, {"q": topic})
        entries = [self.add(AssistantStep(tool_calls=(call,), model="m"))]
        body = self.add(EvidenceBody(call.id, tool, content, len(content)))
        carried = carry(content, body.id)
        entries.append(body)
        entries.append(
            self.add(ToolResult(call.id, tool, carried.text, body.id, len(content), False))
        )
        entries.append(self.add(AssistantStep(text=f"On {topic}: {prose(200)}.", model="m")))
        self.add(
            build_turn_card(
                Turn(head.id, self.turns, directive, tuple(entries)), "completed", RATIO
            )
        )
        self.add(Activity(type=TURN_CLOSED, detail={"outcome": "completed"}))
        self.turns += 1

    def pending(self) -> Directive:
        directive = Directive(text="And how does the copper price compare with last week?")
        self.add(directive)
        return directive


def profile(horizon: int, output_reserve: int, ratio: float = RATIO) -> CapacityProfile:
    return CapacityProfile(
        provider="p",
        model="m",
        declared_window=horizon,
        instruction_horizon=Horizon(horizon, 0.9),
        output_reserve=output_reserve,
        tokens_per_char=Ewma(ratio, 5),
    )


Key = tuple[int, str]  # (session size, what is timed)
PROFILES = {"small 8k": profile(8_192, 2_048), "frontier 200k": profile(200_000, 8_192)}


def request(index: TurnIndex, capacity: CapacityProfile) -> int:
    """Plan and assemble the pending turn's first request; returns its message count."""
    current = index.turns[-1]
    plan, tail = plan_request(
        index, capacity, current, system=SYSTEM, tools=TOOLS, tail_context=TAIL, lexicons=lexicons()
    )
    built = assemble(
        index,
        plan,
        current,
        system=SYSTEM,
        tools=TOOLS,
        tail=tail,
        ratio=tokens_per_char(capacity),
    )
    return len(built.messages)


def everything(index: TurnIndex) -> list[dict[str, object]]:
    """The whole history as plain message dicts (built outside the baseline's timing)."""
    return [dataclasses.asdict(m) for turn in index.turns for m in current_turn_messages(turn, "")]


def medians_ms(actions: dict[Key, Callable[[], object]], repeats: int) -> dict[Key, float]:
    """Median CPU time of each action (this process's, so other load on the machine counts
    less), the actions interleaved round by round so that a slow spell of a shared machine
    lands on all of them alike; garbage collection paused as `timeit` does (a 5,000-turn
    session is millions of objects: a collection landing in one run is not that run's cost)."""
    times: dict[Key, list[float]] = {name: [] for name in actions}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, action in actions.items():
                start = time.process_time()
                action()
                times[name].append(time.process_time() - start)
    finally:
        gc.enable()
    return {name: statistics.median(spent) * 1000 for name, spent in times.items()}


def shape(index: TurnIndex, capacity: CapacityProfile) -> str:
    """How many turns the plan carries whole / as cards / in the packet."""
    plan, _ = plan_request(
        index,
        capacity,
        index.turns[-1],
        system=SYSTEM,
        tools=TOOLS,
        tail_context=TAIL,
        lexicons=lexicons(),
    )
    counts = [sum(t.fidelity is f for t in plan.turns) for f in list(Fidelity)[:3]]
    return "/".join(map(str, counts))


def growing_session(size: int, rounds: int) -> list[list[Stored]]:
    """A session of `size` closed turns and a pending one, then the same session after each of
    `rounds` more turns: the pending turn closed (its steps, card and closing Activity written)
    and the next directive asked."""
    builder = SessionBuilder()
    for n in range(size):
        builder.turn(n)
    pending = builder.pending()
    chains = [list(builder.entries)]
    for n in range(size, size + rounds):
        builder.turn(n, pending)
        pending = builder.pending()
        chains.append(list(builder.entries))
    return chains


class RunningSession:
    """A session going on turn after turn: each `step` advances the previous request's index
    over the entries the next turn wrote and plans + assembles that turn's request."""

    def __init__(self, chains: list[list[Stored]], capacity: CapacityProfile) -> None:
        self.chains, self.capacity, self.round = chains, capacity, 0
        self.index = build_turn_index(chains[0])
        request(self.index, capacity)  # the session's first request builds its card index

    def step(self) -> int:
        self.round += 1
        # each receipt moves the learned tokens/char a little (feedback): nothing priced is reused
        ratio = RATIO * (1 + self.round * 1e-4)
        moved = dataclasses.replace(self.capacity, tokens_per_char=Ewma(ratio, 5 + self.round))
        self.index = advance_turn_index(self.index, self.chains[self.round])
        return request(self.index, moved)


def actions_for(size: int, rounds: int) -> tuple[dict[str, Callable[[], object]], TurnIndex]:
    """What is timed for one session size: the index build, the baseline, and per profile a
    rebuilt request and an incremental one."""
    chains = growing_session(size, rounds)
    chain = chains[0]
    index = build_turn_index(chain)
    messages = everything(index)
    actions: dict[str, Callable[[], object]] = {
        "index": lambda: build_turn_index(chain),
        "baseline": lambda: json.dumps(messages),
    }
    for name, capacity in PROFILES.items():
        actions[f"{name} rebuild"] = lambda c=capacity: request(build_turn_index(chain), c)
        actions[f"{name} incremental"] = RunningSession(chains, capacity).step
    return actions, index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1_000, 10_000])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--profile", action="store_true", help="cProfile the incremental path")
    args = parser.parse_args()
    names = list(PROFILES)
    actions: dict[Key, Callable[[], object]] = {}
    indexes: dict[int, TurnIndex] = {}
    for size in args.sizes:
        timed, indexes[size] = actions_for(size, args.repeats + (5 if args.profile else 0))
        actions.update(((size, what), action) for what, action in timed.items())
    ms = medians_ms(actions, args.repeats)  # every size in every round: like-for-like ratios
    print(
        f"{'turns':>6} {'index ms':>9} {'baseline ms':>12} "
        + " ".join(f"{name + ' rebuild/incr ms':>28} {'x base':>6}" for name in names)
        + "   full/card/packet: "
        + ", ".join(names)
    )
    for size, index in indexes.items():
        base = ms[size, "baseline"]
        cells = [
            f"{ms[size, n + ' rebuild']:>13.2f} / {ms[size, n + ' incremental']:>12.2f}"
            f" {ms[size, n + ' incremental'] / base:>6.2f}"
            for n in names
        ]
        print(
            f"{size:>6} {ms[size, 'index']:>9.2f} {base:>12.2f} "
            + " ".join(cells)
            + "   "
            + ", ".join(shape(index, c) for c in PROFILES.values())
        )
    for size, goal in ((1_000, 5), (10_000, 50)):
        if size not in indexes:
            continue
        for name in names:
            print(
                f"{name}: {ms[size, name + ' incremental']:.2f} ms per incremental request at "
                f"{size:,} turns (goal ≤ {goal} ms; rebuilt: {ms[size, name + ' rebuild']:.2f} ms,"
                f" json.dumps baseline: {ms[size, 'baseline']:.2f} ms)"
            )
    if args.profile:
        for size in [s for s in (1_000, 10_000) if s in indexes] or args.sizes[-1:]:
            for name in names:
                step = actions[size, f"{name} incremental"]
                profiler = cProfile.Profile()
                gc.disable()  # as in the timing
                profiler.runcall(lambda s=step: [s() for _ in range(5)])
                gc.enable()
                print(f"\ncProfile, {size:,} turns, {name}, 5 incremental requests:")
                pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
