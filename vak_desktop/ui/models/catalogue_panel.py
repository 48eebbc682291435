"""The model catalogue as a panel: pick a model, download it, watch it come, start it.

Shared by the first-run panel (onboarding) and the model manager's "Built-in engine" tab. A
table lists each catalogue model with its parameters, quantisation, download size, the memory
it needs and its licence, and whether it is downloaded (or half, to resume). Under it: Download
(or Start, for a downloaded one), a progress bar with the bytes, speed and time left, and
Cancel. It follows one `DownloadsController`, so two panels over it show the same download;
`values` keeps every value the bar took during the last download (tests check it advanced).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.runtime.providers.catalogue import CatalogueEntry, suggested
from vak_desktop.runtime.providers.downloads import DownloadProgress
from vak_desktop.ui.models.downloads_controller import (
    CANCELLED,
    SUCCEEDED,
    DownloadsController,
    describe,
)

COLUMNS = ("Model", "Parameters", "Quant.", "Download", "Memory", "Licence", "")
_STEPS = 1000


def _size(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


class CataloguePanel(QFrame):
    """The catalogue's models with Download / Start, progress and Cancel."""

    def __init__(self, controller: DownloadsController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setAccessibleName("Models to download")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        heads = self.table.horizontalHeader()
        heads.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        heads.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)  # the licence gives way
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(lambda _index: self.start())
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("primaryButton")
        self.download_button.setAccessibleName("Download model")
        self.download_button.clicked.connect(self.start)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("dangerButton")
        self.delete_button.setAccessibleName("Delete downloaded model")
        self.delete_button.clicked.connect(self.ask_delete)
        self.confirmation: QMessageBox | None = None
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel download")
        self.cancel_button.clicked.connect(controller.cancel)
        for button in (self.download_button, self.delete_button, self.cancel_button):
            button.setAutoDefault(False)
        self.bar = QProgressBar()
        self.bar.setRange(0, _STEPS)
        self.bar.setAccessibleName("Download progress")
        self.about = QLabel()
        self.about.setObjectName("hint")
        self.about.setWordWrap(True)
        self.status = QLabel()
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        actions = QHBoxLayout()
        actions.addWidget(self.about, 1)
        actions.addWidget(self.delete_button)
        actions.addWidget(self.download_button)
        progress = QHBoxLayout()
        progress.addWidget(self.bar, 1)
        progress.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.table, 1)
        layout.addLayout(actions)
        layout.addWidget(self.error)
        layout.addLayout(progress)
        layout.addWidget(self.status)
        self.values: list[int] = []
        controller.started.connect(self._started)
        controller.progress.connect(self.show_progress)
        controller.finished.connect(self._finished)
        self.show_entries()
        first = suggested(controller.entries)
        if first is not None:
            self.select(first.key)
        self._idle()

    # -- the table --------------------------------------------------------------------------

    def show_entries(self) -> None:
        """Fill the table from the controller's catalogue (the state column included)."""
        keep = self.selected()
        entries = self.controller.entries
        self.table.setRowCount(len(entries))
        for r, entry in enumerate(entries):
            cells = (
                entry.name,
                entry.parameters,
                entry.quantisation,
                _size(entry.size),
                f"{entry.ram_gb:g} GB",
                entry.licence,
                self._state_words(entry),
            )
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, entry.key)
                if c == 0 and entry.note:
                    item.setToolTip(entry.note)
                if c in (1, 3, 4):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(r, c, item)
        if keep:
            self.select(keep)
        self._selection_changed()  # the entry under the same key may have changed

    def _state_words(self, entry: CatalogueEntry) -> str:
        if self.controller.path_of(entry) is not None:
            return "✓ downloaded"
        if self.controller.downloading == entry.key:
            return "downloading…"
        have = self.controller.partial(entry)
        return f"{have * 100 // entry.size}% (resumes)" if have else ""

    def select(self, key: str) -> None:
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == key:
                self.table.selectRow(r)
                return

    def selected(self) -> str:
        model = self.table.selectionModel()
        rows = model.selectedRows() if model is not None else []
        item = self.table.item(rows[0].row(), 0) if rows else None
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else ""

    def _selection_changed(self) -> None:
        entry = self.controller.entry(self.selected())
        if entry is None:
            self.about.clear()
            return
        ready = self.controller.path_of(entry) is not None
        held = ready or bool(self.controller.partial(entry))
        self.delete_button.setVisible(held and self.controller.downloading != entry.key)
        self.download_button.setText("Start" if ready else "Download")
        self.download_button.setAccessibleName("Start model" if ready else "Download model")
        resumes = " (resumes)" if self.controller.partial(entry) and not ready else ""
        memory = self.controller.memory
        tight = (
            f" — <b>more than this computer's {memory / 1e9:.0f} GB</b>"
            if memory and entry.ram_gb * 1e9 > memory
            else ""
        )
        self.about.setText(
            f"<b>{entry.name}</b> · {entry.note or entry.family} · {_size(entry.size)} to "
            f"download{resumes}, about {entry.ram_gb:g} GB of memory{tight} · {entry.licence}"
        )

    # -- actions ----------------------------------------------------------------------------

    def start(self) -> None:
        """Download the selected model, or start it when it is already downloaded."""
        entry = self.controller.entry(self.selected())
        if entry is None:
            return
        self.error.hide()
        path = self.controller.path_of(entry)
        if path is not None:
            self.status.setText(f"Starting {entry.name} on the built-in engine…")
            self.status.show()
            self.controller.modelReady.emit(str(path))
            return
        if self.controller.start(entry.key) is None:
            self.error.setText("Another model is downloading; wait for it or cancel it")
            self.error.show()

    def ask_delete(self) -> QMessageBox | None:
        """Ask before deleting the selected model's file (non-blocking; `confirmation`)."""
        entry = self.controller.entry(self.selected())
        if entry is None:
            return None
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete model")
        box.setText(f"Delete the downloaded {entry.name} ({_size(entry.size)})?")
        box.setInformativeText("Chats that used it stay; download it again to use it.")
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def answered() -> None:
            self.confirmation = None
            if box.clickedButton() is delete:
                problem = self.controller.delete(entry)
                self.error.setText(problem)
                self.error.setVisible(bool(problem))
                self.show_entries()

        box.finished.connect(answered)
        self.confirmation = box
        box.open()
        return box

    def _idle(self) -> None:
        self.bar.hide()
        self.cancel_button.hide()
        self.download_button.setEnabled(True)
        self.status.setVisible(bool(self.status.text()))
        self._selection_changed()

    def _started(self, key: str) -> None:
        entry = self.controller.entry(key)
        self.values = []
        self.bar.setValue(0)
        self.bar.show()
        self.cancel_button.show()
        self.download_button.setEnabled(False)
        self.error.hide()
        self.status.setText(f"Downloading {entry.name if entry else key}: connecting…")
        self.status.show()
        self.show_entries()

    def show_progress(self, state: DownloadProgress) -> None:
        """Show one progress report (the controller's signal; screenshots call it directly)."""
        value = round(state.fraction * _STEPS)
        self.bar.setValue(value)
        self.values.append(value)
        self.bar.show()
        self.cancel_button.show()
        self.download_button.setEnabled(False)
        entry = self.controller.entry(state.key)
        self.status.setText(f"{entry.name if entry else state.key}: {describe(state)}")
        self.status.show()

    def _finished(self, key: str, outcome: str, message: str) -> None:
        entry = self.controller.entry(key)
        name = entry.name if entry else key
        if outcome == SUCCEEDED:
            self.status.setText(f"✓ {name} is downloaded and verified: starting it…")
        elif outcome == CANCELLED:
            self.status.setText(f"Download of {name} cancelled. Download again to resume.")
        else:
            self.status.setText("")
            self.error.setText(f"Could not download {name}: {message}")
            self.error.show()
        self.show_entries()
        self._idle()
