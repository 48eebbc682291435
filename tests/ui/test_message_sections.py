"""A tool call's header in a narrow column keeps its name, outcome and evidence id."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from vak_desktop.ui.parts.message_sections import ToolSection


def test_a_narrow_tool_header_drops_the_arguments_not_the_evidence(qapp: QApplication) -> None:
    section = ToolSection("c1", "read_file", {"path": "notes/last-week.md"})
    section.set_result(1_024, False, "e08e6d80aa11", "…")
    section.resize(900, 30)
    section.show()  # (a hidden widget gets its resize events only when shown)
    assert section.header.text() == section.title  # room for everything
    assert '"path": "notes/last-week.md"' in section.title
    compact = "⚙ read_file → 1,024 chars · evidence e08e6d80"
    metrics = section.header.fontMetrics()
    section.resize(metrics.horizontalAdvance(compact) + 56, 30)  # a column beside the inspector
    assert section.header.text() == compact
    section.resize(120, 30)
    narrow = section.header.text()
    assert narrow.startswith("⚙ read") and narrow.endswith("…")  # cut at its end
    assert section.plain_text() == section.title  # the transcript's text is the whole title
    section.deleteLater()
