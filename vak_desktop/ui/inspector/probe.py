"""The Probe panel: where the bound model's profile comes from.

When it was measured, each rung of the ladder with its samples and verdict, the timings, the
verified window, the cache behaviour — all from the `capacity_probe` Activity — and what the
session's turns have taught the profile since (its receipts and feedback Activities), so the
horizon in the status bar can be traced back to the requests that established it.

It never trusts a probe that decided nothing (issue #25 item 3): an undecided probe is shown
as undecided, with the horizon the planner keeps instead; a rung a probe left undecided is a
row of its own; and a tool call the model made in a request above the stored horizon is
listed as evidence against it — "nothing contradicted it" is said only when nothing did.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QFormLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.context.capacity.probe_result import HORIZON_FROM
from vak_desktop.context.capacity.profile import tokens_per_char, usable_horizon
from vak_desktop.ui.inspector.horizon_words import (
    PAUSED,
    STOPPED,
    UNDECIDED,
    probe_state,
)
from vak_desktop.ui.inspector.source import Inspection, Provenance

RUNG_COLUMNS = ("#", "Phase", "Tokens", "num_ctx", "Samples", "Verdict", "Prefill ms", "Wall ms")
FEEDBACK_COLUMNS = ("When", "What", "Detail")
CACHE_WORDS = {
    "prefix_stable": "prefix cache hits (second identical request prefilled ≥5× faster)",
    "provider_reported": "the provider reports cached tokens",
    "none": "no prefix cache seen",
}
FEEDBACK_WORDS = {
    "context_overflow": "refused as too long",
    "silent_truncation": "silently cut by the server",
    "instruction_failed": "an explicit instruction was not followed",
    "followed_above": "followed above the horizon",
}
STATE_WORDS = {
    UNDECIDED: (
        "the probe was undecided. It confirmed no size, so it stored no horizon of its own: "
        "requests are planned against the horizon the model had, the size it answered from "
        "memory at, or the window it declares, never above the largest size its tool task "
        "was tried at"
    ),
    PAUSED: "the probe is paused. Resume continues from its next rung",
    STOPPED: (
        "the probe stopped before it finished. The horizon is the largest size it confirmed; "
        "the rest is retried when the machine is idle"
    ),
}


def _ms(ns: Any) -> str:
    return f"{int(ns) / 1e6:,.0f}" if ns else "—"


def _when(stamp: str) -> str:
    return stamp.replace("T", " ")[:16] + " UTC" if stamp else "—"


def sample_marks(rung: dict[str, Any]) -> str:
    """✓ / ✗ per sample, '(text)' when the call was written as text, '!' for a refusal."""
    marks = []
    for sample in rung.get("sample_detail", []) or [{"followed": s} for s in rung["samples"]]:
        if sample.get("overflow"):
            marks.append("refused")
        elif sample.get("error"):
            marks.append("error")
        elif sample.get("cancelled"):
            marks.append("cut")
        else:
            mark = "✓" if sample.get("followed") else "✗"
            marks.append(mark + (" (text)" if sample.get("as_text") else ""))
    return "  ".join(marks)


def _verdict(followed: object) -> str:
    if followed is None:
        return "undecided"
    return "followed" if followed else "not followed"


def _cell(text: str, right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _table(columns: tuple[str, ...], name: str) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setAccessibleName(name)
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
    table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
    return table


class ProbePanel(QWidget):
    """Shows the inspection's `Provenance` of the bound model."""

    def __init__(self, inspection: Inspection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._inspection = inspection
        self.provenance: Provenance | None = None
        self.state = ""  # probe_state of the shown profile
        self.heading = QLabel()
        self.heading.setObjectName("inspectorHeading")
        self.heading.setAccessibleName("Probe heading")
        self.heading.setWordWrap(True)
        self.facts: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(3)
        for key, label in (
            ("horizon", "Instruction horizon"),
            ("memory", "Answer from memory"),
            ("windows", "Windows"),
            ("ratio", "Tokens per char"),
            ("prefill", "Prefill"),
            ("cache", "Cache"),
            ("cost", "Probe cost"),
        ):
            value = QLabel()
            value.setAccessibleName(label)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.facts[key] = value
            name = QLabel(label)
            name.setObjectName("fieldLabel")
            name.setAccessibleName(f"{label} label")
            form.addRow(name, value)
        self.rungs_title = QLabel("<b>Ladder</b>")
        self.rungs_title.setAccessibleName("Ladder title")
        self.rungs = _table(RUNG_COLUMNS, "Rungs of the probe ladder")
        self.rungs.setObjectName("probeRungs")
        self.feedback_title = QLabel()
        self.feedback_title.setAccessibleName("Feedback title")
        self.feedback_title.setWordWrap(True)
        self.feedback = _table(FEEDBACK_COLUMNS, "Feedback since the probe")
        self.feedback.setObjectName("probeFeedback")
        self.empty = QLabel()
        self.empty.setObjectName("emptyNote")
        self.empty.setAccessibleName("Probe panel note")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.body = QWidget()
        self.body.setAccessibleName("Profile provenance")
        inner = QVBoxLayout(self.body)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.setSpacing(8)
        inner.addWidget(self.heading)
        inner.addLayout(form)
        # what this chat says about the horizon before the ladder, which can run long
        inner.addWidget(self.feedback_title)
        inner.addWidget(self.feedback)
        inner.addWidget(self.rungs_title)
        inner.addWidget(self.rungs)
        inner.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.empty, 1)

    def reload(self) -> None:
        provenance = self._inspection.provenance()
        self.provenance = provenance
        self.body.setVisible(provenance is not None)
        self.empty.setVisible(provenance is None)
        if provenance is None:
            self.empty.setText("Pick a model to see how its capacity was measured.")
            return
        profile, activity = provenance.profile, provenance.activity
        detail = activity.detail if activity else {}
        probed = profile.provenance.get("source") == "probe" or bool(activity)
        state = probe_state(provenance.baseline, detail)
        self.state = state if probed else "declared"
        if probed:
            when = _when(str(detail.get("probed_at", "")))
            words = STATE_WORDS.get(state)
            self.heading.setText(
                f"<b>{profile.model}</b> was probed on {when}; {words}."
                if words
                else f"<b>{profile.model}</b> was measured by the capacity probe on {when}."
            )
        else:
            self.heading.setText(
                f"<b>{profile.model}</b> has not been measured yet: requests are planned against "
                "the window it declares. The probe runs in the background while the model is idle."
            )
        horizon = profile.instruction_horizon
        kept = " — undecided, not measured by this probe" if state == UNDECIDED else ""
        source = str(profile.provenance.get("horizon_from"))
        if kept and source in HORIZON_FROM:
            kept += f" ({HORIZON_FROM[source]})"
        self.facts["horizon"].setText(
            f"{horizon.tokens:,} tokens (confidence {horizon.confidence:.1f}){kept}; the "
            f"planner uses {usable_horizon(profile):,}"
            + (" — the model followed at no size tried" if detail.get("rescue") else "")
        )
        memory = profile.memory_horizon
        self.facts["memory"].setText(
            f"{memory.tokens:,} tokens (confidence {memory.confidence:.1f}); a turn that asks "
            f"for no tool is planned to {usable_horizon(profile, tool_free=True):,}"
            if memory is not None
            else "not measured"
        )
        verified = (
            f"verified {profile.verified_window:,}" if profile.verified_window else "none refused"
        )
        self.facts["windows"].setText(
            f"trained {profile.declared_window:,} · {verified} · num_ctx {profile.num_ctx:,}"
            if profile.num_ctx
            else f"trained {profile.declared_window:,} · {verified}"
        )
        base_ratio = tokens_per_char(provenance.baseline)
        now_ratio = tokens_per_char(profile)
        ratio = f"{now_ratio:.3f}"
        if provenance.receipts and abs(now_ratio - base_ratio) > 1e-9:
            ratio += f" (probe {base_ratio:.3f}, refined by {provenance.receipts} receipts)"
        self.facts["ratio"].setText(ratio)
        prefill = profile.prefill_tps
        self.facts["prefill"].setText(
            f"{prefill.value:,.0f} tokens/s over {prefill.samples} cold requests"
            if prefill.samples
            else "not measured"
        )
        self.facts["cache"].setText(CACHE_WORDS.get(profile.cache, profile.cache))
        self.facts["cost"].setText(
            f"{detail.get('requests', 0)} requests, {int(detail.get('prompt_tokens', 0)):,} "
            f"prompt tokens, {int(detail.get('wall_ns', 0)) / 1e9:,.1f} s"
            if activity
            else "—"
        )
        rungs = list(detail.get("rungs", []))
        rungs += [
            r | {"phase": "memory " + str(r.get("phase", ""))}
            for r in detail.get("memory_rungs", [])
        ]
        stopped = detail.get("stopped")
        if isinstance(stopped, dict) and isinstance(stopped.get("undecided"), dict):
            rungs.append(stopped["undecided"])  # the rung it left without a verdict
        self._fill_rungs(rungs)
        self._fill_feedback(provenance)

    def _fill_rungs(self, rungs: list[dict[str, Any]]) -> None:
        self.rungs.setRowCount(len(rungs))
        self.rungs_title.setVisible(bool(rungs))
        self.rungs.setVisible(bool(rungs))
        for row, rung in enumerate(rungs):
            samples = rung.get("sample_detail", [])
            prefill = [s.get("prompt_eval_ns", 0) for s in samples if s.get("prompt_eval_ns")]
            wall = sum(int(s.get("wall_ns", 0)) for s in samples)
            cells = [
                _cell(str(row + 1), right=True),
                _cell(str(rung.get("phase", ""))),
                _cell(f"{int(rung['tokens']):,}", right=True),
                _cell(f"{int(rung.get('num_ctx', 0)):,}", right=True),
                _cell(sample_marks(rung)),
                _cell(_verdict(rung.get("followed"))),
                _cell(" · ".join(_ms(ns) for ns in prefill) or "—", right=True),
                _cell(_ms(wall), right=True),
            ]
            for column, cell in enumerate(cells):
                self.rungs.setItem(row, column, cell)

    def _nothing_against(self) -> str:
        if self.state == UNDECIDED:
            return "no measured horizon to contradict"
        return "nothing contradicted it"

    def _fill_feedback(self, provenance: Provenance) -> None:
        rows = list(provenance.feedback)
        rows += [(a.when, "followed_above", a.words()) for a in provenance.above]
        rows.sort(key=lambda row: row[0])
        said = []
        if provenance.feedback:
            n = len(provenance.feedback)
            said.append(f"{n} contradiction{'s' if n != 1 else ''}")
        if provenance.above:
            largest = max(a.tokens for a in provenance.above)
            said.append(f"the model called a tool at {largest:,} tokens, above the horizon")
        self.feedback_title.setText(
            f"<b>This chat</b>: {provenance.receipts_total} receipts of this model, "
            f"{provenance.receipts} since the probe, "
            + ("; ".join(said) if said else self._nothing_against())
        )
        self.feedback.setRowCount(len(rows))
        self.feedback.setVisible(bool(rows))
        for row, (when, kind, message) in enumerate(rows):
            self.feedback.setItem(row, 0, _cell(_when(when)))
            self.feedback.setItem(row, 1, _cell(FEEDBACK_WORDS.get(kind, kind)))
            self.feedback.setItem(row, 2, _cell(message))
