"""The `vak` command: the desktop app's runtime, from a terminal (contract: shared/design/cli.md).

Exit codes: 0 ok; 1 the work failed (a model error, a verification that failed); 2 could not
start (provider unreachable, bad arguments, unknown session or model), with one line on stderr.
With `--json`, stdout carries one JSON document (streaming commands: one object per line).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import sys
from collections.abc import Sequence

from vak_desktop.about import version
from vak_desktop.cli.chat import cmd_chat
from vak_desktop.cli.commands import (
    cmd_export,
    cmd_import,
    cmd_ledger_verify,
    cmd_models,
    cmd_sessions,
    cmd_show,
)
from vak_desktop.cli.common import CliError, fail
from vak_desktop.cli.deleting import add_command as add_delete_command
from vak_desktop.cli.eval import add_command as add_eval_command
from vak_desktop.cli.planning import cmd_plan, cmd_request
from vak_desktop.cli.probe import add_commands as add_probe_commands
from vak_desktop.ledger import DamagedEntry, LedgerError, StorageError
from vak_desktop.ledger.errors import os_cause
from vak_desktop.providers import ProviderError


def _global_options(defaults: bool) -> argparse.ArgumentParser:
    """The global flags, accepted before or after the command."""
    d = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--data-dir", default=d(None), help="where the ledger lives (or VAK_DATA_DIR)")
    p.add_argument(
        "--provider",
        default=d("ollama"),
        help="a provider kind (ollama, openai-compatible, openai, anthropic, openrouter) or "
        "the name of a [[providers]] entry in the settings (default: ollama)",
    )
    p.add_argument("--host", default=d(None), help="provider URL (default: OLLAMA_HOST or local)")
    p.add_argument("--json", action="store_true", default=d(False), help="JSON on stdout")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vak", description="Vak: chat with local models.", parents=[_global_options(True)]
    )
    parser.add_argument("--version", action="version", version=f"vak {version()}")
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
    chat.add_argument(
        "--no-probe",
        action="store_true",
        help="in the REPL, never probe the model's capacity in the background",
    )
    chat.set_defaults(func=cmd_chat)
    sub.add_parser("sessions", parents=common, help="sessions, newest first").set_defaults(
        func=cmd_sessions
    )
    show = sub.add_parser("show", parents=common, help="a session's turns")
    show.add_argument("session")
    show.set_defaults(func=cmd_show)
    imp = sub.add_parser(
        "import",
        parents=common,
        help="import conversations: OpenAI chat JSON, ChatGPT conversations.json, Open WebUI",
    )
    imp.add_argument("file")
    imp.set_defaults(func=cmd_import)
    exp = sub.add_parser("export", parents=common, help="export a session (OpenAI format)")
    exp.add_argument("session")
    exp.add_argument("--format", choices=("openai", "markdown"), default="openai")
    exp.set_defaults(func=cmd_export)
    add_delete_command(sub, common)
    for name, func, help_ in (
        ("plan", cmd_plan, "plan the next request of a session, without sending"),
        ("request", cmd_request, "the request that would be sent next (provider-neutral)"),
    ):
        command = sub.add_parser(name, parents=common, help=help_)
        command.add_argument("session")
        source = command.add_mutually_exclusive_group(required=True)
        source.add_argument("--model", help="plan against this model's profile")
        source.add_argument("--profile", help="plan against a CapacityProfile JSON file")
        if name == "request":
            command.add_argument("--directive", default="", help="the next message, if any")
        command.set_defaults(func=func)
    add_probe_commands(sub, common)
    add_eval_command(sub, common)
    ledger = sub.add_parser("ledger", parents=common, help="ledger maintenance")
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")
    ledger_sub.add_parser(
        "verify", parents=common, help="recompute every hash and link"
    ).set_defaults(func=cmd_ledger_verify)
    return parser


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = args.func(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return int(result)
    except CliError as exc:
        fail(str(exc))
    except ProviderError as exc:
        fail(str(exc), code=1)
    except (StorageError, DamagedEntry) as exc:  # disk full, locked, an entry changed outside
        fail(str(exc), code=1)  # Vak: one line, never a traceback
    except LedgerError as exc:  # the ledger cannot be opened where it should be
        fail(str(exc))
    except KeyboardInterrupt:
        print("\nvak: stopped", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `vak … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a full disk under stdout (`vak export … > file`) or elsewhere
        if exc.errno not in _FULL:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second failure
        what = exc.filename or "the output"  # stdout has no name
        fail(f"cannot write {what}: {os_cause(exc)}", code=1)
