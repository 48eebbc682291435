"""`vak probe` and `vak profile`: a model's measured CapacityProfile, from a terminal.

`vak probe MODEL` runs the capacity ladder in the foreground — the same `run_probe` the
background scheduler uses, with its time budget (`DEADLINE_S`) unless `--timeout` says
otherwise, and its two tasks (file search, and answer-from-memory unless `--no-memory`) —
with one progress line per sample on stderr, records the result
in the ledger's profile store (where every session finds it at its next bind) and prints the
profile. A fresh stored profile (24 h local, 7 d hosted, same model digest) is printed without
probing unless `--force`. `vak profile MODEL` prints the stored profile and never touches the
provider. Both print the contract's JSON shape with `--json` (shared/design/cli.md).
"""

from __future__ import annotations

import argparse
import sys

from vak_desktop.cli.common import CliError, bind, emit, open_ledger, tools_for, with_provider
from vak_desktop.context.capacity.probe import (
    TTL_HOSTED_S,
    TTL_LOCAL_S,
    is_fresh,
    left_undecided,
    probed_at,
)
from vak_desktop.context.capacity.probe_history import MEMORY
from vak_desktop.context.capacity.probe_result import HORIZON_FROM, resume_from
from vak_desktop.context.capacity.profile import profile_to_json
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers import ChatProvider, ModelDigests, is_local
from vak_desktop.runtime.capacity.probe import ProbeProgress, run_probe
from vak_desktop.runtime.capacity.scheduler import DEADLINE_S
from vak_desktop.runtime.capacity.service import key_of
from vak_desktop.runtime.turn.runner import TurnRunner


def progress_line(progress: ProbeProgress) -> str:
    """One sample, for stderr: rung, phase, size, verdict, time."""
    sample = progress.sample_result
    if sample.cancelled:
        verdict = "undecided: " + (sample.undecided or "cut at the probe's time budget")
    elif sample.overflow:
        verdict = "refused: longer than the window"
    elif sample.error:
        verdict = f"failed: {sample.error}"
    elif sample.followed:
        verdict = "followed (written as text)" if sample.as_text else "followed"
    else:
        verdict = f"not followed (called {sample.called})" if sample.called else "not followed"
    task = " (memory)" if progress.task == MEMORY else ""
    return (
        f"rung {progress.rung:>2}{task} {progress.phase:<7} {progress.tokens:>8,} tokens "
        f"({progress.turns} turns, num_ctx {progress.num_ctx:,})  sample {progress.sample}: "
        f"{verdict}  {sample.wall_ns / 1e9:.2f} s"
    )


def _print_progress(progress: ProbeProgress) -> None:
    print(progress_line(progress), file=sys.stderr, flush=True)


def _show(profile: CapacityProfile, as_json: bool) -> None:
    if as_json:
        emit(profile_to_json(profile))
        return
    horizon = profile.instruction_horizon
    provenance = profile.provenance
    verified = f"{profile.verified_window:,}" if profile.verified_window else "not refused yet"
    undecided = " — undecided" if provenance.get("undecided") else ""
    print(
        f"{profile.model}: instruction horizon {horizon.tokens:,} tokens "
        f"(confidence {horizon.confidence:.2f}){undecided}"
    )
    basis = confidence_basis(profile)
    if basis:
        print(f"  {basis}")
    print(
        f"  declared window {profile.declared_window:,} · verified window {verified} · "
        f"num_ctx {profile.num_ctx:,} · output reserve {profile.output_reserve:,}"
    )
    print(
        f"  tokens per char {profile.tokens_per_char.value:.3f} · prefill "
        f"{profile.prefill_tps.value:,.0f} tokens/s · cache {profile.cache}"
    )
    if profile.prefix_tokens.samples:
        print(f"  stable prefix {profile.prefix_tokens.value:,.0f} tokens (measured)")
    source = provenance.get("source", "metadata")
    if source == "probe":
        wall = int(provenance.get("wall_ns", 0)) / 1e9
        print(
            f"  probed {probed_at(profile)} in {provenance.get('requests', 0)} requests "
            f"({int(provenance.get('prompt_tokens', 0)):,} prompt tokens, {wall:.1f} s)"
        )
        if provenance.get("rescue"):
            print(
                "  notice: the model followed the instruction at no size tried, not even the "
                "bare prefix"
            )
        if provenance.get("outcome") == "undecided":
            print(
                "  notice: undecided — the probe confirmed no size of the tool task; the "
                "horizon is "
                + HORIZON_FROM.get(
                    str(provenance.get("horizon_from")),
                    "the one the model had (or its declared window)",
                )
                + ", at low confidence; it is retried when the machine is idle"
            )
        elif provenance.get("outcome") == "timed_out":
            print(
                "  notice: the probe ran out of time; the horizon is the largest size it "
                "confirmed before that (probe again when the machine is idle)"
            )
        if profile.memory_horizon is not None:
            recalled = profile.memory_horizon
            print(
                f"  answers from memory up to {recalled.tokens:,} tokens (confidence "
                f"{recalled.confidence:.2f}); a turn that needs no tool plans to the larger"
            )
    else:
        print(f"  {source} only: not probed")


def confidence_basis(profile: CapacityProfile) -> str:
    """What the horizon's confidence rests on: the samples at both ends of the final bracket."""
    verdict = profile.provenance.get("verdict")
    if not isinstance(verdict, dict):
        return ""
    parts = []
    passed, failed = verdict.get("passed"), verdict.get("failed")
    if isinstance(passed, list) and len(passed) == 2:
        parts.append(f"followed {passed[0]}/{passed[1]} at the horizon")
    if isinstance(failed, list) and len(failed) == 2:
        above = verdict.get("failed_tokens")
        at = f" at {above:,} tokens" if isinstance(above, int) else " above it"
        parts.append(f"{failed[0]}/{failed[1]}{at}")
    elif passed:
        parts.append("the ceiling itself passed")
    test = f"sequential test, {verdict.get('agree')} agreeing or a majority of {verdict.get('max_samples')}"
    return f"{test}: " + ", ".join(parts) if parts else test


async def cmd_probe(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    store = ledger.profiles()

    async def work(provider: ChatProvider) -> int:
        binding = await bind(provider, args.model)
        digest = await provider.digest(args.model) if isinstance(provider, ModelDigests) else ""
        stored = store.latest(*key_of(binding))
        ttl = TTL_LOCAL_S if is_local(provider) else TTL_HOSTED_S
        fresh = stored is not None and is_fresh(stored.profile, utc_now(), ttl_s=ttl, digest=digest)
        if stored is not None and fresh and not args.force:
            print(
                f"vak: a fresh profile from {probed_at(stored.profile)} is stored; "
                "--force probes again",
                file=sys.stderr,
            )
            _show(stored.profile, args.json)
            return 0
        tools = tools_for(args, ledger)
        # a stored probe that left rungs undecided continues from the rungs it decided
        resumable = (
            stored is not None
            and not args.force
            and left_undecided(stored.profile)
            and (not digest or stored.profile.model_digest in ("", digest))
        )
        try:  # the ladder carries the prefix this model's real turns would
            prefix = TurnRunner(ledger, provider, tools).probe_prefix(binding)
            record = await run_probe(
                provider,
                args.model,
                details=binding.details,
                digest=digest,
                max_prompt_tokens=args.max_tokens,
                on_sample=_print_progress,
                prefix=prefix,
                deadline_s=args.timeout if args.timeout is not None else DEADLINE_S,
                memory=not args.no_memory,
                keep=stored.profile if stored is not None else None,
                resume=resume_from(stored.activity) if resumable and stored else None,
            )
        finally:
            await tools.aclose()
        store.record(record.profile, record.activity)
        _show(record.profile, args.json)
        return 0

    try:
        result: int = await with_provider(args, work)
        return result
    finally:
        ledger.close()


def cmd_profile(args: argparse.Namespace) -> int:
    ledger = open_ledger(args)
    try:
        stored = ledger.profiles().latest(args.provider, args.model)
    finally:
        ledger.close()
    if stored is None:
        raise CliError(f"no stored profile for {args.model}; run `vak probe {args.model}`")
    _show(stored.profile, args.json)
    return 0


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: list[argparse.ArgumentParser]
) -> None:
    """Register `probe` and `profile` on the `vak` parser."""
    probe = sub.add_parser(
        "probe", parents=common, help="measure a model's capacity profile (foreground)"
    )
    probe.add_argument("model")
    probe.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the largest prompt, in tokens, the ladder tries (default: 0.9 × declared window)",
    )
    probe.add_argument(
        "--force", action="store_true", help="probe even if a fresh profile is stored"
    )
    probe.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help=(
            "stop after S seconds and keep what was confirmed (default: the background "
            f"probe's budget, {DEADLINE_S:.0f} s)"
        ),
    )
    probe.add_argument(
        "--no-memory",
        action="store_true",
        help="probe only the file-search task, not the answer-from-memory one",
    )
    probe.set_defaults(func=cmd_probe)
    profile = sub.add_parser(
        "profile", parents=common, help="the stored capacity profile of a model (no probing)"
    )
    profile.add_argument("model")
    profile.set_defaults(func=cmd_profile)
