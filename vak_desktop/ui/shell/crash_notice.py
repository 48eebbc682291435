"""At start, after a run that ended unexpectedly: "Vak closed unexpectedly last time — open the
log", with a button that opens the log file (which holds the traceback; `crashes.py`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from vak_desktop.crashes import PreviousCrash


def open_in_desktop(path: Path) -> bool:
    """Open `path` with the desktop's viewer for it (a text editor, for a log)."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


def crash_notice(
    previous: PreviousCrash,
    parent: QWidget | None = None,
    open_path: Callable[[Path], object] = open_in_desktop,
) -> QMessageBox:
    """Show (not modal: the window works meanwhile) what happened and a way to the log."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Vak closed unexpectedly")
    box.setAccessibleName("Vak closed unexpectedly")
    box.setText(previous.message)
    how = "It crashed" if previous.hard_crash else "It stopped without closing its window"
    detail = f" ({previous.detail})" if previous.detail else ""
    box.setInformativeText(
        f"{how}{detail}. The log file, which says what happened, is {previous.log_file}; "
        "attach it to a report."
    )
    opener = box.addButton("Open the log", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Close)
    opener.clicked.connect(lambda: open_path(previous.log_file))  # the box closes too
    box.setModal(False)
    box.show()
    return box
