"""`vak chat`: one streamed turn, or a REPL, on the same runtime as the window."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator

from vak_desktop.cli.common import CliError, bind, emit, open_ledger, tools_for, with_provider
from vak_desktop.context.codec import to_json_value
from vak_desktop.ledger import LedgerError, SessionBusy
from vak_desktop.providers import ChatProvider
from vak_desktop.runtime import TurnRunner
from vak_desktop.runtime.events import (
    CardShown,
    Notice,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    ToolResultReady,
    TurnEvent,
    TurnFinished,
)
from vak_desktop.runtime.turn.compaction import CompactionResult


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
    ledger = open_ledger(args)
    if args.session:
        try:
            ledger.session(args.session)
        except LedgerError as exc:
            raise CliError(str(exc)) from None

    async def work(provider: ChatProvider) -> int:
        binding = await bind(provider, args.model)
        repl = args.message is None
        runner = TurnRunner(
            ledger,
            provider,
            tools_for(args, ledger),
            keep_alive=args.keep_alive,
            compact_ahead=repl,
        )
        session = args.session or ledger.create_session().id
        messages = _repl_lines() if repl else [args.message]
        show = _json_event if args.json else _TextPrinter()
        status = 0
        try:
            for message in messages:
                if repl and message.strip() == COMPACT_COMMAND:
                    await runner.settle(session)
                    _show_compaction(await runner.compact(session, binding), args.json)
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
            await runner.tools.aclose()  # stops any MCP server a call started
        return status

    try:
        result: int = await with_provider(args, work)
        return result
    finally:
        ledger.close()


COMPACT_COMMAND = "/compact"  # in the REPL: write the packet the next turn will want, now


def _show_compaction(result: CompactionResult, as_json: bool) -> None:
    if as_json:
        packet = None
        if result.packet is not None:
            packet = [result.packet.first_turn_id, result.packet.last_turn_id]
        emit({"event": "compact", "message": result.message, "packet_range": packet})
    else:
        print(f"! {result.message}", file=sys.stderr)


def _repl_lines() -> Iterator[str]:
    while True:
        if sys.stdin.isatty():
            sys.stderr.write("you> ")
            sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            yield line.rstrip("\n")
