"""Planner speed: plan + assemble one request over sessions of 10 to 5,000 turns.

    python bench/planner.py [--sizes 10 100 1000 5000] [--repeats 15] [--profile]

Every turn of a session is what the runtime writes: a directive, a step calling a tool, the
result stored whole (EvidenceBody) and as carried (ToolResult), the answer, the TurnCard, the
closing Activity. Results rotate through search JSON (~14k chars), command output (~3k) and
markdown (~2k). Entries are held in memory (the engine is pure; reading the ledger is
`bench/ledger.py`'s business).

For each size the TurnIndex is built once, outside the timed part (its build is timed on its
own); then `plan_request` + `assemble` for the pending turn is timed under a small model (8k
horizon: cards and a packet) and a frontier model (200k: as many turns whole as fit). The
baseline, measured in the same run, serialises the whole history with `json.dumps` (every
message of every turn, the minimum any "send everything" path pays). Goals (issue): ≤ 20 ms per
request at 1,000 turns; the 5,000-turn time ≤ 6x the 1,000-turn time.
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
from vak_desktop.context.planning.turns import TURN_CLOSED, Turn, TurnIndex, build_turn_index
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

    def turn(self, n: int) -> None:
        topic = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(3))
        directive = Directive(text=f"What is new on {topic}? (turn {n + 1})", model="m")
        head = self.add(directive)
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

    def pending(self) -> None:
        self.add(Directive(text="And how does the copper price compare with last week?"))


def profile(horizon: int, output_reserve: int) -> CapacityProfile:
    return CapacityProfile(
        provider="p",
        model="m",
        declared_window=horizon,
        instruction_horizon=Horizon(horizon, 0.9),
        output_reserve=output_reserve,
        tokens_per_char=Ewma(RATIO, 5),
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


def session_of(size: int) -> tuple[TurnIndex, list[Stored]]:
    """A session of `size` closed turns and a pending one: its index and its chain."""
    session = SessionBuilder()
    for n in range(size):
        session.turn(n)
    session.pending()
    return build_turn_index(session.entries), session.entries


def actions_for(index: TurnIndex, chain: list[Stored]) -> dict[str, Callable[[], object]]:
    """What is timed for one session: the index build, the baseline, one request per profile."""
    messages = everything(index)
    actions: dict[str, Callable[[], object]] = {
        "index": lambda: build_turn_index(chain),
        "baseline": lambda: json.dumps(messages),
    }
    for name, capacity in PROFILES.items():
        request(index, capacity)  # warm-up
        actions[name] = lambda c=capacity: request(index, c)
    return actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1_000, 5_000])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--profile", action="store_true", help="cProfile the 1,000-turn case")
    args = parser.parse_args()
    names = list(PROFILES)
    sessions = {size: session_of(size) for size in args.sizes}
    actions = {
        (size, what): action
        for size, (index, chain) in sessions.items()
        for what, action in actions_for(index, chain).items()
    }
    ms = medians_ms(actions, args.repeats)  # every size in every round: like-for-like ratios
    print(
        f"{'turns':>6} {'index ms':>9} {'baseline ms':>12} "
        + " ".join(f"{name + ' ms':>17} {'x base':>7}" for name in names)
        + "   full/card/packet: "
        + ", ".join(names)
    )
    for size, (index, _) in sessions.items():
        base = ms[size, "baseline"]
        print(
            f"{size:>6} {ms[size, 'index']:>9.2f} {base:>12.2f} "
            + " ".join(f"{ms[size, n]:>17.2f} {ms[size, n] / base:>7.2f}" for n in names)
            + "   "
            + ", ".join(shape(index, c) for c in PROFILES.values())
        )
    for name in names:
        if 1_000 in sessions:
            print(f"{name}: {ms[1_000, name]:.2f} ms per request at 1,000 turns (goal ≤ 20 ms)")
        if 1_000 in sessions and 5_000 in sessions:
            ratio = ms[5_000, name] / ms[1_000, name]
            base = ms[5_000, "baseline"] / ms[1_000, "baseline"]
            print(f"  5,000/1,000 = {ratio:.2f}x (goal ≤ 6x; the baseline's: {base:.2f}x)")
    if args.profile and 1_000 in sessions:
        index, _ = sessions[1_000]
        for name, capacity in PROFILES.items():
            profiler = cProfile.Profile()
            profiler.runcall(lambda c=capacity: [request(index, c) for _ in range(5)])
            print(f"\ncProfile, 1,000 turns, {name}, 5 requests:")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
