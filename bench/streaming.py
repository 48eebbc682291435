"""Streaming and importing at scale, each beside its baseline from the same run.

    python bench/streaming.py [--megabytes 10] [--chunks 10000] [--turns 10000] [--turns-e2e 3]

- A 10 MB answer as a whole turn from the wire: the loopback OpenAI-compatible double (in its own
  process, as a server is) streams it as server-sent events in 10,000 chunks, beside the same
  answer in one chunk; the real adapter, `TurnRunner` and the ledger take it, the answer is
  stored and the turn closed (goal: ≤ 2x; it was 155 s against 12 s, appending to one string
  and re-reading a growing buffer were quadratic).
- The same answer through `stream_step` alone, from memory, in 10,000 chunks beside one: what is
  left is the Python cost of one chunk passing through (an async generator step, an event), a
  floor no storage or parsing change moves; it is printed per chunk.
- The same 10,000-chunk stream with the stream journal writing to disk beside it with the
  journal's writes left out: the cost of keeping what the user saw through a kill.
- A 10,000-turn import (goal ≤ 10 s; it was 1,025 s for a third of it) beside a plain INSERT
  of as many rows.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path

import httpx
from double_process import DoubleProcess

from vak_desktop.context.payloads import Usage
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.providers.base import Done, StreamEvent, TextDelta, Timings
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TextChunk, TurnFinished
from vak_desktop.runtime.sessions.interchange import import_openai
from vak_desktop.runtime.turn.step import StepOutcome, stream_step


class ChunkedProvider:
    """Streams `text` in `chunks` pieces, as fast as the consumer takes them."""

    name = "bench"
    host = "memory"
    local = True

    def __init__(self, text: str, chunks: int) -> None:
        size = max(1, len(text) // chunks)
        self.pieces = [text[i : i + size] for i in range(0, len(text), size)]

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        for piece in self.pieces:
            yield TextDelta(piece)
        yield Done("stop", Usage(), Timings())


class Unjournalled(Ledger):
    """The ledger with the stream journal's writes left out: the baseline for its cost."""

    def checkpoint(
        self, session: str, stream: str, base_seq: int, text: str, thinking: str
    ) -> None:
        return None


async def stream_once(ledger: Ledger, text: str, chunks: int) -> float:
    session = ledger.create_session().id
    out = StepOutcome(ChatRequest("m", (Message("user", "go"),)))
    start = time.perf_counter()
    async for _ in stream_step(ChunkedProvider(text, chunks), ledger, session, out):  # type: ignore[arg-type]
        pass
    assert len(out.text) == len(text)
    return time.perf_counter() - start


# the loopback OpenAI-compatible double, answering `replies` chats with `text` in pieces of `chunk`
DOUBLE_SCRIPT = (
    "import sys, json, threading\n"
    "from tests.doubles.openai_server import OpenAIDouble, SSE, text_chunks, usage_chunk\n"
    "cfg = json.loads(sys.stdin.read())\n"
    "double = OpenAIDouble(models=('m',))\n"
    "reply = SSE([*text_chunks(cfg['text'], cfg['chunk'], 'm'), usage_chunk(1500, len(cfg['text']) // 4)])\n"
    "double.script(*[reply] * cfg['replies'])\n"
    "with double:\n"
    "    print('listening', double.url, flush=True)\n"
    "    threading.Event().wait()\n"
)


def serve_double(text: str, chunk_chars: int, replies: int) -> DoubleProcess:
    return DoubleProcess(DOUBLE_SCRIPT, {"text": text, "chunk": chunk_chars, "replies": replies})


async def turns_from_the_wire(root: Path, url: str, text: str, turns: int) -> list[float]:
    """Seconds per turn: directive in, the whole answer streamed, stored, the turn closed."""
    ledger = Ledger.open(root / f"wire-{time.monotonic_ns()}.db")
    times = []
    async with httpx.AsyncClient() as client:
        runner = TurnRunner(
            ledger, open_provider("openai-compatible", client, url), default_tools()
        )
        binding = ModelBinding(provider="openai-compatible", model="m", details=None)
        for _ in range(turns):
            session = ledger.create_session().id
            shown = 0
            start = time.perf_counter()
            async for event in runner.run(session, "Write it all out.", binding):
                if isinstance(event, TextChunk):
                    shown += len(event.text)
                elif isinstance(event, TurnFinished):
                    assert event.outcome == "completed", event
            times.append(time.perf_counter() - start)
            assert shown == len(text), (shown, len(text))
    ledger.close()
    return times


def wire_benchmark(root: Path, text: str, chunks: int, turns: int) -> None:
    size = -(-len(text) // chunks)
    doubles = [serve_double(text, len(text), turns), serve_double(text, size, turns)]
    try:
        one, many = (
            statistics.median(asyncio.run(turns_from_the_wire(root, d.url, text, turns)))
            for d in doubles
        )
    finally:
        for double in doubles:
            double.close()
    print(f"a {len(text) / 1e6:g} MB answer as a whole turn from the wire (median of {turns})")
    print(f"  in one chunk (baseline):        {one:7.3f} s")
    print(
        f"  in {chunks:,} chunks:              {many:7.3f} s   ratio {many / one:.2f}x (goal ≤ 2x)"
    )


def plain_inserts(path: Path, n: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE plain (seq INTEGER PRIMARY KEY, payload TEXT)")
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO plain (payload) VALUES (?)", ([f"row {i}"] for i in range(n)))
    conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--turns-e2e", type=int, default=3)
    args = parser.parse_args()
    text = ("the answer streams on " * 50_000 * args.megabytes)[: args.megabytes * 1_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wire_benchmark(root, text, args.chunks, args.turns_e2e)
        print()
        ledger = Ledger.open(root / "stream.db")
        one = asyncio.run(stream_once(ledger, text, 1))
        many = asyncio.run(stream_once(ledger, text, args.chunks))
        ledger.close()
        bare = Unjournalled.open(root / "bare.db")
        unjournalled = asyncio.run(stream_once(bare, text, args.chunks))
        bare.close()
        print(f"a {args.megabytes} MB answer through stream_step alone, from memory")
        print(f"  in one chunk (baseline):        {one:7.3f} s")
        print(
            f"  in {args.chunks:,} chunks, journalled:  {many:7.3f} s   ratio {many / one:.2f}x (goal ≤ 2x)"
        )
        print(
            f"  in {args.chunks:,} chunks, no journal: {unjournalled:7.3f} s   journal cost {many - unjournalled:+.3f} s"
        )
        print(f"  per chunk, over the one-chunk time: {(many - one) / args.chunks * 1e6:.2f} µs")

        messages = [{"role": "system", "content": "Be brief."}]
        for i in range(args.turns):
            messages.append({"role": "user", "content": f"question {i}: what about item {i}?"})
            messages.append({"role": "assistant", "content": f"Item {i} is fine, as before."})
        baseline = plain_inserts(root / "plain.db", args.turns * 4)
        store = Ledger.open(root / "import.db")
        start = time.perf_counter()
        report = import_openai(store, {"messages": messages})
        imported = time.perf_counter() - start
        assert report.turns == args.turns, report
        assert store.verify().ok
        store.close()
        print(f"\nimport of {args.turns:,} turns ({report.entries:,} entries)")
        print(
            f"  plain INSERT of {args.turns * 4:,} rows in one transaction (baseline): {baseline:6.2f} s"
        )
        print(f"  import: {imported:6.2f} s (goal ≤ 10 s)   ratio {imported / baseline:.1f}x")


if __name__ == "__main__":
    main()
