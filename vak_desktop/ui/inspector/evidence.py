"""The Evidence panel: every tool result of the session, what the request carried, the digest
later turns carry, the full stored text, and a recall of any line range of it.

The recall view calls the same `select_lines` the `recall` tool uses, so what it shows for
lines 10–20 is exactly what the model gets when it asks for them.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.ui.inspector.source import EvidenceItem, Inspection

COLUMNS = ("Turn", "Call", "Evidence", "Size", "Carried as")


def _text_view(name: str) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setReadOnly(True)
    view.setAccessibleName(name)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return view


def call_text(item: EvidenceItem) -> str:
    """`read_file path=notes.md`: the tool and what it was asked, on one line."""
    arguments = " ".join(
        f"{key}={value if isinstance(value, str) else json.dumps(value)}"
        for key, value in item.arguments.items()
    )
    return f"{item.result.tool_name} {arguments}".strip()


def carried_as(item: EvidenceItem) -> str:
    result = item.result
    if result.is_error:
        return "error"
    return "window" if result.windowed else "verbatim"


class EvidencePanel(QWidget):
    """Lists the session's results; the selected one is shown four ways."""

    def __init__(self, inspection: Inspection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._inspection = inspection
        self.items: list[EvidenceItem] = []
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("evidenceTable")
        self.table.setAccessibleName("Tool results of this chat")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.currentCellChanged.connect(self._show)

        self.carried = _text_view("What the request carried")
        self.digest = _text_view("Digest carried by later turns")
        self.full = _text_view("The full stored result")
        self.recalled = _text_view("Recalled lines")
        self.first = QSpinBox()
        self.first.setAccessibleName("First line to recall")
        self.first.setMinimum(1)
        self.last = QSpinBox()
        self.last.setAccessibleName("Last line to recall")
        self.last.setMinimum(1)
        self.recall_button = QPushButton("Recall")
        self.recall_button.setAccessibleName("Recall these lines")
        self.recall_button.clicked.connect(self.recall)
        recall = QWidget()
        recall_layout = QVBoxLayout(recall)
        recall_layout.setContentsMargins(0, 6, 0, 0)
        row = QHBoxLayout()
        lines_label = QLabel("Lines")
        lines_label.setAccessibleName("Lines label")
        to_label = QLabel("to")
        to_label.setAccessibleName("to")
        row.addWidget(lines_label)
        row.addWidget(self.first)
        row.addWidget(to_label)
        row.addWidget(self.last)
        row.addWidget(self.recall_button)
        row.addStretch(1)
        recall_layout.addLayout(row)
        recall_layout.addWidget(self.recalled, 1)

        self.views = QTabWidget()
        self.views.setObjectName("evidenceViews")
        self.views.setAccessibleName("Ways to look at the result")
        self.views.setDocumentMode(True)
        self.views.addTab(self.carried, "Carried")
        self.views.addTab(self.digest, "Digest")
        self.views.addTab(self.full, "Full text")
        self.views.addTab(recall, "Recall")

        self.empty = QLabel("No tool results in this chat yet.")
        self.empty.setObjectName("emptyNote")
        self.empty.setAccessibleName("Evidence panel note")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setAccessibleName("Results and their text")
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.views)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.empty, 1)

    def reload(self) -> None:
        self.items = self._inspection.evidence()
        self.splitter.setVisible(bool(self.items))
        self.empty.setVisible(not self.items)
        self.table.setRowCount(len(self.items))
        for row, item in enumerate(self.items):
            result = item.result
            cells = [
                QTableWidgetItem(str(item.turn)),
                QTableWidgetItem(call_text(item)),
                QTableWidgetItem(short_ref(result.evidence)),
                QTableWidgetItem(f"{result.chars:,} chars"),
                QTableWidgetItem(carried_as(item)),
            ]
            cells[1].setToolTip(json.dumps(item.arguments, ensure_ascii=False, indent=1))
            cells[2].setToolTip(result.evidence)
            for column, cell in enumerate(cells):
                if column in (0, 3):
                    cell.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, column, cell)
        if self.items:
            self.table.setCurrentCell(len(self.items) - 1, 0)
            self._show(len(self.items) - 1)

    def select(self, row: int) -> None:
        self.table.setCurrentCell(row, 0)

    def _show(self, row: int, *_args: object) -> None:
        if not 0 <= row < len(self.items):
            return
        item = self.items[row]
        self.carried.setPlainText(item.result.content)
        self.digest.setPlainText(
            item.digest or "The turn is still open: later turns will carry a digest of this."
        )
        body = item.body
        self.full.setPlainText(body.content if body else "(the stored result is missing)")
        lines = body.content.count("\n") + 1 if body else 1
        for box in (self.first, self.last):
            box.setMaximum(lines)
        self.first.setValue(1)
        self.last.setValue(min(lines, 20))
        self.recalled.clear()

    def recall(self) -> None:
        """Show lines first..last of the selected result, as `recall {id, range}` returns them."""
        row = self.table.currentRow()
        if not 0 <= row < len(self.items):
            return
        item = self.items[row]
        first, last = self.first.value(), self.last.value()
        try:
            text = item.lines(first, last)
        except ValueError as exc:
            self.recalled.setPlainText(str(exc))
            return
        call = f'recall {{"id": "{short_ref(item.result.evidence)}", "range": [{first}, {last}]}}'
        self.recalled.setPlainText(f"{call}\n\n{text}")
