"""`vak eval`: the spec's verification suite over the user's ledger (runtime/evaluation/checks.py).

The checks that need no model always run; with `--model MODEL` (and the usual provider options)
the model's checks run too, otherwise they are listed as skipped (`ok` true, `skipped` true);
`--live` adds the live replay on a generated session (`runtime/evaluation/live.py`).
Exit 0 when every check passed, 1 when any failed. `--json` prints
`{"checks": [{name, ok, detail, skipped[, data]}]}`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vak_desktop.cli.common import (
    bind,
    emit,
    open_ledger,
    settings_for,
    tools_for,
    with_provider,
)
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers import ChatProvider
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, default_tools
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.evaluation.checks import (
    MODEL_CHECKS,
    Check,
    all_ok,
    offline_checks,
    skipped,
)
from vak_desktop.runtime.evaluation.live import LIVE_EFFICACY, live_efficacy
from vak_desktop.runtime.evaluation.model_checks import model_checks
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools import ToolRegistry


def scratch_tools(folder: Path) -> ToolRegistry:
    """The live replay's tools: the defaults over its generated files only."""
    return default_tools(Settings(workspace=(str(folder),)))


def add_command(sub: Any, common: list[argparse.ArgumentParser]) -> None:
    command = sub.add_parser(
        "eval", parents=common, help="the verification suite (invariants, replays, cache test)"
    )
    command.add_argument("--model", help="also run the checks that need this model")
    command.add_argument("--keep-alive", default="30m", help="how long Ollama keeps the model")
    command.add_argument(
        "--live",
        action="store_true",
        help="with --model: the live replay on a generated 40-turn session (slow on a CPU)",
    )
    command.add_argument("--tries", type=int, default=6, help="tries of the live replay")
    command.set_defaults(func=cmd_eval)


async def cmd_eval(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    registry = tools_for(args, ledger)
    servers = [server.name for server in settings_for(args).mcp_servers]
    try:
        checks = offline_checks(ledger, registry, DEFAULT_SYSTEM_PROMPT, servers)
        if args.model:

            async def work(provider: ChatProvider) -> list[Check]:
                binding = await bind(provider, args.model)
                found = await model_checks(
                    provider, binding, registry, DEFAULT_SYSTEM_PROMPT, args.keep_alive, ledger
                )
                if not args.live:
                    return [*found, Check(LIVE_EFFICACY, True, "skipped: needs --live", True)]
                # on the profile the user's ledger holds for this model (its probe, if any)
                profile = CapacityService(ledger).profile_for(binding, [], utc_now())
                live = await live_efficacy(provider, binding, profile, args.tries, scratch_tools)
                return [*found, live]

            checks += await with_provider(args, work)
        else:
            checks += [skipped(name) for name in (*MODEL_CHECKS, LIVE_EFFICACY)]
    finally:
        await registry.aclose()
        ledger.close()
    if args.json:
        emit({"checks": [c.to_json() for c in checks]})
    else:
        for check in checks:
            mark = "–" if check.skipped else "✓" if check.ok else "✗"
            print(f"{mark} {check.name}: {check.detail}")
        passed = sum(c.ok and not c.skipped for c in checks)
        print(f"{passed} passed, {sum(not c.ok for c in checks)} failed, "
              f"{sum(c.skipped for c in checks)} skipped")  # fmt: skip
    return 0 if all_ok(checks) else 1
