"""The Plan panel: for one turn, the budget arithmetic and what each earlier turn travelled as.

It shows the plan the turn's first Receipt recorded (for "Next request", the preview `vak plan`
shows): horizon − prefix − tail − output reserve − current-turn reserve = the budget for
history, then every earlier turn with the fidelity the planner chose, its value and its tokens,
and the packet's range.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.ui.inspector.source import NEXT, Inspection, PlanView

FIDELITY_NAMES = {
    "full": "Full",
    "card": "Card",
    "packet": "Packet",
    "behind_reset": "Behind reset",
}
# Tints that read on light and dark backgrounds alike (alpha over the table's base colour).
FIDELITY_TINTS = {
    "full": QColor(37, 99, 235, 46),
    "card": QColor(22, 163, 74, 46),
    "packet": QColor(217, 119, 6, 46),
    "behind_reset": QColor(120, 120, 120, 46),
}
COLUMNS = ("Turn", "Asked", "Fidelity", "Value", "Tokens")
COLUMN_TIPS = (
    "The turn's number, as the model sees it",
    "What the user asked in that turn",
    "Full: the whole turn; Card: its compact card; Packet: inside the summary packet",
    "max(recency, relevance to this request, refers-back): higher turns are kept whole first",
    "What the turn costs in this request at its fidelity",
)


def arithmetic_html(budget: dict[str, Any]) -> str:
    """The budget as one line of arithmetic, each term named."""
    terms = [
        ("horizon", budget["horizon"]),
        ("prefix", budget["prefix_tokens"]),
        ("tail", budget["tail_tokens"]),
        ("output reserve", budget["output_reserve"]),
        ("current turn", budget["current_turn_reserve"]),
    ]
    first, *rest = terms
    parts = [f"{first[1]:,} <span style='opacity:.7'>{first[0]}</span>"]
    parts += [f"− {value:,} <span style='opacity:.7'>{name}</span>" for name, value in rest]
    return (
        " ".join(parts) + f" = <b>{budget['available']:,}</b> <span style='opacity:.7'>"
        "tokens for earlier turns</span>"
    )


def _number(value: int | float, text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setData(Qt.ItemDataRole.UserRole, value)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class PlanPanel(QWidget):
    """Shows one `PlanView`; `show_turn` picks which."""

    def __init__(self, inspection: Inspection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._inspection = inspection
        self.view: PlanView | None = None
        self.heading = QLabel()
        self.heading.setObjectName("inspectorHeading")
        self.heading.setAccessibleName("Plan heading")
        self.heading.setWordWrap(True)
        self.arithmetic = QLabel()
        self.arithmetic.setObjectName("planArithmetic")
        self.arithmetic.setAccessibleName("Budget arithmetic")
        self.arithmetic.setTextFormat(Qt.TextFormat.RichText)
        self.arithmetic.setWordWrap(True)
        self.arithmetic.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("planTable")
        self.table.setAccessibleName("Earlier turns and their fidelity")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        for column, tip in enumerate(COLUMN_TIPS):
            header_item = self.table.horizontalHeaderItem(column)
            if header_item is not None:
                header_item.setToolTip(tip)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.packet = QLabel()
        self.packet.setObjectName("planPacket")
        self.packet.setAccessibleName("Packet range")
        self.packet.setWordWrap(True)
        self.empty = QLabel()
        self.empty.setObjectName("emptyNote")
        self.empty.setAccessibleName("Plan panel note")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)
        layout.addWidget(self.heading)
        layout.addWidget(self.arithmetic)
        layout.addWidget(self.table)
        layout.addWidget(self.packet)
        layout.addWidget(self.empty, 1)
        layout.addStretch(1)

    def fidelities(self) -> list[tuple[str, str]]:
        """(turn id, fidelity) of every row, as shown (tests compare it with the receipt)."""
        if self.view is None:
            return []
        return [(t["turn_id"], t["fidelity"]) for t in self.view.plan.get("turns", [])]

    def show_turn(self, turn_id: str) -> None:
        view = self._inspection.plan_for(turn_id)
        self.view = view
        if view is None:
            self._show_empty(turn_id)
            return
        for widget in (self.heading, self.arithmetic, self.table, self.packet):
            widget.show()
        self.empty.hide()
        plan = view.plan
        budget = plan["budget"]
        source = (
            "counted by the provider"
            if view.measured
            else "estimated (the provider has not counted it yet)"
        )
        what = "The next request" if view.turn_id == NEXT else "This turn's first request"
        self.heading.setText(
            f"<b>{what}</b> for {escape(view.model)}: {view.request_tokens:,} tokens, {source}. "
            f"Earlier turns: {view.count('full')} Full, {view.count('card')} as a Card, "
            f"{view.count('packet')} in the packet."
        )
        self.arithmetic.setText(arithmetic_html(budget))
        self._fill(view)
        self.table.scrollToBottom()  # the newest turns, where Full and Card are, come first
        self.packet.setText(self._packet_text(view))

    def _fill(self, view: PlanView) -> None:
        rows = view.plan.get("turns", [])
        self.table.setRowCount(len(rows))
        for row, turn in enumerate(rows):
            fidelity = turn["fidelity"]
            asked = " ".join(view.asked.get(turn["turn_id"], "").split())
            cells = [
                _number(turn["index"] + 1, str(turn["index"] + 1)),
                QTableWidgetItem(asked),
                QTableWidgetItem(FIDELITY_NAMES.get(fidelity, fidelity)),
                _number(turn["value"], f"{turn['value']:.2f}"),
                _number(turn["tokens"], f"{turn['tokens']:,}" if turn["tokens"] else "—"),
            ]
            cells[1].setToolTip(view.asked.get(turn["turn_id"], ""))
            tint = FIDELITY_TINTS.get(fidelity)
            for column, cell in enumerate(cells):
                if tint is not None and column == 2:
                    cell.setBackground(tint)
                self.table.setItem(row, column, cell)

    def _packet_text(self, view: PlanView) -> str:
        plan = view.plan
        span = plan.get("packet_range")
        if not span:
            return "No packet: every earlier turn travels Full or as a Card."
        numbers = {t["turn_id"]: t["index"] + 1 for t in plan.get("turns", [])}
        first, last = numbers.get(span[0], "?"), numbers.get(span[1], "?")
        stored = (
            f"the stored summary {plan['packet'][:14]}…"
            if plan.get("packet")
            else "no stored summary of exactly these turns yet (the request carries their cards; the "
            "summary is written in the background)"
        )
        detail = (
            "each covered turn listed by number"
            if plan.get("packet_detailed")
            else "only the range named"
        )
        return (
            f"Packet: turns {first}–{last}, {plan.get('packet_tokens', 0):,} tokens — {stored}; "
            f"{detail}. History total {plan.get('history_tokens', 0):,} tokens."
        )

    def _show_empty(self, turn_id: str) -> None:
        for widget in (self.heading, self.arithmetic, self.table, self.packet):
            widget.hide()
        self.empty.show()
        if self._inspection.session is None:
            self.empty.setText("Start or open a chat to see how its requests are planned.")
        elif turn_id == NEXT:
            self.empty.setText("Pick a model to see how the next request would be planned.")
        else:
            self.empty.setText(
                "This turn has no recorded plan: it ended before the model was asked."
            )
