"""The status bar: the bound model and its horizon, the context gauge, and the server.

The gauge is this request's tokens against the horizon the planner used, with how many earlier
turns travelled Full, as a Card, or inside the packet. After a step it shows what the provider
counted (from the Receipt); before the first request of a session it shows the planner's
estimate for the next one (`preview_next`), marked "≈". A turn's own tokens and outcome are
shown on its message in the chat, so they are not repeated here (the bar has to fit 1,100 px).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QToolButton, QWidget

from vak_desktop.context.capacity.profile import usable_horizon
from vak_desktop.runtime import ModelBinding
from vak_desktop.runtime.capacity.probe import ProbeProgress
from vak_desktop.runtime.events import CompactionProgress
from vak_desktop.ui.chat.chat_service import Reachability
from vak_desktop.ui.inspector.horizon_words import DECLARED, STOPPED, UNDECIDED, probe_state
from vak_desktop.ui.inspector.source import Gauge, Inspection

GAUGE_WIDTH = 110
STATE_TIPS = {
    DECLARED: "Not measured yet: the window the model declares. ",
    UNDECIDED: (
        "The capacity probe was undecided (it confirmed no size): the horizon is the one the "
        "model had, or the window it declares, at low confidence; it is probed again when the "
        "machine is idle. "
    ),
    STOPPED: "The capacity probe stopped before it finished: the largest size it confirmed. ",
}


def gauge_text(gauge: Gauge) -> str:
    """'≈1,234 / 5,900 tokens' plus the fidelities, as the gauge's label says it."""
    approx = "" if gauge.measured else "≈"
    return f"{approx}{gauge.request_tokens:,} / {gauge.horizon:,} tokens"


def fidelity_text(gauge: Gauge) -> str:
    return f"{gauge.full} Full · {gauge.card} Card · {gauge.packet} packet"


class StatusBar(QStatusBar):
    """Shows the inspection's gauge and the service's model and server state."""

    pauseRequested = Signal(str)  # the model whose probe the user paused
    resumeRequested = Signal(str)  # the model whose paused probe the user resumed
    compactionStopRequested = Signal()  # the user stopped "Compact now"

    def __init__(self, inspection: Inspection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusBar")
        self.setAccessibleName("Status")
        self.setSizeGripEnabled(False)
        self._inspection = inspection
        self.probing = ""  # the model being measured, '' when none
        self.model_status = QLabel()
        self.model_status.setObjectName("modelStatus")
        self.model_status.setAccessibleName("Bound model and its horizon")
        self.gauge = QProgressBar()
        self.gauge.setObjectName("contextGauge")
        self.gauge.setAccessibleName("Context gauge")
        self.gauge.setFixedWidth(GAUGE_WIDTH)
        self.gauge.setTextVisible(False)
        self.gauge.setMaximumHeight(10)
        self.gauge_label = QLabel()
        self.gauge_label.setObjectName("gaugeLabel")
        self.gauge_label.setAccessibleName("Context used by this request")
        self.host_status = QLabel()
        self.host_status.setObjectName("hostStatus")
        self.host_status.setAccessibleName("Model server")
        self.probe_status = QLabel()
        self.probe_status.setObjectName("probeStatus")
        self.probe_status.setAccessibleName("Capacity probe running")
        self.probe_pause = QToolButton()
        self.probe_pause.setText("Pause")
        self.probe_pause.setAccessibleName("Pause the capacity probe")
        self.probe_pause.setToolTip(
            "Pause measuring now: the rungs measured so far are kept, and Resume continues "
            "from the next one"
        )
        self.probe_pause.clicked.connect(self._pause)
        self.paused = ""  # the model whose probe is paused, '' when none
        self.probe_resume = QToolButton()
        self.probe_resume.setText("Resume")
        self.probe_resume.setAccessibleName("Resume the capacity probe")
        self.probe_resume.setToolTip("Continue measuring from the next rung")
        self.probe_resume.clicked.connect(self._resume)
        self._build_compaction()
        for widget in (
            self.compact_status,
            self.compact_bar,
            self.compact_stop,
            self.probe_status,
            self.probe_pause,
            self.probe_resume,
            self.model_status,
            self.gauge,
            self.gauge_label,
            self.host_status,
        ):
            self.addPermanentWidget(widget)
        inspection.gaugeChanged.connect(self.show_gauge)
        self.show_gauge(inspection.gauge)
        self.show_probe("", None)
        self.show_compaction(None)

    # -- compaction -----------------------------------------------------------------------

    def _build_compaction(self) -> None:
        self.compacting = False  # "Compact now" is writing: its line takes the gauge label's room
        self.compact_status = QLabel()
        self.compact_status.setObjectName("compactStatus")
        self.compact_status.setAccessibleName("Compaction running")
        self.compact_bar = QProgressBar()
        self.compact_bar.setObjectName("compactProgress")
        self.compact_bar.setAccessibleName("Summariser calls done")
        self.compact_bar.setFixedWidth(GAUGE_WIDTH // 2)
        self.compact_bar.setTextVisible(False)
        self.compact_bar.setMaximumHeight(10)
        self.compact_stop = QToolButton()
        self.compact_stop.setText("Stop")
        self.compact_stop.setAccessibleName("Stop compacting")
        self.compact_stop.setToolTip("Stop writing the summary; nothing half-written is kept")
        self.compact_stop.clicked.connect(self.compactionStopRequested.emit)

    def show_compaction(self, progress: CompactionProgress | None) -> None:
        """'compacting turns 1–40: call 2 of 3 · 12 s' while "Compact now" writes (None: it
        ended); the bar counts the calls done, the tooltip names the call's own turns."""
        running = progress is not None
        for widget in (self.compact_status, self.compact_bar, self.compact_stop):
            widget.setVisible(running)
        if running != self.compacting:
            self.compacting = running
            self.show_gauge(self._inspection.gauge)
        if progress is None:
            return
        self.compact_status.setText(
            f"compacting turns {progress.span}: call {progress.call} of {progress.calls} · "
            f"{progress.elapsed_s:.0f} s"
        )
        self.compact_bar.setRange(0, progress.calls)
        self.compact_bar.setValue(progress.call - 1)
        self.compact_status.setToolTip(
            f"Writing the context packet over turns {progress.span}: summariser call "
            f"{progress.call} of {progress.calls} (turns {progress.chunk}), "
            f"{progress.written_chars:,} characters written so far"
        )

    # -- probe ----------------------------------------------------------------------------

    def show_probe(self, model: str, progress: ProbeProgress | None) -> None:
        """'measuring MODEL… rung k' while a probe runs (None: it ended)."""
        running = progress is not None
        was = self.probing
        self.probing = model if running else ""
        if running:
            self.paused = ""
        if bool(was) != running:
            self.show_gauge(self._inspection.gauge)
        # the probe's line names the model; the bound model's own line makes room for it
        binding = self._inspection.binding
        self.model_status.setVisible(not (running and binding and binding.model == model))
        self.probe_status.setVisible(running or bool(self.paused))
        self.probe_pause.setVisible(running)
        self.probe_resume.setVisible(not running and bool(self.paused))
        if progress is not None:
            what = " (answer from memory)" if progress.task == "memory" else ""
            self.probe_status.setText(f"measuring {model}… rung {progress.rung}{what}")
            self.probe_status.setToolTip(
                f"Capacity probe: rung {progress.rung} ({progress.phase}), "
                f"{progress.tokens:,} tokens, sample {progress.sample}"
            )

    def _pause(self) -> None:
        if self.probing:
            self.pauseRequested.emit(self.probing)

    def show_paused(self, model: str, words: str) -> None:
        """'probe of MODEL paused after 3 rungs' with Resume, until it resumes ('' words: the
        paused state ended)."""
        was, self.paused = self.paused, model if words else ""
        if bool(was) != bool(self.paused):
            self.show_gauge(self._inspection.gauge)  # its fidelities make room for the line
        self.probe_status.setVisible(bool(words))
        self.probe_resume.setVisible(bool(words))
        self.probe_pause.hide()
        # as while it runs, the probe's line names the model and the model's own line yields
        binding = self._inspection.binding
        self.model_status.setVisible(not (words and binding and binding.model == model))
        if words:
            self.probe_status.setText(f"probe of {model} {words}")
            self.probe_status.setToolTip(
                "The capacity probe is paused: the rungs it measured are kept; Resume "
                "continues from the next one"
            )

    def _resume(self) -> None:
        if self.paused:
            model = self.paused
            self.show_paused(model, "")
            self.resumeRequested.emit(model)

    # -- model ----------------------------------------------------------------------------

    def show_model(self, model: str) -> None:
        self.model_status.setText(f"Model: {model}" if model else "No model selected")
        self.model_status.setToolTip("")

    def show_binding(self, binding: ModelBinding) -> None:
        profile = self._inspection.profile()
        if profile is None:
            self.show_model(binding.model)
            return
        horizon = usable_horizon(profile)
        how = probe_state(profile)
        self.model_status.setText(f"{binding.model} · horizon {horizon:,} ({how})")
        window = binding.declared_window
        self.model_status.setToolTip(
            STATE_TIPS.get(how, "Measured by the capacity probe. ")
            + f"Instruction horizon {profile.instruction_horizon.tokens:,} tokens, confidence "
            f"{profile.instruction_horizon.confidence:.1f}"
            + (f"; trained window {window:,}" if window else "")
            + (f"; verified window {profile.verified_window:,}" if profile.verified_window else "")
        )

    # -- gauge ----------------------------------------------------------------------------

    def show_gauge(self, gauge: Gauge | None) -> None:
        if gauge is None or gauge.horizon <= 0:
            self.gauge.hide()
            self.gauge_label.clear()
            self.gauge_label.hide()
            return
        self.gauge.show()
        self.gauge_label.setVisible(not self.compacting)
        self.gauge.setRange(0, gauge.horizon)
        self.gauge.setValue(min(gauge.request_tokens, gauge.horizon))
        # over 100 %: never without saying why (issue #25 item 3), in the label's short form
        short, whole = gauge.over()
        # while a probe's line shows, the fidelities go to the tooltip: the bar has 1,100 px
        fidelities = "" if self.probing or self.paused or short else f" · {fidelity_text(gauge)}"
        over = f" · over: {short}" if short else ""
        self.gauge_label.setText(gauge_text(gauge) + over + fidelities)
        share = gauge.request_tokens / gauge.horizon
        source = (
            "counted by the provider for the last request"
            if gauge.measured
            else "estimated for the next request"
        )
        self.gauge.setAccessibleDescription(f"{share:.0%} of the horizon, {source}")
        tip = (
            f"{gauge.request_tokens:,} tokens ({share:.0%} of the {gauge.horizon:,}-token "
            f"horizon), {source}."
            + (f"\nOver the horizon because {whole}." if whole else "")
            + f"\nEarlier turns: {fidelity_text(gauge)}."
        )
        if whole:
            self.gauge.setAccessibleDescription(
                f"{share:.0%} of the horizon, {source}; over it because {whole}"
            )
        self.gauge.setToolTip(tip)
        self.gauge_label.setToolTip(tip)

    # -- server ---------------------------------------------------------------------------

    def show_reachability(self, state: Reachability) -> None:
        words = {"reachable": "connected", "unreachable": "not reachable", "checking": "checking…"}
        self.host_status.setText(f"Ollama {words.get(state.state, '…')}")
        self.host_status.setToolTip(state.host + (f"\n{state.reason}" if state.reason else ""))

    def show_whole(self, message: str, timeout_ms: int = 10_000) -> bool:
        """Show `message` only if it fits whole in the room the permanent widgets leave; else
        show nothing (the notice line above the composer holds it whole). True if shown."""
        shown = [w for w in self.findChildren(QWidget) if w.parent() is self and w.isVisible()]
        taken = sum(w.width() for w in shown) + 12 * (len(shown) + 1)  # spacing and margins
        fits = self.fontMetrics().horizontalAdvance(message) <= self.width() - taken
        if fits:
            self.showMessage(message, timeout_ms)
        else:
            self.clearMessage()
        return fits
