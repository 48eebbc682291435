"""The parts the window's dialogs are built from, so that they look and behave alike.

A dialog here is a title, a hint under it, its fields, one message line saying what the last
action did (a hint, or an error in the error colour) and a row of buttons on the right, the
primary one last, in an outer layout with the same margins. Export, import and the system
prompt dialog are built from these; each keeps only its own fields.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout


def titled(dialog: QDialog, title: str, heading: str = "") -> QLabel:
    """Name `dialog` `title` (window and accessible name); its heading label (`heading`, else
    the title)."""
    dialog.setWindowTitle(title)
    dialog.setAccessibleName(title)
    label = QLabel(heading or title)
    label.setObjectName("dialogTitle")
    label.setWordWrap(True)  # a long chat title wraps, and never widens the dialog
    return label


def hint(text: str) -> QLabel:
    """A wrapped line in the subtle colour."""
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


class MessageLine(QLabel):
    """What the dialog's last action did, under its fields; hidden until there is something."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.hide()

    def say(self, text: str, *, error: bool = False) -> bool:
        """Show `text` (in the error colour if `error`); False for an error, else True."""
        self.setObjectName("fieldError" if error else "hint")
        self.setStyleSheet(self.styleSheet())  # re-polish for the new name
        self.setText(text)
        self.show()
        return not error


def button_row(*buttons: QPushButton) -> QHBoxLayout:
    """`buttons` on the right, in order (the primary one last)."""
    row = QHBoxLayout()
    row.addStretch(1)
    for button in buttons:
        row.addWidget(button)
    return row


def dialog_layout(dialog: QDialog) -> QVBoxLayout:
    """The dialog's outer layout, with the margins and spacing every dialog has."""
    layout = QVBoxLayout(dialog)
    layout.setContentsMargins(18, 16, 18, 16)
    layout.setSpacing(10)
    return layout
