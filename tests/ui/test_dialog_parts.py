"""A dialog's message line says what its last action did, in the error colour for an error."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QDialog

from vak_desktop.ui.parts.dialog_parts import MessageLine, dialog_layout, titled


def test_the_message_line_shows_an_error_apart_from_a_hint(qapp: QApplication) -> None:
    dialog = QDialog()
    heading = titled(dialog, "Export chat", "Export “Notes”")
    assert (dialog.windowTitle(), dialog.accessibleName()) == ("Export chat", "Export chat")
    assert heading.text() == "Export “Notes”" and heading.objectName() == "dialogTitle"
    line = MessageLine()
    dialog_layout(dialog).addWidget(line)
    dialog.show()
    assert not line.isVisible()  # nothing to say yet
    assert line.say("Could not write /x: denied", error=True) is False
    assert line.isVisible() and line.objectName() == "fieldError"
    assert line.say("Saved Markdown to /tmp/x.md.") is True
    assert line.objectName() == "hint" and line.text().startswith("Saved")
    dialog.deleteLater()
