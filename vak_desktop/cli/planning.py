"""`vak plan` and `vak request`: the session's next request as the engine would build it, against
a model's profile or a profile file, without sending anything."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from vak_desktop.cli.common import CliError, bind, emit, open_ledger, tools_for, with_provider
from vak_desktop.context.capacity.profile import metadata_profile, profile_from_json
from vak_desktop.context.codec import to_json_value
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.request import Message
from vak_desktop.ledger import LedgerError, ProfileStore
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers import ChatProvider
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT
from vak_desktop.runtime.capacity.service import capacity_profile_for
from vak_desktop.runtime.inspection.preview import Preview, preview_next


def _profile(args: argparse.Namespace, ledger_chain: Any, store: ProfileStore) -> CapacityProfile:
    """--profile FILE (missing fields: metadata-only defaults), or --model's bound profile (the
    newest of the session's and the stored probe, revised by the session's feedback)."""
    if args.profile:
        try:
            document = json.loads(Path(args.profile).read_text(encoding="utf-8"))
            base = metadata_profile(
                args.provider,
                str(document.get("model", "profile")),
                document.get("declared_window"),
            )
            return profile_from_json(document, base)
        except (OSError, ValueError, AttributeError) as exc:
            raise CliError(f"{args.profile}: {exc}") from None

    async def bound(provider: ChatProvider) -> CapacityProfile:
        binding = await bind(provider, args.model)
        return capacity_profile_for(binding, ledger_chain, utc_now(), store=store)

    profile: CapacityProfile = asyncio.run(with_provider(args, bound))
    return profile


def _preview(args: argparse.Namespace, directive: str) -> Preview:
    """Plan the session's next request against the chosen profile."""
    ledger = open_ledger(args)
    try:
        chain = ledger.chain_to_root(args.session)
    except LedgerError as exc:
        raise CliError(str(exc)) from None
    return preview_next(
        ledger,
        args.session,
        _profile(args, chain, ledger.profiles()),
        directive=directive,
        system=DEFAULT_SYSTEM_PROMPT,
        tools=tools_for(args, ledger),
    )


def cmd_plan(args: argparse.Namespace) -> int:
    preview = _preview(args, "")
    out = preview.plan.to_json()
    out["request_tokens"] = preview.request_tokens
    out["reset"] = preview.reset.reason if preview.reset else None
    if args.json:
        emit(out)
        return 0
    budget = out["budget"]
    if preview.reset is not None:
        print(f"the turn writes a Reset first: {preview.reset.reason}")
    print(
        f"horizon {budget['horizon']:,} − prefix {budget['prefix_tokens']:,} − tail "
        f"{budget['tail_tokens']:,} − output {budget['output_reserve']:,} − current turn "
        f"{budget['current_turn_reserve']:,} = {budget['available']:,} tokens for history"
    )
    for turn in out["turns"]:
        print(
            f"  turn {turn['index'] + 1:>4}  {turn['fidelity']:<12} {turn['tokens']:>7,} tokens"
            f"  value {turn['value']:.2f}"
        )
    packet = out["packet_range"]
    print(f"packet: {'none' if not packet else f'{packet[0][:15]}…{packet[1][:15]}'}")
    print(f"request ≈ {preview.request_tokens:,} tokens")
    return 0


def _message_json(message: Message) -> dict[str, Any]:
    full = to_json_value(message)
    return {k: v for k, v in full.items() if v not in ("", [], None) or k == "content"}


def cmd_request(args: argparse.Namespace) -> int:
    preview = _preview(args, args.directive or "")
    request = preview.request
    emit(
        {
            "system": request.system,
            "tools": [to_json_value(t) for t in request.tools],
            "messages": [_message_json(m) for m in request.messages],
            "prefix_digest": request.prefix_digest,
            "cache_breakpoints": list(request.cache_breakpoints),
            "num_ctx": preview.num_ctx,
            # what the directive read as: the domains and card types that chose the tools
            "reading": preview.reading.to_json() if preview.reading else None,
            # why the turn writes a Reset with its handoff before it, if it does
            "reset": preview.reset.reason if preview.reset else None,
        }
    )
    return 0
