"""The model manager: local models, what is loaded, pull / delete / unload, keep_alive, probe.

A dialog over one `ModelsController`. The table lists every local model with its size, family,
quantisation, capabilities, trained window, whether it is loaded (and until when) and its
measured instruction horizon; the pane under it shows the selected model's measured profile
and its actions; `PullPanel` (ui/models/pull_panel.py, shared with onboarding) pulls by name. Nothing here waits: every action is a task of the controller, and the views
follow its signals. `render_mid_pull` puts the manager in a mid-pull state for screenshots.
Beside Ollama's models, a "Built-in engine" tab holds the model catalogue (`CataloguePanel`):
models downloaded there run on the embedded llama.cpp engine.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.runtime.capacity.probe import ProbeProgress
from vak_desktop.runtime.providers.models import ModelRow, PullState
from vak_desktop.ui.models.catalogue_panel import CataloguePanel
from vak_desktop.ui.models.downloads_controller import DownloadsController
from vak_desktop.ui.models.models_controller import (
    CANCELLED,
    ENDED,
    PAUSED,
    SUCCEEDED,
    ModelsController,
)
from vak_desktop.ui.models.pull_panel import PullPanel, human_size

COLUMNS = (
    "Model",
    "Size",
    "Family",
    "Quant.",
    "Capabilities",
    "Trained window",
    "Loaded",
    "Measured horizon",
)
KEEP_ALIVE_CHOICES = ("5m", "30m", "1h", "4h", "24h", "-1")


def loaded_until(expires_at: str, now: datetime | None = None) -> str:
    """ "until 14:32 (in 23 min)" for an Ollama expiry time; "for ever" for a far one."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", expires_at.strip())  # Go writes nanoseconds
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return "loaded"
    now = now or datetime.now(UTC)
    minutes = (when - now).total_seconds() / 60
    if minutes > 60 * 24 * 365:
        return "kept loaded"
    local = when.astimezone()
    if minutes < 1:
        return f"until {local:%H:%M} (under a minute)"
    span = f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
    return f"until {local:%H:%M} (in {span})"


def _profile_words(row: ModelRow, probing: bool = False) -> dict[str, str]:
    p = row.profile
    if probing:
        return {"Measured": "measuring now: requests use the declared window until it ends"}
    if p is None:
        return {"Measured": "not yet: requests use the declared window until a probe runs"}
    words = {
        "Instruction horizon": f"{p.horizon:,} tokens (confidence {p.confidence:.1f})",
        "Prefill": f"{p.prefill_tps:,.0f} tokens/s" if p.prefill_tps else "not measured",
        "Prefix cache": {"prefix_stable": "hits", "provider_reported": "reported by provider"}.get(
            p.cache, "no hits seen"
        ),
        "Verified window": f"{p.verified_window:,} tokens (a refusal)"
        if p.verified_window
        else "no over-length refusal seen",
    }
    if p.num_ctx:
        words["Runner window"] = f"{p.num_ctx:,} tokens"
    words["Probed"] = p.probed_at.replace("T", " ")[:16] + " UTC" if p.probed_at else "—"
    return words


class ModelManager(QDialog):
    """Local models and what can be done with them, over one `ModelsController`."""

    def __init__(
        self,
        controller: ModelsController,
        parent: QWidget | None = None,
        downloads: DownloadsController | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setAccessibleName("Model manager")
        self.resize(980, 640)
        self.controller = controller
        self.confirmation: QMessageBox | None = None
        title = QLabel("Models")
        title.setObjectName("dialogTitle")
        self.where = QLabel(f"on {controller.host}")
        self.where.setObjectName("hint")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setAccessibleName("Refresh model list")
        self.refresh_button.clicked.connect(controller.refresh)
        header = QHBoxLayout()
        header.addWidget(title)
        header.addWidget(self.where, 1, Qt.AlignmentFlag.AlignBottom)
        header.addWidget(self.refresh_button)

        self.pull = PullPanel(controller)
        pull_title = QLabel("Pull a model from the Ollama library")
        pull_title.setObjectName("sectionTitle")
        self.models_title = QLabel("On this computer")
        self.models_title.setObjectName("sectionTitle")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setAccessibleName("Local models")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        heads = self.table.horizontalHeader()
        heads.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        heads.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.empty = QLabel("No models yet: pull one above.")
        self.empty.setObjectName("hint")
        self.message = QLabel()
        self.message.setObjectName("fieldError")
        self.message.setWordWrap(True)
        self.message.hide()

        outer = QVBoxLayout(self)
        outer.setContentsMargins(18, 16, 18, 16)
        outer.setSpacing(10)
        outer.addLayout(header)
        ollama = QWidget()
        layout = QVBoxLayout(ollama)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(10)
        layout.addWidget(pull_title)
        layout.addWidget(self.pull)
        layout.addSpacing(4)
        layout.addWidget(self.models_title)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.empty)
        layout.addWidget(self._detail_pane(), 2)
        self.tabs = QTabWidget()
        self.tabs.addTab(ollama, "Ollama")
        self.catalogue: CataloguePanel | None = None
        if downloads is not None:  # the catalogue, for the embedded llama.cpp engine
            self.catalogue = CataloguePanel(downloads)
            self.tabs.addTab(self.catalogue, "Built-in engine")
        outer.addWidget(self.tabs, 1)

        controller.modelsChanged.connect(self.show_rows)
        controller.refreshFailed.connect(self._problem)
        controller.operationFailed.connect(self._problem)
        controller.probeProgress.connect(self._probe_progress)
        controller.probeFinished.connect(self._probe_finished)
        controller.keepAliveChanged.connect(self._keep_alive_changed)
        self.show_rows(controller.rows)

    def _detail_pane(self) -> QFrame:
        pane = QFrame()
        pane.setObjectName("card")
        self.detail_title = QLabel()
        self.detail_title.setObjectName("sectionTitle")
        self.profile_form = QFormLayout()
        self.profile_form.setVerticalSpacing(4)
        self.keep_alive = QComboBox()
        self.keep_alive.setEditable(True)
        self.keep_alive.setAccessibleName("Keep alive for this model")
        self.keep_alive.setToolTip("Sent with every request for this model; -1 keeps it loaded")
        self.keep_alive.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.keep_alive.activated.connect(self._keep_alive_chosen)
        # Enter, not focus-out: a dialog being destroyed takes the focus away too
        editor = self.keep_alive.lineEdit()
        assert editor is not None  # an editable combo box has one
        editor.returnPressed.connect(self._keep_alive_chosen)
        self.keep_alive_hint = QLabel()
        self.keep_alive_hint.setObjectName("hint")
        self.unload_button = QPushButton("Unload now")
        self.unload_button.setAccessibleName("Unload model now")
        self.unload_button.clicked.connect(self._unload)
        self.probe_button = QPushButton("Probe now")
        self.probe_button.setAccessibleName("Probe model now")
        self.probe_button.clicked.connect(self._probe)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("dangerButton")
        self.delete_button.setAccessibleName("Delete model")
        self.delete_button.clicked.connect(self.ask_delete)
        self.probe_bar = QProgressBar()
        self.probe_bar.setRange(0, 0)
        self.probe_bar.setAccessibleName("Probe progress")
        self.probe_bar.setMaximumWidth(160)
        self.probe_status = QLabel()
        self.probe_status.setObjectName("hint")
        self.probe_status.setWordWrap(True)
        keep = QHBoxLayout()
        keep.addWidget(QLabel("Keep loaded for"))
        keep.addWidget(self.keep_alive)
        keep.addWidget(self.keep_alive_hint, 1)
        actions = QHBoxLayout()
        for button in (self.unload_button, self.probe_button, self.delete_button):
            actions.addWidget(button)
        actions.addWidget(self.probe_bar)
        actions.addWidget(self.probe_status, 1)
        layout = QVBoxLayout(pane)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.addWidget(self.detail_title)
        layout.addLayout(self.profile_form)
        layout.addLayout(keep)
        layout.addLayout(actions)
        self.detail = pane
        return pane

    # -- table ------------------------------------------------------------------------------

    def show_rows(self, rows: list[ModelRow]) -> None:
        keep = self.selected()
        self.message.hide()
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            s = row.summary
            loaded = loaded_until(row.loaded.expires_at) if row.loaded else ""
            horizon = f"{row.profile.horizon:,}" if row.profile else "not measured"
            if self.controller.probing(row.name):
                horizon = "measuring…"
            window = f"{row.trained_window:,}" if row.trained_window else "?"
            caps = ", ".join(c for c in row.capabilities if c != "completion")
            cells = (s.name, human_size(s.size), s.family, s.quantisation, caps, window)
            for c, text in enumerate((*cells, loaded, horizon)):
                item = QTableWidgetItem(text)
                if c in (1, 5, 7):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(r, c, item)
        self.empty.setVisible(not rows)
        names = [row.name for row in rows]
        self.table.selectRow(names.index(keep) if keep in names else 0)
        self._show_selected()

    def selected(self) -> str:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not rows:
            return ""
        item = self.table.item(rows[0].row(), 0)
        return item.text() if item is not None else ""

    def _row(self, name: str) -> ModelRow | None:
        return next((r for r in self.controller.rows if r.name == name), None)

    def _show_selected(self) -> None:
        name = self.selected()
        row = self._row(name)
        self.detail.setVisible(row is not None)
        if row is None:
            return
        where = "loaded " + loaded_until(row.loaded.expires_at) if row.loaded else "not loaded"
        self.detail_title.setText(f"{name} · {where}")
        while self.profile_form.rowCount():
            self.profile_form.removeRow(0)
        for label, text in _profile_words(row, self.controller.probing(name)).items():
            value = QLabel(text)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.profile_form.addRow(label, value)
        self.unload_button.setEnabled(row.loaded is not None)
        probing = self.controller.probing(name)
        self.probe_button.setEnabled(not probing)
        self.probe_bar.setVisible(probing)
        self._fill_keep_alive(name)

    def _fill_keep_alive(self, name: str) -> None:
        default = self.controller.settings.settings.keep_alive
        own = self.controller.has_own_keep_alive(name)
        blocked = self.keep_alive.blockSignals(True)
        self.keep_alive.clear()
        self.keep_alive.addItem(f"default ({default})", None)
        for choice in KEEP_ALIVE_CHOICES:
            self.keep_alive.addItem("for ever (-1)" if choice == "-1" else choice, choice)
        if own:
            value = self.controller.keep_alive_for(name)
            index = self.keep_alive.findData(value)
            if index < 0:
                self.keep_alive.addItem(value, value)
                index = self.keep_alive.count() - 1
            self.keep_alive.setCurrentIndex(index)
        else:
            self.keep_alive.setCurrentIndex(0)
        self.keep_alive.blockSignals(blocked)
        self.keep_alive_hint.setText("sent with every request; applies from the next one")

    def _keep_alive_changed(self, _model: str, _value: str) -> None:
        self._show_selected()

    def _keep_alive_chosen(self) -> None:
        name = self.selected()
        if not name:
            return
        text = self.keep_alive.currentText().strip()
        index = self.keep_alive.findText(text)
        value = self.keep_alive.itemData(index) if index >= 0 else text
        if value is None and text.startswith("default"):
            self.set_keep_alive(name, None)
        else:
            self.set_keep_alive(name, value or text)

    def set_keep_alive(self, model: str, value: str | None) -> bool:
        """Give `model` its own keep_alive (None: the default); errors show inline."""
        if self.controller.keep_alive_for(model) == value and self.controller.has_own_keep_alive(
            model
        ):
            return True
        return self.controller.set_keep_alive(model, value)

    def _unload(self) -> None:
        if name := self.selected():
            self.controller.unload(name)

    def _probe(self) -> None:
        if name := self.selected():
            self.controller.probe(name)
            self.probe_button.setEnabled(False)
            self.probe_bar.show()
            self.probe_status.setText(f"Probing {name}: loading the model…")

    # -- delete -----------------------------------------------------------------------------

    def ask_delete(self) -> QMessageBox | None:
        """Ask before deleting the selected model (non-blocking; `confirmation` holds it)."""
        name = self.selected()
        if not name:
            return None
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete model")
        box.setText(f"Delete {name} from this computer?")
        box.setInformativeText(
            "Its files are removed from Ollama. Chats that used it stay in the ledger; "
            "pull it again to use it."
        )
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAccessibleName("Confirm delete")

        def answered() -> None:
            if box.clickedButton() is delete:
                self.controller.delete(name)
            self.confirmation = None

        box.finished.connect(answered)
        self.confirmation = box
        box.open()
        return box

    # -- progress and problems --------------------------------------------------------------

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def _probe_progress(self, model: str, progress: ProbeProgress) -> None:
        names = [self._cell(r, 0) for r in range(self.table.rowCount())]
        if model in names and self._cell(names.index(model), 7) != "measuring…":
            self.show_rows(self.controller.rows)  # the table says it is being measured
        if model != self.selected():
            return
        verdict = "followed" if progress.sample_result.followed else "did not follow"
        if progress.sample_result.cancelled:
            verdict = "cut at the time budget"
        self.probe_bar.show()
        self.probe_button.setEnabled(False)
        self.probe_status.setText(
            f"Probing: rung {progress.rung} ({progress.phase}) · {progress.tokens:,} tokens · "
            f"sample {progress.sample} {verdict}"
        )

    def _probe_finished(self, model: str, outcome: str, message: str) -> None:
        self.probe_bar.hide()
        self.probe_button.setEnabled(True)
        words = {
            SUCCEEDED: "Probe finished",
            CANCELLED: "Probe cancelled",
            ENDED: "Probe ended",
            PAUSED: "Probe paused",
        }
        said = f": {message}" if message else ""
        self.probe_status.setText(f"{words.get(outcome, 'Probe failed')} ({model}){said}")

    def _problem(self, message: str) -> None:
        self.message.setText(message)
        self.message.show()


def render_mid_pull(
    manager: ModelManager,
    model: str = "gemma3:1b",
    completed: int = 342_000_000,
    total: int = 815_319_791,
) -> None:
    """Put `manager` in the state of a pull under way (for screenshots): its progress bar,
    byte counts and Cancel button, as the controller's signals would leave them."""
    panel = manager.pull
    panel.name.setText(model)
    panel._started(model)
    panel.show_state(PullState(model, "pulling 7cd4618c1faf", completed, total))
