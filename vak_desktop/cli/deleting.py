"""`vak delete SESSION [--with-branches] [--yes]`: delete a chat for good (`ledger/deletion.py`).

It asks first on a terminal; anywhere else (a script, a pipe) it deletes only with `--yes`,
and otherwise refuses with one line and exit 2, having deleted nothing. A session other chats
were continued from is deleted only with `--with-branches`, which deletes them too.
Exit 0 once deleted; 1 when the rows are gone but the file could not be compacted (another
process held it open), so old pages may still hold the text. `--json` prints
`{deleted: [ids], entries, compacted, why_not}`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vak_desktop.cli.common import CliError, emit, open_ledger
from vak_desktop.ledger import HasDerivedSessions, Ledger, LedgerError, SessionBusy


def add_command(sub: Any, common: list[argparse.ArgumentParser]) -> None:
    command = sub.add_parser("delete", parents=common, help="delete a session for good")
    command.add_argument("session")
    command.add_argument(
        "--with-branches",
        action="store_true",
        help="also delete the chats continued from it (else it refuses when there are any)",
    )
    command.add_argument("--yes", action="store_true", help="do not ask (needed off a terminal)")
    command.set_defaults(func=cmd_delete)


def cmd_delete(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    try:
        return _delete(args, ledger)
    finally:
        ledger.close()


def _delete(args: argparse.Namespace, ledger: Ledger) -> int:
    try:
        info = ledger.session(args.session)
    except LedgerError as exc:
        raise CliError(f"{exc}; nothing was deleted (see `vak sessions`)") from None
    derived = ledger.derived_sessions(info.id)
    if derived and not args.with_branches:
        raise CliError(f"{HasDerivedSessions(info.id, derived)} (--with-branches)")
    if not args.yes:
        _confirm(info.title, info.id, len(derived))
    try:
        done = ledger.delete_session(info.id, with_derived=args.with_branches)
    except SessionBusy as exc:
        raise CliError(f"{exc}; nothing was deleted") from None
    if args.json:
        emit(
            {
                "deleted": list(done.sessions),
                "entries": done.entries,
                "compacted": not done.unscrubbed,
                "why_not": done.unscrubbed or None,
            }
        )
    else:
        others = len(done.sessions) - 1
        also = f" and {others} continued from it" if others else ""
        print(f"deleted session {info.id}{also}: {done.entries} entries, for good")
    if done.unscrubbed:
        print(
            f"vak: {done.unscrubbed}: old pages of the file may still hold the text until"
            " Vak next opens the ledger",
            file=sys.stderr,
        )
        return 1
    return 0


def _confirm(title: str, session: str, derived: int) -> None:
    """Ask on a terminal; refuse off one (nothing to ask)."""
    if not sys.stdin.isatty():
        raise CliError(
            f"not deleting session {session} without --yes: there is no terminal to ask on"
        )
    also = f" and the {derived} chats continued from it" if derived else ""
    answer = input(f'Delete "{title or "Untitled"}" ({session}){also} for good? [y/N] ')
    if answer.strip().lower() not in ("y", "yes"):
        raise CliError("not deleted")
