"""`vak chat`: one streamed turn, or a REPL, on the same runtime as the window.

The REPL reads stdin in a worker thread (`asyncio.to_thread`), never on the event loop, so
what runs between turns runs while the user types, as in the window: the look-ahead packet
and the background capacity probe (`probing_capacity`; a turn stops it, keeping its rungs,
and the next finished turn continues it). `--no-probe` turns the probe off; a one-shot
`vak chat MODEL MESSAGE` has no idle time and never probes.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
from collections.abc import AsyncIterator, Callable

from vak_desktop.cli.common import (
    CliError,
    bind,
    checked_text,
    emit,
    open_ledger,
    tools_for,
    with_provider,
)
from vak_desktop.context.codec import to_json_value
from vak_desktop.ledger import LedgerError, SessionBusy
from vak_desktop.providers import ChatProvider
from vak_desktop.runtime import ModelBinding, TurnRunner
from vak_desktop.runtime.capacity.probe import ProbeProgress
from vak_desktop.runtime.capacity.scheduler import probing_capacity
from vak_desktop.runtime.events import (
    CardShown,
    CompactionEvent,
    CompactionProgress,
    Notice,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    ToolResultReady,
    TurnEvent,
    TurnFinished,
)


def _json_event(event: TurnEvent) -> None:
    """One line of `vak chat --json` per event, in the contract's shape."""
    if isinstance(event, TextChunk):
        emit({"event": "text", "text": event.text})
    elif isinstance(event, ThinkingChunk):
        emit({"event": "thinking", "text": event.text})
    elif isinstance(event, ToolCallRequested):
        emit(
            {"event": "tool_call", "id": event.id, "name": event.name, "arguments": event.arguments}
        )
    elif isinstance(event, ToolResultReady):
        emit(
            {
                "event": "tool_result",
                "id": event.id,
                "evidence": event.evidence,
                "chars": event.chars,
                "error": event.is_error,
            }
        )
    elif isinstance(event, CardShown):
        emit(
            {
                "event": "card",
                "presentation": event.presentation,
                "type": event.type,
                "title": event.title,
            }
        )
    elif isinstance(event, Notice):
        emit({"event": "notice", "message": event.message})
    elif isinstance(event, TurnFinished):
        if event.error:
            emit({"event": "error", "message": event.error})
        emit(
            {
                "event": "done",
                "session": event.session,
                "turn": event.turn_id,
                "outcome": event.outcome,
                "usage": to_json_value(event.usage),
            }
        )


class _TextPrinter:
    """Human output: the answer on stdout; thinking, tool calls and the summary on stderr."""

    def __init__(self) -> None:
        self.thinking = False
        self.dim = sys.stderr.isatty()

    def _end_thinking(self) -> None:
        if self.thinking:
            sys.stderr.write("\x1b[0m\n" if self.dim else "\n")
            self.thinking = False

    def __call__(self, event: TurnEvent) -> None:
        if isinstance(event, ThinkingChunk):
            if not self.thinking:
                sys.stderr.write("\x1b[2mthinking: " if self.dim else "thinking: ")
                self.thinking = True
            sys.stderr.write(event.text)
            sys.stderr.flush()
            return
        self._end_thinking()
        if isinstance(event, TextChunk):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, ToolCallRequested):
            arguments = json.dumps(event.arguments, ensure_ascii=False)
            print(f"\n▸ {event.name} {arguments}", file=sys.stderr)
        elif isinstance(event, ToolResultReady):
            status = "error" if event.is_error else f"{event.chars:,} chars"
            print(f"◂ {event.name}: {status} [evidence:{event.evidence[3:15]}]", file=sys.stderr)
        elif isinstance(event, CardShown):
            print(f"▣ {event.type} card: {event.title} [{event.presentation}]", file=sys.stderr)
        elif isinstance(event, Notice):
            print(f"\n! {event.message}", file=sys.stderr)
        elif isinstance(event, TurnFinished):
            sys.stdout.write("\n")
            sys.stdout.flush()
            usage = event.usage
            print(
                f"[{event.outcome} · session {event.session} · {usage.prompt_tokens():,} prompt / "
                f"{usage.output_tokens:,} output tokens]",
                file=sys.stderr,
            )
            if event.error:
                print(f"vak: {event.error}", file=sys.stderr)


async def cmd_chat(args: argparse.Namespace) -> int:
    if args.message is not None:
        checked_text(args.message, "the message")
    elif isinstance(sys.stdin, io.TextIOWrapper):  # bad bytes become surrogates `checked_text`
        sys.stdin.reconfigure(errors="surrogateescape")  # names, not a UnicodeDecodeError
    ledger = open_ledger(args)
    if args.session:
        try:
            ledger.session(args.session)
        except LedgerError as exc:
            raise CliError(str(exc)) from None

    async def work(provider: ChatProvider) -> int:
        binding = await bind(provider, args.model)
        repl = args.message is None
        capacity = None
        if repl and not getattr(args, "no_probe", False):
            capacity = probing_capacity(ledger, provider, on_progress=_probe_watcher(args.json))
        runner = TurnRunner(
            ledger,
            provider,
            tools_for(args, ledger),
            keep_alive=args.keep_alive,
            compact_ahead=repl,
            capacity=capacity,
        )
        session = args.session  # made with the first message: a bad first line leaves none
        messages = _repl_lines() if repl else _one(args.message)
        show = _json_event if args.json else _TextPrinter()
        status = 0
        try:
            async for message in messages:
                checked_text(message, "the line read from stdin" if repl else "the message")
                session = session or ledger.create_session().id
                if repl and message.strip() == COMPACT_COMMAND:
                    await runner.settle(session)
                    shown = _CompactionPrinter(args.json)
                    async for step in runner.compact_events(session, binding):
                        shown(step)
                    continue
                try:
                    async for event in runner.run(session, message, binding, think=args.think):
                        show(event)
                        if isinstance(event, TurnFinished) and event.outcome == "failed":
                            status = 1
                except SessionBusy as exc:
                    raise CliError(str(exc)) from None
        finally:
            await runner.aclose()
            await runner.capacity.aclose()  # stops a background probe (its rungs not stored)
            await runner.tools.aclose()  # stops any MCP server a call started
        return status

    try:
        result: int = await with_provider(args, work)
        return result
    finally:
        ledger.close()


COMPACT_COMMAND = "/compact"  # in the REPL: write the packet the next turn will want, now


class _CompactionPrinter:
    """`/compact` as it runs: with --json a `compact_progress` line per report, then the
    `compact` line; else on stderr one progress line, rewritten in place on a terminal (a new
    line per summariser call when stderr is a file or a pipe), then the outcome."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.tty = sys.stderr.isatty()
        self.call = 0  # the call whose line was printed last; 0 before any

    def __call__(self, event: CompactionEvent) -> None:
        if isinstance(event, CompactionProgress):
            self._progress(event)
        elif self.as_json:
            packet = None
            if event.packet is not None:
                packet = [event.packet.first_turn_id, event.packet.last_turn_id]
            emit({"event": "compact", "message": event.message, "packet_range": packet})
        else:
            if self.call and self.tty:
                sys.stderr.write("\n")
            print(f"! {event.message}", file=sys.stderr)

    def _progress(self, event: CompactionProgress) -> None:
        if self.as_json:
            emit(
                {
                    "event": "compact_progress",
                    "turns": event.span,
                    "call": event.call,
                    "calls": event.calls,
                    "chunk": event.chunk,
                    "written_chars": event.written_chars,
                    "elapsed_s": round(event.elapsed_s, 1),
                }
            )
        elif self.tty:
            sys.stderr.write(f"\r\x1b[K… {event.line()}")
            sys.stderr.flush()
        elif event.call != self.call:
            print(f"… {event.line()}", file=sys.stderr, flush=True)
        self.call = event.call


async def _one(message: str) -> AsyncIterator[str]:
    yield message


async def _repl_lines() -> AsyncIterator[str]:
    """The REPL's lines, each read in a worker thread: the event loop keeps running the
    look-ahead packet and the background probe while the user types."""
    while True:
        if sys.stdin.isatty():
            sys.stderr.write("you> ")
            sys.stderr.flush()
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        if line.strip():
            yield line.rstrip("\n")


def _probe_watcher(as_json: bool) -> Callable[[ModelBinding, ProbeProgress | None], None]:
    """Says on stderr (a `probe` line with --json) when a background probe starts and ends;
    its samples are not printed (they would interleave with what the user types)."""
    running: set[str] = set()

    def watch(binding: ModelBinding, progress: ProbeProgress | None) -> None:
        model = binding.model
        if progress is not None and model not in running:
            running.add(model)
            _say(as_json, model, "started", f"measuring {model} in the background…")
        elif progress is None and model in running:
            running.discard(model)
            _say(as_json, model, "ended", f"background probe of {model} ended")

    return watch


def _say(as_json: bool, model: str, state: str, words: str) -> None:
    if as_json:
        emit({"event": "probe", "model": model, "state": state})
    else:
        print(f"· {words}", file=sys.stderr, flush=True)
