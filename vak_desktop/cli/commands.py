"""The `vak` commands over stored sessions and the provider's models: models, sessions, show,
import, export and ledger verify."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from vak_desktop.cli.common import CliError, emit, open_ledger, unreachable_hint, with_provider
from vak_desktop.context.codec import to_json_value
from vak_desktop.ledger import LEDGER_FILENAME, DamagedEntry, LedgerError, data_dir
from vak_desktop.ledger.canonical import CanonicalFormError
from vak_desktop.providers import (
    ChatProvider,
    LoadedModels,
    ModelCatalog,
    ModelInspector,
    Unreachable,
)
from vak_desktop.runtime import (
    ConversationFormatError,
    export_openai,
    import_openai,
    presentations_of,
    session_summaries,
    session_turns,
    turn_to_json,
)
from vak_desktop.runtime.sessions.assets import FolderAssets, open_export
from vak_desktop.runtime.sessions.formats import (
    ReadFile,
    Skipped,
    UnknownFormat,
    read_conversations,
)
from vak_desktop.runtime.sessions.formats.markdown import export_markdown
from vak_desktop.runtime.sessions.importing import BatchReport, import_all
from vak_desktop.runtime.sessions.json_items import ItemsError, is_json_list, json_items
from vak_desktop.runtime.sessions.origins import Origins, origin


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
            raise CliError(unreachable_hint(exc)) from None
        running = {m.name: m for m in loaded}
        measured = _measured_horizons(args, provider.name, models)
        rows: list[dict[str, Any]] = [
            {
                "name": m.name,
                "digest": m.digest,
                "size": m.size,
                "declared_window": d.declared_window if d else None,
                "capabilities": list(d.capabilities) if d else [],
                "loaded": m.name in running,
                "expires_at": running[m.name].expires_at if m.name in running else None,
                # the stored probe's horizon and how sure it is ({tokens, confidence} or None)
                "instruction_horizon": measured.get(m.name),
            }
            for m, d in zip(models, details, strict=True)
        ]
        if args.json:
            emit(rows)
        else:
            for r in rows:
                state = f"loaded until {r['expires_at']}" if r["loaded"] else ""
                window = f"{r['declared_window']:,} ctx" if r["declared_window"] else "? ctx"
                caps = ",".join(r["capabilities"])
                horizon = r["instruction_horizon"]
                measure = (
                    f"horizon {horizon['tokens']:,} ({horizon['confidence']:.2f})"
                    if horizon
                    else "not probed"
                )
                print(
                    f"{r['name']:<32} {r['size'] / 1e9:6.2f} GB  {window:>12}  {caps:<28} "
                    f"{measure:<24} {state}"
                )
        return 0

    result: int = await with_provider(args, work)
    return result


def _measured_horizons(
    args: argparse.Namespace, provider: str, models: list[Any]
) -> dict[str, dict[str, Any]]:
    """Each listed model's stored probe horizon and confidence (`vak probe` wrote them)."""
    ledger = open_ledger(args)
    try:
        store = ledger.profiles()
        found = {}
        for m in models:
            stored = store.latest(provider, m.name)
            if stored is not None and stored.profile.provenance.get("source") == "probe":
                horizon = stored.profile.instruction_horizon
                found[m.name] = {"tokens": horizon.tokens, "confidence": horizon.confidence}
        return found
    finally:
        ledger.close()


def cmd_sessions(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    rows = session_summaries(ledger)
    if args.json:
        emit([r.to_json() for r in rows])
    else:
        for r in rows:
            print(f"{r.id}  {r.updated_at[:19]}  {r.turns:>4} turns  {r.model:<20} {r.title}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    try:
        turns = session_turns(ledger, args.session)
    except DamagedEntry:
        raise  # the work failed (exit 1), as verify's does
    except LedgerError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        emit({"id": args.session, "turns": [turn_to_json(t) for t in turns]})
    else:
        for turn in turns:
            print(f"── turn {turn.index + 1} · {turn.outcome} · {turn.turn_id[:15]}")
            print(f"you: {turn.directive.text}")
            print(f"{turn.directive.model or 'model'}: {turn.answer}")
            for card in presentations_of(turn):
                print(f"  ▣ {card['type']} card: {card['title']} [{card['id']}]")
            print()
    return 0


STREAMED_BYTES = 32 << 20  # a list file larger than this is read one item at a time


def cmd_import(args: argparse.Namespace) -> int:
    if args.file != "-":
        try:
            large = Path(args.file).stat().st_size > STREAMED_BYTES
            if large and is_json_list(Path(args.file)):
                return _import_streamed(args, Path(args.file))
        except OSError as exc:
            raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    try:
        if args.file == "-":
            raw, assets = sys.stdin.buffer.read(), None
        else:
            raw, assets = open_export(Path(args.file))
    except ValueError as exc:
        raise CliError(f"cannot read {args.file}: {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CliError(f"{args.file} is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise CliError(f"{args.file} is not JSON: {exc}") from None
    except RecursionError:
        raise CliError(f"{args.file}: the JSON is nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise CliError(f"{args.file}: a value cannot be read: {exc}") from None
    try:
        read = read_conversations(document, assets)
    except UnknownFormat as exc:
        raise CliError(f"{args.file}: {exc}") from None
    ledger = open_ledger(args)
    if read.format != "openai" or isinstance(document, list):
        return _import_batch(args, ledger, read)
    if read.conversations and read.digests:
        source = origin("openai", read.conversations[0].source_id, read.digests[0])
        same = Origins.read(ledger).same(source)
        if same is not None:
            title = ledger.session(same).title or "Untitled"
            if args.json:
                emit({"already_imported": same})
            else:
                print(f"already imported as “{title}” (session {same}): nothing written")
            return 0
    try:
        report = import_openai(ledger, document)
    except (ConversationFormatError, CanonicalFormError) as exc:
        raise CliError(f"{args.file}: {exc}; nothing was imported") from None
    except RecursionError:
        raise CliError(
            f"{args.file}: a message is nested too deeply; nothing was imported"
        ) from None
    out = {"session": report.session, "turns": report.turns, "entries": report.entries}
    out["untimed_turns"] = list(report.untimed)  # no time in the file: dated when imported
    if args.json:
        emit(out)
    else:
        print(
            f"imported {report.turns} turns ({report.entries} entries) as session {report.session}"
        )
        if report.untimed:
            print(f"  {len(report.untimed)} turns had no time in the file (dated when imported)")
    return 0


def _import_streamed(args: argparse.Namespace, path: Path) -> int:
    """A large list file, one item at a time (`json_items`): each item is read as a file of its
    own would be and imported, so memory holds one conversation, not the file."""
    ledger = open_ledger(args)
    total: BatchReport | None = None
    known, assets = Origins.read(ledger), FolderAssets(path.parent)  # read once, not an item
    try:
        for index, item in enumerate(json_items(path)):
            try:
                read = read_conversations([item], assets)
            except UnknownFormat as exc:
                if total is None:
                    raise CliError(f"{args.file}: {exc}") from None
                total.total += 1
                why = f"not a conversation ({exc})"
                total.skipped.append(Skipped("item", f"item {index}", why))
                continue
            report = import_all(ledger, read, known)
            if total is None:
                total = BatchReport(report.format, 0)
            total.total += report.total
            total.imported += report.imported
            total.skipped += report.skipped
            total.already += report.already
            total.notes += report.notes
    except ItemsError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    if total is None:
        raise CliError(f"{args.file}: nothing could be imported (an empty list)")
    return _reported(args, total)


def _import_batch(args: argparse.Namespace, ledger: Any, read: ReadFile) -> int:
    """A file of several conversations (ChatGPT, Open WebUI, a list): each its own session,
    and every thing skipped said."""
    return _reported(args, import_all(ledger, read))


def _reported(args: argparse.Namespace, report: BatchReport) -> int:
    if args.json:
        emit(report.to_json())
    else:
        print(report.summary())
        for line in report.lines():
            print(f"  {line}")
    if not report.imported and not report.already:
        raise CliError(f"{args.file}: nothing could be imported")
    return 0  # all there already is no failure: nothing was written, as asked


def cmd_export(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    try:
        if getattr(args, "format", "openai") == "markdown":
            sys.stdout.write(export_markdown(ledger, args.session))
            return 0
        document = export_openai(ledger, args.session)
    except DamagedEntry:
        raise  # the work failed (exit 1), as verify's does
    except LedgerError as exc:
        raise CliError(str(exc)) from None
    emit(document)
    return 0


def cmd_ledger_verify(args: argparse.Namespace) -> int:
    path = data_dir(args.data_dir) / LEDGER_FILENAME
    if not path.is_file():  # opening it would create it (and its folders): verify only reads
        raise CliError(f"no ledger at {path}: nothing to verify (is --data-dir right?)")
    ledger = open_ledger(args)
    report = ledger.verify()
    broken = report.first_broken
    out = {
        "entries": report.entries,
        "sessions": report.sessions,
        "ok": report.ok,
        "first_broken": to_json_value(broken) if broken else None,
        "removed": [to_json_value(r) for r in report.removed],
        "anchor_lost": report.anchor_lost,
        "events_changed": report.events_changed or None,
        "notes": list(report.notes),
        "deletions": report.deletions,
        "markers_left": report.markers_left,
    }
    if args.json:
        emit(out)
        return 0 if report.ok else 1
    if broken:
        print(
            f"BROKEN at entry #{broken.seq} {broken.id} (session {broken.session}): {broken.reason}"
        )
    for gone in report.removed:
        print(f"REMOVED from session {gone.session} at entry #{gone.seq}: {gone.reason}")
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if report.anchor_lost:
        print("NOT VERIFIABLE: the head anchor went missing once (see the notes)")
    if report.events_changed:
        print(f"CHANGED: {report.events_changed} (the anchor recorded them)")
    if report.markers_left:
        print(
            f"UNGUARDED: {report.markers_left} deletion marker(s) written outside Vak let their"
            " sessions' rows be deleted (_vak_deleting)"
        )
    if report.deletions:
        print(f"{report.deletions} deletion{'s' if report.deletions != 1 else ''} recorded")
    if report.ok:
        print(f"ok: {report.entries} entries in {report.sessions} sessions verify")
    return 0 if report.ok else 1


# -- argument parsing --------------------------------------------------------------------
