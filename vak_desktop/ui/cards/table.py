"""Table card: {title?, columns: [str], rows: [[cell]]}, sortable by any column.

Numbers sort as numbers (the sort role holds the raw value), text as text; a short row is padded,
a long one shows its extra cells under unnamed columns rather than dropping them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import caption, text_of

KIND_LABEL = "Table"
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
MAX_VISIBLE_ROWS = 12


def _sort_key(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return float(value)
    return text_of(value).casefold()


class _MixedSort(QSortFilterProxyModel):
    """Numbers before text, each in its own order (a column may hold both)."""

    def lessThan(self, left: Any, right: Any) -> bool:
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        if isinstance(a, float) != isinstance(b, float):
            return isinstance(a, float)
        return bool(a < b)


def build(payload: dict[str, Any]) -> QWidget:
    columns = [text_of(c) for c in payload.get("columns") or []]
    rows = [r if isinstance(r, list) else [r] for r in payload.get("rows") or []]
    width = max([len(columns), *(len(r) for r in rows)])
    columns += [""] * (width - len(columns))
    model = QStandardItemModel(len(rows), width)
    model.setHorizontalHeaderLabels(columns)
    for r, row in enumerate(rows):
        for c in range(width):
            value = row[c] if c < len(row) else None
            item = QStandardItem(text_of(value))
            item.setData(_sort_key(value), SORT_ROLE)
            item.setEditable(False)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            model.setItem(r, c, item)
    proxy = _MixedSort()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    view = QTableView()
    view.setObjectName("cardTable")
    view.setAccessibleName(f"table with {len(rows)} rows and {width} columns")
    view.setModel(proxy)
    model.setParent(view)
    proxy.setParent(view)
    view.setSortingEnabled(True)
    view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the order the rows came in
    view.horizontalHeader().setSortIndicatorShown(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    view.horizontalHeader().setHighlightSections(False)
    view.horizontalHeader().setDefaultAlignment(
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    )
    view.verticalHeader().setVisible(False)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    shown = min(len(rows), MAX_VISIBLE_ROWS)
    row_height = view.verticalHeader().defaultSectionSize()
    view.setFixedHeight(view.horizontalHeader().sizeHint().height() + row_height * shown + 4)
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    layout.addWidget(view)
    note = f"{len(rows):,} rows · click a column to sort" if rows else "no rows"
    if payload.get("caption"):
        note = f"{text_of(payload['caption'])} · {note}"
    layout.addWidget(caption(note, body, size="small"))
    return body


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))
