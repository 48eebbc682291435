"""The pieces every settings page is made of: tables, button rows, error labels, URL checks."""

from __future__ import annotations

from urllib.parse import urlsplit

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTableWidget, QVBoxLayout, QWidget


def error_label() -> QLabel:
    label = QLabel()
    label.setObjectName("fieldError")
    label.setWordWrap(True)
    label.hide()
    return label


def valid_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def mark(field: QWidget, invalid: bool) -> None:
    """Border `field` in the danger colour while it holds a value that cannot be saved."""
    field.setProperty("invalid", invalid)
    field.style().unpolish(field)
    field.style().polish(field)


def table_text(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    return item.text().strip() if item is not None else ""


def table(headers: list[str], name: str) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setAccessibleName(name)
    table.verticalHeader().hide()
    table.horizontalHeader().setStretchLastSection(True)
    table.setColumnWidth(0, 140)
    table.setColumnWidth(1, 220 if len(headers) == 3 else 150)
    table.setColumnWidth(2, 200)
    return table


def button_row(*buttons: QPushButton) -> QHBoxLayout:
    layout = QHBoxLayout()
    for button in buttons:
        layout.addWidget(button)
    layout.addStretch(1)
    return layout


def page(*parts: QWidget | QHBoxLayout) -> QWidget:
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.setContentsMargins(16, 16, 16, 16)
    for part in parts:
        if isinstance(part, QHBoxLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part, 1 if isinstance(part, QTableWidget) else 0)
    return page
