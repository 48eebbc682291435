"""The `vak` command: the desktop app's runtime, from a terminal (contract: shared/design/cli.md).

Exit codes: 0 ok; 1 the work failed (a model error, a verification that failed); 2 could not
start (provider unreachable, bad arguments, unknown session or model), with one line on stderr.
With `--json`, stdout carries one JSON document (streaming commands: one object per line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import httpx

from vak_desktop.context.codec import to_json_value
from vak_desktop.ledger import LEDGER_FILENAME, Ledger, LedgerError, data_dir
from vak_desktop.providers import (
    ChatProvider,
    LoadedModels,
    ModelCatalog,
    ModelInspector,
    ModelNotFound,
    ProviderError,
    Unreachable,
    default_host,
    open_provider,
)
from vak_desktop.runtime import (
    ConversationFormatError,
    ModelBinding,
    TurnRunner,
    bind_model,
    default_tools,
    export_openai,
    import_openai,
    session_summaries,
    session_turns,
    turn_to_json,
)
from vak_desktop.runtime.events import (
    Notice,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    ToolResultReady,
    TurnEvent,
    TurnFinished,
)


class CliError(Exception):
    """Could not start: printed as one line on stderr, exit code 2."""


def _fail(message: str, code: int = 2) -> NoReturn:
    print(f"vak: {message}", file=sys.stderr)
    raise SystemExit(code)


def _emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _open_ledger(args: argparse.Namespace) -> Ledger:
    return Ledger.open(data_dir(args.data_dir) / LEDGER_FILENAME)


def _unreachable_hint(exc: Unreachable) -> str:
    return f"{exc} (or point --host / OLLAMA_HOST at the server)"


async def _with_provider(args: argparse.Namespace, work: Any) -> Any:
    host = args.host or default_host(args.provider)
    async with httpx.AsyncClient() as client:
        try:
            provider = open_provider(args.provider, client, host)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        return await work(provider)


async def _bind(provider: ChatProvider, model: str) -> ModelBinding:
    try:
        return await bind_model(provider, model)
    except Unreachable as exc:
        raise CliError(_unreachable_hint(exc)) from None
    except ModelNotFound as exc:
        raise CliError(f"{exc} at {provider.host} (see `vak models`)") from None


# -- commands ----------------------------------------------------------------------------


async def cmd_models(args: argparse.Namespace) -> int:
    async def work(provider: ChatProvider) -> int:
        if not isinstance(provider, ModelCatalog):
            raise CliError(f"provider {args.provider} cannot list models")
        try:
            models = await provider.list_models()
            loaded = await provider.loaded() if isinstance(provider, LoadedModels) else []
            details = (
                await asyncio.gather(*(provider.show(m.name) for m in models))
                if isinstance(provider, ModelInspector)
                else [None] * len(models)
            )
        except Unreachable as exc:
            raise CliError(_unreachable_hint(exc)) from None
        running = {m.name: m for m in loaded}
        rows = [
            {
                "name": m.name,
                "digest": m.digest,
                "size": m.size,
                "declared_window": d.declared_window if d else None,
                "capabilities": list(d.capabilities) if d else [],
                "loaded": m.name in running,
                "expires_at": running[m.name].expires_at if m.name in running else None,
            }
            for m, d in zip(models, details, strict=True)
        ]
        if args.json:
            _emit(rows)
        else:
            for r in rows:
                state = f"loaded until {r['expires_at']}" if r["loaded"] else ""
                window = f"{r['declared_window']:,} ctx" if r["declared_window"] else "? ctx"
                caps = ",".join(r["capabilities"])
                print(
                    f"{r['name']:<32} {r['size'] / 1e9:6.2f} GB  {window:>12}  {caps:<28} {state}"
                )
        return 0

    result: int = await _with_provider(args, work)
    return result


def _json_event(event: TurnEvent) -> None:
    """One line of `vak chat --json` per event, in the contract's shape."""
    if isinstance(event, TextChunk):
        _emit({"event": "text", "text": event.text})
    elif isinstance(event, ThinkingChunk):
        _emit({"event": "thinking", "text": event.text})
    elif isinstance(event, ToolCallRequested):
        _emit(
            {"event": "tool_call", "id": event.id, "name": event.name, "arguments": event.arguments}
        )
    elif isinstance(event, ToolResultReady):
        _emit(
            {
                "event": "tool_result",
                "id": event.id,
                "evidence": event.evidence,
                "chars": event.chars,
                "error": event.is_error,
            }
        )
    elif isinstance(event, Notice):
        _emit({"event": "notice", "message": event.message})
    elif isinstance(event, TurnFinished):
        if event.error:
            _emit({"event": "error", "message": event.error})
        _emit(
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
    ledger = _open_ledger(args)
    if args.session:
        try:
            ledger.session(args.session)
        except LedgerError as exc:
            raise CliError(str(exc)) from None

    async def work(provider: ChatProvider) -> int:
        binding = await _bind(provider, args.model)
        runner = TurnRunner(ledger, provider, default_tools(), keep_alive=args.keep_alive)
        session = args.session or ledger.create_session().id
        messages = [args.message] if args.message is not None else _repl_lines()
        show = _json_event if args.json else _TextPrinter()
        status = 0
        for message in messages:
            async for event in runner.run(session, message, binding, think=args.think):
                show(event)
                if isinstance(event, TurnFinished) and event.outcome == "failed":
                    status = 1
        return status

    try:
        result: int = await _with_provider(args, work)
        return result
    finally:
        ledger.close()


def _repl_lines() -> Any:
    while True:
        if sys.stdin.isatty():
            sys.stderr.write("you> ")
            sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            yield line.rstrip("\n")


def cmd_sessions(args: argparse.Namespace) -> int:
    ledger = _open_ledger(args)
    rows = session_summaries(ledger)
    if args.json:
        _emit([r.to_json() for r in rows])
    else:
        for r in rows:
            print(f"{r.id}  {r.updated_at[:19]}  {r.turns:>4} turns  {r.model:<20} {r.title}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    ledger = _open_ledger(args)
    try:
        turns = session_turns(ledger, args.session)
    except LedgerError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        _emit({"id": args.session, "turns": [turn_to_json(t) for t in turns]})
    else:
        for turn in turns:
            print(f"── turn {turn.index + 1} · {turn.outcome} · {turn.turn_id[:15]}")
            print(f"you: {turn.directive.text}")
            print(f"{turn.directive.model or 'model'}: {turn.answer}\n")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    raw = Path(args.file).read_bytes() if args.file != "-" else sys.stdin.buffer.read()
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CliError(f"{args.file} is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise CliError(f"{args.file} is not JSON: {exc}") from None
    ledger = _open_ledger(args)
    try:
        report = import_openai(ledger, document)
    except ConversationFormatError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    out = {"session": report.session, "turns": report.turns, "entries": report.entries}
    if args.json:
        _emit(out)
    else:
        print(
            f"imported {report.turns} turns ({report.entries} entries) as session {report.session}"
        )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    ledger = _open_ledger(args)
    try:
        document = export_openai(ledger, args.session)
    except LedgerError as exc:
        raise CliError(str(exc)) from None
    _emit(document)
    return 0


def cmd_ledger_verify(args: argparse.Namespace) -> int:
    ledger = _open_ledger(args)
    report = ledger.verify()
    broken = report.first_broken
    out = {
        "entries": report.entries,
        "sessions": report.sessions,
        "ok": report.ok,
        "first_broken": to_json_value(broken) if broken else None,
    }
    if args.json:
        _emit(out)
    elif broken:
        print(
            f"BROKEN at entry #{broken.seq} {broken.id} (session {broken.session}): {broken.reason}"
        )
    else:
        print(f"ok: {report.entries} entries in {report.sessions} sessions verify")
    return 0 if report.ok else 1


# -- argument parsing --------------------------------------------------------------------


def _global_options(defaults: bool) -> argparse.ArgumentParser:
    """The global flags, accepted before or after the command."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--data-dir", default=d(None), help="where the ledger lives (or VAK_DATA_DIR)")
    p.add_argument("--provider", default=d("ollama"), help="provider name (default: ollama)")
    p.add_argument("--host", default=d(None), help="provider URL (default: OLLAMA_HOST or local)")
    p.add_argument("--json", action="store_true", default=d(False), help="JSON on stdout")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vak", description="Vak: chat with local models.", parents=[_global_options(True)]
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = [_global_options(False)]
    sub.add_parser("models", parents=common, help="models the provider has").set_defaults(
        func=cmd_models
    )
    chat = sub.add_parser("chat", parents=common, help="one turn (a REPL without MESSAGE)")
    chat.add_argument("model")
    chat.add_argument("message", nargs="?")
    chat.add_argument("--session", help="continue this session (default: a new one)")
    chat.add_argument("--keep-alive", default="30m", help="how long Ollama keeps the model loaded")
    chat.add_argument("--think", action=argparse.BooleanOptionalAction, default=None)
    chat.set_defaults(func=cmd_chat)
    sub.add_parser("sessions", parents=common, help="sessions, newest first").set_defaults(
        func=cmd_sessions
    )
    show = sub.add_parser("show", parents=common, help="a session's turns")
    show.add_argument("session")
    show.set_defaults(func=cmd_show)
    imp = sub.add_parser("import", parents=common, help="import an OpenAI-format conversation")
    imp.add_argument("file")
    imp.set_defaults(func=cmd_import)
    exp = sub.add_parser("export", parents=common, help="export a session (OpenAI format)")
    exp.add_argument("session")
    exp.set_defaults(func=cmd_export)
    ledger = sub.add_parser("ledger", parents=common, help="ledger maintenance")
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")
    ledger_sub.add_parser(
        "verify", parents=common, help="recompute every hash and link"
    ).set_defaults(func=cmd_ledger_verify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = args.func(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return int(result)
    except CliError as exc:
        _fail(str(exc))
    except ProviderError as exc:
        _fail(str(exc), code=1)
    except KeyboardInterrupt:
        print("\nvak: stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
