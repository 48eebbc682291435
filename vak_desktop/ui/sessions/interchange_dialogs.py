"""File → Export chat… and File → Import…: the shown chat to a file, other apps' chats in.

Export writes the shown branch as OpenAI chat JSON (tool results whole) or Markdown. Import reads
OpenAI chat JSON, ChatGPT's `conversations.json` or an Open WebUI export
(runtime/sessions/formats): the file is parsed off the UI thread, then the conversations are
written one at a time on the loop, the bar advancing after each, so a file of thousands of
chats keeps the window responsive and Cancel stops between two of them (what was written
stays). A ChatGPT export may be its zip, or the conversations.json of the unpacked folder:
the images it holds beside the JSON are attached. The report says how many were imported (and
how many other branches kept), names every chat already imported (written again: never), and
lists each skipped thing by kind and position.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QWidget,
)

from vak_desktop.ledger import LedgerError
from vak_desktop.runtime.sessions.assets import open_export
from vak_desktop.runtime.sessions.formats import ReadFile, UnknownFormat, read_conversations
from vak_desktop.runtime.sessions.formats.markdown import export_markdown
from vak_desktop.runtime.sessions.importing import BatchReport, counted, import_steps
from vak_desktop.runtime.sessions.interchange import export_openai
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.parts.dialog_parts import MessageLine, button_row, dialog_layout, hint, titled
from vak_desktop.ui.parts.tasks import TaskSet

FORMATS = {"openai": ("OpenAI chat JSON", ".json"), "markdown": ("Markdown", ".md")}


def _file_row(field: QLineEdit, browse: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(field, 1)
    row.addWidget(browse)
    return row


class ExportDialog(QDialog):
    """The shown chat to a file, as OpenAI chat JSON or Markdown."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.resize(560, 260)
        self._service = service
        session = service.session or ""
        title = service.ledger.session(session).title if session else ""
        self._stem = re.sub(r"[^\w\- ]+", "", title).strip()[:60] or "chat"
        heading = titled(self, "Export chat", f"Export “{title or 'this chat'}”")
        self.choices = QButtonGroup(self)
        formats = QHBoxLayout()
        for key, (name, suffix) in FORMATS.items():
            button = QRadioButton(f"{name} ({suffix})")
            button.setProperty("format", key)
            self.choices.addButton(button)
            formats.addWidget(button)
            if key == "openai":
                button.setChecked(True)
        formats.addStretch(1)
        self.choices.buttonToggled.connect(self._format_changed)
        self.path = QLineEdit(str(Path.home() / f"{self._stem}.json"))
        self.path.setAccessibleName("Export to file")
        browse = QPushButton("Browse…")
        browse.setAutoDefault(False)
        browse.clicked.connect(self._browse)
        about = hint(
            "OpenAI chat JSON imports into most chat apps (tool results whole); Markdown "
            "is for reading."
        )
        self.message = MessageLine()
        self.export_button = QPushButton("Export")
        self.export_button.setObjectName("primaryButton")
        self.export_button.clicked.connect(self.export)
        self.export_button.setEnabled(bool(session))
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(self.reject)
        layout = dialog_layout(self)
        layout.addWidget(heading)
        layout.addLayout(formats)
        layout.addLayout(_file_row(self.path, browse))
        layout.addWidget(about)
        layout.addWidget(self.message)
        layout.addStretch(1)
        layout.addLayout(button_row(close, self.export_button))

    @property
    def format(self) -> str:
        checked = self.choices.checkedButton()
        return str(checked.property("format")) if checked is not None else "openai"

    def choose_format(self, key: str) -> None:
        for button in self.choices.buttons():
            if button.property("format") == key:
                button.setChecked(True)

    def _format_changed(self, *_args: object) -> None:
        suffix = FORMATS[self.format][1]
        current = Path(self.path.text() or f"{self._stem}.json")
        self.path.setText(str(current.with_suffix(suffix)))

    def _browse(self) -> None:
        name, suffix = FORMATS[self.format]
        chosen, _filter = QFileDialog.getSaveFileName(
            self, "Export chat", self.path.text(), f"{name} (*{suffix})"
        )
        if chosen:
            self.path.setText(chosen)

    def export(self) -> bool:
        """Write the file; the message says where, or why not (nothing else changes)."""
        session = self._service.session
        target = Path(self.path.text().strip()).expanduser()
        if not session or not self.path.text().strip():
            return self.message.say("Open a chat and name a file to export to.", error=True)
        try:
            if self.format == "markdown":
                text = export_markdown(self._service.ledger, session)
            else:
                document = export_openai(self._service.ledger, session)
                text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
            target.write_text(text, encoding="utf-8")
        except (OSError, LedgerError) as exc:
            return self.message.say(f"Could not write {target}: {exc}", error=True)
        return self.message.say(f"Saved {FORMATS[self.format][0]} to {target}.")


class ImportDialog(QDialog):
    """Conversations from a file (OpenAI chat JSON, ChatGPT, Open WebUI), with progress."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.resize(600, 420)
        self._service = service
        self._tasks = TaskSet()
        self._stop = False
        self.task: asyncio.Task[BatchReport | None] | None = None
        self.report: BatchReport | None = None
        heading = titled(self, "Import chats")
        about = hint(
            "OpenAI chat JSON, ChatGPT's export (its zip, or conversations.json with its "
            "files beside it: Settings → Data controls → Export) or an Open WebUI chat "
            "export. Each conversation becomes a chat here, every branch kept."
        )
        self.path = QLineEdit()
        self.path.setPlaceholderText("conversations.json")
        self.path.setAccessibleName("File to import")
        browse = QPushButton("Browse…")
        browse.setAutoDefault(False)
        browse.clicked.connect(self._browse)
        self.bar = QProgressBar()
        self.bar.setAccessibleName("Import progress")
        self.bar.hide()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setAccessibleName("What the import kept out, and why")
        self.details.hide()
        self.import_button = QPushButton("Import")
        self.import_button.setObjectName("primaryButton")
        self.import_button.clicked.connect(lambda: self.start())
        self.cancel_button = QPushButton("Close")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self._cancel_or_close)
        layout = dialog_layout(self)
        layout.addWidget(heading)
        layout.addWidget(about)
        layout.addLayout(_file_row(self.path, browse))
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addWidget(self.details, 1)
        layout.addLayout(button_row(self.cancel_button, self.import_button))

    def _browse(self) -> None:
        chosen, _filter = QFileDialog.getOpenFileName(
            self,
            "Import chats",
            self.path.text(),
            "Chat exports (*.json *.zip);;All files (*)",
        )
        if chosen:
            self.path.setText(chosen)

    def start(self, path: str | None = None) -> asyncio.Task[BatchReport | None] | None:
        """Import `path` (default: the field's); None while an import runs."""
        if self.task is not None and not self.task.done():
            return None
        if path is not None:
            self.path.setText(path)
        self._stop = False
        self.task = self._tasks.spawn(self._run(Path(self.path.text().strip())), "import")
        return self.task

    async def _run(self, path: Path) -> BatchReport | None:
        self.import_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        self.details.hide()
        self.status.setText(f"Reading {path.name}…")
        try:
            read = await asyncio.to_thread(_read, path)
        except (OSError, ValueError) as exc:
            self._finished()
            self.status.setText(f"✕ {exc}")
            return None
        report = BatchReport(read.format, len(read.conversations))
        self.bar.setRange(0, max(1, report.total))
        self.bar.setValue(0)
        self.bar.show()
        for done in import_steps(self._service.ledger, read, report):
            self.bar.setValue(done)
            self.status.setText(f"Importing {done:,} of {report.total:,} conversations…")
            await asyncio.sleep(0)  # paint, and hear Cancel
            if self._stop:
                report.notes.append(f"Stopped by the user after {counted(done, 'conversation')}.")
                break
        self.report = report
        self._finished()
        self.status.setText(report.summary())
        lines = report.lines()
        if lines:
            self.details.setPlainText("\n".join(f"• {line}" for line in lines))
            self.details.show()
        self._service.sessionsChanged.emit()
        if report.imported:
            self._service.open_session(report.imported[0].session)
        return report

    def _finished(self) -> None:
        self.import_button.setEnabled(True)
        self.cancel_button.setText("Close")

    def _cancel_or_close(self) -> None:
        if self.task is not None and not self.task.done():
            self._stop = True
        else:
            self.reject()

    async def aclose(self) -> None:
        await self._tasks.cancel_all()


def _read(path: Path) -> ReadFile:
    """Parse and recognise the file (on a worker thread: a large file takes a while)."""
    if not str(path) or not path.is_file():
        raise ValueError(f"{path} is not a file")
    raw, assets = open_export(path)
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name} is not JSON: {exc}") from None
    try:
        return read_conversations(document, assets)
    except UnknownFormat as exc:
        raise ValueError(f"{path.name}: {exc}") from None
