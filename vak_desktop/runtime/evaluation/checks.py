"""`vak eval`: the spec's verification suite ("Verification"), run against a user's ledger.

Checks that need no model always run:

- `ledger_verify`: every entry hash and chain link recomputes (`Ledger.verify`);
- `no_integrations` (spec §9): no production module or shipped file — the reading lexicons
  included — names an MCP server of the user's settings or a fixture topic (`integrations.py`);
- `no_cut`, `no_split`, `plan_within_horizon`, `uniqueness`: for every session, the next
  request is planned under the session's current profile, as `vak plan` does (the newest of
  the profiles its chain records and the profile store holds for the model of its last
  directive, revised by its feedback; the metadata profile when none is known), assembled, and
  read by `context/invariants.py`.

Checks that need a model (`evaluation_model.py`: `two_model_replay`, `cache_test`,
`probe_harness`) run when one is bound; otherwise they are reported `skipped` with `ok` true,
so a run without a model can still pass. A check never raises for what it finds: a finding is
a failed check whose detail says where.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.invariants import (
    NO_CUT,
    NO_SPLIT,
    UNIQUENESS,
    WITHIN_HORIZON,
    Finding,
    request_findings,
    results_of,
)
from vak_desktop.context.payloads import CapacityProfile, Directive
from vak_desktop.ledger import Entry, Ledger, ProfileStore
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ModelDetails
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.service import capacity_profile_for
from vak_desktop.runtime.evaluation.integrations import audit
from vak_desktop.runtime.inspection.preview import preview_next
from vak_desktop.runtime.tools import ToolRegistry

SKIPPED = "skipped: needs --model"
SESSION_INVARIANTS = (NO_CUT, NO_SPLIT, WITHIN_HORIZON, UNIQUENESS)
MODEL_CHECKS = ("probe_harness", "two_model_replay", "cache_test")
NO_INTEGRATIONS = "no_integrations"
_SHOWN_FINDINGS = 5  # findings quoted in a failed check's detail; the count says the rest


@dataclass(frozen=True)
class Check:
    """One verification: its name, whether it passed, and what it saw (or where it failed).
    A skipped check is `ok` (nothing failed) and says why it did not run."""

    name: str
    ok: bool
    detail: str
    skipped: bool = False
    data: dict[str, Any] | None = None  # what a check measured, for --json readers

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "ok": self.ok,
            "detail": self.detail,
            "skipped": self.skipped,
        }
        if self.data is not None:
            out["data"] = self.data
        return out


def skipped(name: str, why: str = SKIPPED) -> Check:
    return Check(name, True, why, skipped=True)


def ledger_verify(ledger: Ledger) -> Check:
    report = ledger.verify()
    broken = report.first_broken
    if broken is None:
        detail = f"{report.entries:,} entries in {report.sessions:,} sessions verify"
        return Check("ledger_verify", report.ok, detail)
    detail = (
        f"entry #{broken.seq} {broken.id} (session {broken.session}) does not verify: "
        f"{broken.reason}"
    )
    return Check("ledger_verify", False, detail)


def session_profile(chain: Sequence[Entry], store: ProfileStore, now: str) -> CapacityProfile:
    """The profile a session's next turn would be planned against, read offline: the model of
    its last directive, its newest recorded or stored profile, revised by the session's
    feedback (`capacity_profile_for`); the metadata profile when none is known."""
    directives = [e.payload for e in chain if isinstance(e.payload, Directive)]
    last = directives[-1] if directives else Directive(text="")
    known = [
        e.payload
        for e in chain
        if isinstance(e.payload, CapacityProfile)
        and (e.payload.provider, e.payload.model) == (last.provider, last.model)
    ]
    stored = store.latest(last.provider, last.model)
    newest = known[-1] if known else stored.profile if stored else None
    details = ModelDetails(
        name=last.model,
        declared_window=newest.declared_window if newest else None,
        quantisation=newest.quantisation if newest else "",
    )
    binding = ModelBinding(provider=last.provider, model=last.model, details=details)
    return capacity_profile_for(binding, chain, now, store=store)


@dataclass(frozen=True)
class SessionReport:
    """The invariants of one session's next request: what was checked and what broke."""

    session: str
    turns: int
    results: int  # tool results of turns not behind a reset
    findings: tuple[Finding, ...]


def check_session(
    ledger: Ledger, session: str, tools: ToolRegistry, system: str, now: str
) -> SessionReport:
    """Plan and assemble the session's next request as `vak plan` does, and read it."""
    chain = ledger.chain_to_root(session)
    profile = session_profile(chain, ledger.profiles(), now)
    preview = preview_next(ledger, session, profile, directive="", system=system, tools=tools)
    index = preview.index
    pending = index.turns[-1]
    findings = request_findings(
        index, preview.plan, preview.request, pending, tokens_per_char(profile)
    )
    results = sum(len(results_of(t)) for t in index.turns if not t.behind_reset)
    return SessionReport(session, len(index.turns) - 1, results, tuple(findings))


def session_checks(reports: Sequence[SessionReport]) -> list[Check]:
    """One check per session invariant, over every session's report."""
    sessions = len(reports)
    turns = sum(r.turns for r in reports)
    results = sum(r.results for r in reports)
    seen = {
        NO_CUT: f"{results:,} tool results of {turns:,} turns in {sessions:,} sessions are all "
        "present (verbatim, as digests with their evidence ids, on cards or in a packet)",
        NO_SPLIT: f"{turns:,} turns in {sessions:,} sessions: each at one fidelity, whole "
        "records contiguous, every call answered",
        WITHIN_HORIZON: f"{sessions:,} plans within their budgets (and histories no larger "
        "than planned)",
        UNIQUENESS: f"{sessions:,} requests: no tool twice, no directive both whole and in "
        "the thread",
    }
    checks = []
    for invariant in SESSION_INVARIANTS:
        broken = [(r.session, f) for r in reports for f in r.findings if f.invariant == invariant]
        if not broken:
            checks.append(Check(invariant, True, seen[invariant]))
            continue
        quoted = "; ".join(f"session {s}: {f}" for s, f in broken[:_SHOWN_FINDINGS])
        more = len(broken) - _SHOWN_FINDINGS
        tail = f" (and {more} more)" if more > 0 else ""
        checks.append(Check(invariant, False, f"{len(broken)} findings: {quoted}{tail}"))
    return checks


def no_integrations(server_names: Sequence[str]) -> Check:
    """Spec §9 over the installed program: its modules and every shipped file."""
    found, modules, files = audit(server_names)
    read = f"{modules:,} modules and {files:,} shipped files (lexicons included)"
    if modules == 0:
        read += "; no module sources in this build, so shipped files only"
    if not found:
        return Check(NO_INTEGRATIONS, True, f"{read} name no configured server and no topic")
    quoted = "; ".join(found[:_SHOWN_FINDINGS])
    more = len(found) - _SHOWN_FINDINGS
    return Check(NO_INTEGRATIONS, False, f"{len(found)} findings in {read}: {quoted}" + (
        f" (and {more} more)" if more > 0 else ""))  # fmt: skip


def offline_checks(
    ledger: Ledger, tools: ToolRegistry, system: str, servers: Sequence[str] = ()
) -> list[Check]:
    """Every check that needs no model, over the whole ledger; `servers` are the MCP server
    names of the user's settings (the no-integrations audit's banned words)."""
    now = utc_now()
    reports = [
        check_session(ledger, info.id, tools, system, now)
        for info in ledger.sessions(include_archived=True)
    ]
    return [ledger_verify(ledger), *session_checks(reports), no_integrations(servers)]


def all_ok(checks: Sequence[Check]) -> bool:
    return all(c.ok for c in checks)
