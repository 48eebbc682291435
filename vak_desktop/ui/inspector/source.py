"""What the inspector panels and the status bar show, read from the ledger and the runtime.

`Inspection` is the one service those views receive. It never plans a request of its own
choosing and never talks HTTP: a past turn's plan is the one its first Receipt recorded, the
request a step sent is rebuilt by `runtime/inspection/replay.py` from that plan, and the only fresh plan is
`runtime/inspection.preview_next` — the same call `vak plan` makes — for a session that has no
receipt yet. It re-reads when the chat service says something changed (a session opened, a
step finished, a model bound) and tells the views through `changed`.

Just over 400 lines: the one service every inspector panel reads, with the small value types it
hands them; the panels themselves are their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from vak_desktop.context.capacity.feedback import (
    CONTEXT_OVERFLOW,
    INSTRUCTION_FAILED,
    SILENT_TRUNCATION,
)
from vak_desktop.context.capacity.probe import PROBE_ACTIVITY, is_probed
from vak_desktop.context.capacity.profile import usable_horizon
from vak_desktop.context.evidence.windows import select_lines
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    EvidenceBody,
    Receipt,
    ToolResult,
)
from vak_desktop.context.planning.turns import Turn, split_turns
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Entry, Ledger, LedgerError
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.runtime import ModelBinding, capacity_profile_for
from vak_desktop.runtime.events import StepFinished
from vak_desktop.runtime.inspection.preview import Preview, preview_next
from vak_desktop.runtime.inspection.replay import (
    NotReplayable,
    SentRequest,
    recorded_plan,
    sent_request,
)
from vak_desktop.runtime.inspection.replay import turn_receipts as receipts_of
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.inspector.horizon_words import Above, followed_above, over_horizon

FEEDBACK_TYPES = (CONTEXT_OVERFLOW, SILENT_TRUNCATION, INSTRUCTION_FAILED)
NEXT = ""  # the turn id that stands for "the next request" (a preview)


@dataclass(frozen=True)
class PlanView:
    """A plan as the Plan panel shows it: the recorded JSON and the turns it speaks of."""

    turn_id: str  # the turn it was planned for ('' for the next request)
    model: str
    plan: dict[str, Any]  # Plan.to_json()
    asked: dict[str, str]  # turn id -> what was asked, for every earlier turn
    request_tokens: int  # what the provider counted (or, for a preview, our estimate)
    measured: bool  # request_tokens came from a receipt
    last_tokens: int = 0  # the turn's latest request (its last step), as the provider counted

    def count(self, fidelity: str) -> int:
        return sum(1 for t in self.plan.get("turns", []) if t["fidelity"] == fidelity)


@dataclass(frozen=True)
class Gauge:
    """The status bar's context gauge: this request against the horizon, and the fidelities."""

    model: str
    horizon: int
    request_tokens: int
    full: int
    card: int
    packet: int
    measured: bool
    planned_horizon: int = 0  # the horizon the request was planned against (0: not known)
    prefix_tokens: int = 0  # the plan's prefix (system + tools)

    def over(self) -> tuple[str, str]:
        """(short, whole) why the request is over the horizon; ("", "") when it is not."""
        return over_horizon(
            self.request_tokens, self.horizon, self.planned_horizon, self.prefix_tokens
        )


@dataclass(frozen=True)
class EvidenceItem:
    """One tool result of the session: what the request carried and the stored whole."""

    turn: int  # 1-based
    result: ToolResult
    body: EvidenceBody | None
    digest: str  # what later turns carry (the TurnCard's trace line), '' while the turn runs
    arguments: dict[str, Any] = field(default_factory=dict)  # what the model asked the tool

    def lines(self, first: int, last: int) -> str:
        """A recall of lines `first`..`last`, exactly as the `recall` tool returns them."""
        if self.body is None:
            raise ValueError("the stored result is missing")
        return select_lines(self.body.content, first, last)


@dataclass(frozen=True)
class Provenance:
    """Where the bound model's profile came from, and what turns have taught it since."""

    profile: CapacityProfile  # as the next request would be planned against it
    baseline: CapacityProfile  # the stored probe (or metadata) before feedback
    activity: Activity | None  # the capacity_probe Activity that measured it
    feedback: list[tuple[str, str, str]] = field(default_factory=list)  # (when, what, detail)
    receipts: int = 0  # receipts of this model in the session since the baseline
    receipts_total: int = 0  # receipts of this model in the session, before the probe too
    above: list[Above] = field(default_factory=list)  # tool calls followed over the horizon


def _asked(turns: list[Turn]) -> dict[str, str]:
    return {t.turn_id: t.directive.text for t in turns}


class Inspection(QObject):
    """Reads plans, requests, evidence and profiles for the session the chat service shows."""

    changed = Signal()  # the session, its entries or the bound model changed
    gaugeChanged = Signal(object)  # Gauge | None

    def __init__(
        self,
        service: ChatService,
        ledger: Ledger,
        *,
        system: str,
        tools: ToolRegistry | tuple[ToolSpec, ...],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._ledger = ledger
        self._system = system
        self._tools = tools
        self._chain: list[Entry] | None = None
        self._gauge: Gauge | None = None
        # Bound methods, not lambdas: Qt drops these connections when this object is deleted
        # (with its window), while the service may live on.
        service.sessionOpened.connect(self._session_changed)
        service.modelBound.connect(self._session_changed)
        service.modelChanged.connect(self._session_changed)
        service.stepFinished.connect(self._step_finished)
        service.turnFinished.connect(self._session_changed)

    # -- state ----------------------------------------------------------------------------

    @property
    def session(self) -> str | None:
        return self._service.session

    @property
    def binding(self) -> ModelBinding | None:
        return self._service.binding

    @property
    def tools(self) -> ToolRegistry | tuple[ToolSpec, ...]:
        """The runners' tools now (the settings may have changed them since the start)."""
        if isinstance(self._tools, ToolRegistry):
            return self._service.runner.tools
        return self._tools

    @property
    def gauge(self) -> Gauge | None:
        return self._gauge

    def chain(self) -> list[Entry]:
        """The shown session's current branch (read once per change)."""
        if self._chain is None:
            session = self.session
            try:
                self._chain = self._ledger.chain_to_root(session) if session else []
            except LedgerError:
                self._chain = []
        return self._chain

    def turns(self) -> list[Turn]:
        return split_turns(self.chain())

    # -- plans ----------------------------------------------------------------------------

    def plan_for(self, turn_id: str) -> PlanView | None:
        """The plan turn `turn_id` followed (its recorded plan), or the next request's preview
        for NEXT. None when there is nothing to show (no receipt, no bound model)."""
        if turn_id == NEXT:
            return self.preview()
        chain = self.chain()
        try:
            receipts = receipts_of(chain, turn_id)
        except NotReplayable:
            return None
        planned = [r for _, r in receipts if recorded_plan(r)]
        if not planned:
            return None
        turns = self.turns()
        first = planned[-1]
        sent = [r for _, r in receipts if r.step == first.step]
        tokens = sent[-1].usage.prompt_tokens() if sent else 0
        last = receipts[-1][1].usage.prompt_tokens()
        return PlanView(
            turn_id, first.model, first.plan, _asked(turns), tokens, bool(tokens), last or tokens
        )

    def preview_request(self) -> Preview | None:
        """The next request of the shown session, planned and assembled (`vak request`)."""
        profile = self.profile()
        session = self.session
        if profile is None or not session:
            return None
        system = self._service.system_prompt  # the chat's own, else the runner's
        return preview_next(
            self._ledger, session, profile, directive="", system=system, tools=self.tools
        )

    def preview(self) -> PlanView | None:
        """The next request of the shown session as `vak plan` would show it."""
        preview = self.preview_request()
        if preview is None:
            return None
        turns = self.turns()
        return PlanView(
            NEXT,
            self.binding.model if self.binding else "",
            preview.plan.to_json(),
            _asked(turns),
            preview.request_tokens,
            measured=False,
        )

    def latest_plan(self) -> PlanView | None:
        """The plan of the newest turn that recorded one, else the preview."""
        for turn in reversed(self.turns()):
            view = self.plan_for(turn.turn_id)
            if view is not None:
                return view
        return self.preview()

    # -- requests -------------------------------------------------------------------------

    def steps_of(self, turn_id: str) -> list[int]:
        try:
            return sorted({r.step for _, r in receipts_of(self.chain(), turn_id)})
        except NotReplayable:
            return []

    def request_for(self, turn_id: str, step: int = 0) -> SentRequest:
        """The request step `step` of `turn_id` sent, rebuilt (raises NotReplayable)."""
        session = self.session
        if not session:
            raise NotReplayable("no session is shown")
        return sent_request(
            self._ledger,
            session,
            turn_id,
            step,
            system=self._system,
            tools=self.tools,
            chain=self.chain(),
        )

    # -- evidence -------------------------------------------------------------------------

    def evidence(self) -> list[EvidenceItem]:
        """Every tool result of the shown branch, in order."""
        items = []
        for turn in self.turns():
            card = turn.card
            digests = {line.evidence: line.digest for line in card.did} if card else {}
            bodies = {e.id: e.payload for e in turn.entries if isinstance(e.payload, EvidenceBody)}
            calls = {
                call.id: call.arguments
                for e in turn.entries
                if isinstance(e.payload, AssistantStep)
                for call in e.payload.tool_calls
            }
            for entry in turn.entries:
                result = entry.payload
                if isinstance(result, ToolResult):
                    body = bodies.get(result.evidence)
                    items.append(
                        EvidenceItem(
                            turn.number,
                            result,
                            body if isinstance(body, EvidenceBody) else None,
                            digests.get(result.evidence, ""),
                            calls.get(result.tool_call_id, {}),
                        )
                    )
        return items

    # -- the model's profile --------------------------------------------------------------

    def profile(self) -> CapacityProfile | None:
        """The bound model's profile as the next request would be planned against it."""
        binding = self.binding
        if binding is None:
            return None
        return capacity_profile_for(binding, self.chain(), utc_now(), store=self._ledger.profiles())

    def provenance(self) -> Provenance | None:
        binding = self.binding
        profile = self.profile()
        if binding is None or profile is None:
            return None
        store = self._ledger.profiles()
        quantisation = binding.details.quantisation if binding.details else ""
        stored = store.latest(binding.provider, binding.model, quantisation)
        activity = stored.activity if stored else None
        baseline = stored.profile if stored else profile
        for entry in reversed(self.chain()):  # a newer probe the session caught up with
            payload = entry.payload
            if (
                isinstance(payload, Activity)
                and payload.type == PROBE_ACTIVITY
                and payload.detail.get("model") == binding.model
            ):
                if activity is None or str(payload.detail.get("probed_at", "")) > str(
                    activity.detail.get("probed_at", "")
                ):
                    activity = payload
                break
        since = str(baseline.provenance.get("probed_at") or "")
        feedback, receipts = [], 0
        total = 0
        for entry in self.chain():
            payload = entry.payload
            if isinstance(payload, Receipt) and payload.model == binding.model:
                total += 1
            if entry.created_at <= since:
                continue
            if isinstance(payload, Receipt) and payload.model == binding.model:
                receipts += 1
            elif (
                isinstance(payload, Activity)
                and payload.type in FEEDBACK_TYPES
                and payload.detail.get("model") == binding.model
            ):
                feedback.append((entry.created_at, payload.type, payload.message))
        horizon = baseline.instruction_horizon.tokens
        above = followed_above(self.chain(), binding.model, since, horizon)
        return Provenance(profile, baseline, activity, feedback, receipts, total, above)

    def measured(self) -> bool:
        profile = self.profile()
        return profile is not None and is_probed(profile)

    # -- updates --------------------------------------------------------------------------

    def refresh(self) -> None:
        """Forget what was read and tell the views (the gauge is recomputed)."""
        self._session_changed()

    def _session_changed(self, *_args: object) -> None:
        self._chain = None
        view = self.latest_plan() if self.session else None
        self._set_gauge(view)
        self.changed.emit()

    def _step_finished(self, event: StepFinished) -> None:
        self._chain = None
        receipt = event.receipt
        if recorded_plan(receipt):
            view = PlanView(
                "",
                receipt.model,
                receipt.plan,
                {},
                receipt.usage.prompt_tokens(),
                measured=True,
            )
            self._set_gauge(view)
        elif self._gauge is not None and receipt.usage.prompt_tokens():
            gauge = self._gauge
            self._gauge = Gauge(
                gauge.model,
                gauge.horizon,
                receipt.usage.prompt_tokens(),
                gauge.full,
                gauge.card,
                gauge.packet,
                True,
                gauge.planned_horizon,
                gauge.prefix_tokens,
            )
            self.gaugeChanged.emit(self._gauge)
        self.changed.emit()

    def _set_gauge(self, view: PlanView | None) -> None:
        if view is None:
            profile = self.profile()
            self._gauge = (
                Gauge(profile.model, usable_horizon(profile), 0, 0, 0, 0, False)
                if profile is not None
                else None
            )
        else:
            # the horizon the next request is planned against: a probe that ended since the
            # last request moves it at once, not a turn later
            profile = self.profile()
            horizon = usable_horizon(profile) if profile is not None else 0
            budget = view.plan.get("budget") or {}
            planned = int(budget.get("horizon") or 0)
            if profile is not None and horizon < planned <= usable_horizon(profile, tool_free=True):
                horizon = planned  # a tool-free turn, planned to the answer-from-memory horizon
            self._gauge = Gauge(
                view.model,
                horizon or planned,
                view.last_tokens or view.request_tokens,
                view.count("full"),
                view.count("card"),
                view.count("packet"),
                view.measured,
                planned,
                int(budget.get("prefix_tokens") or 0),
            )
        self.gaugeChanged.emit(self._gauge)
