"""Import a whole file of conversations: each one its own session, through `import_openai`.

`read_conversations` (formats/) says what the file holds; `import_steps` writes the
conversations one at a time and yields after each, so the window can show progress and stay
responsive and the CLI can simply run it to the end. A conversation that cannot be imported is
skipped with its reason; what one left out (images, tool messages …) is reported with it.
Nothing already imported is undone by a later failure: each conversation stands alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.formats import Conversation, ReadFile
from vak_desktop.runtime.sessions.interchange import (
    ConversationFormatError,
    ImportReport,
    import_openai,
)


@dataclass
class BatchReport:
    """What an import did: the sessions written, and every thing it skipped, with why."""

    format: str
    total: int
    imported: list[ImportReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return sum(r.turns for r in self.imported)

    @property
    def untimed(self) -> int:
        """Turns for which the file held no time (dated when imported)."""
        return sum(len(r.untimed) for r in self.imported)

    def summary(self) -> str:
        what = f"{len(self.imported)} of {self.total} conversations ({self.turns} turns)"
        left = f"; {len(self.skipped)} things skipped" if self.skipped else ""
        untimed = f"; {self.untimed} turns had no time in the file" if self.untimed else ""
        source = FORMAT_NAMES.get(self.format, self.format)
        return f"Imported {what} from a {source} file{left}{untimed}."

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "conversations": self.total,
            "sessions": [r.session for r in self.imported],
            "turns": self.turns,
            "skipped": list(self.skipped),
            # per session, the turn numbers no time in the file dated (dated when imported)
            "untimed_turns": {r.session: list(r.untimed) for r in self.imported if r.untimed},
        }


FORMAT_NAMES = {"openai": "OpenAI chat JSON", "chatgpt": "ChatGPT", "openwebui": "Open WebUI"}


def _importable(conversation: Conversation) -> dict[str, Any]:
    """The document with anything before the first user message (but a system one) dropped:
    apps start chats with a greeting of their own; the ledger starts a turn with the user."""
    messages = list(conversation.document.get("messages", []))
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if first_user is None:
        return conversation.document
    kept = [m for m in messages[:first_user] if m.get("role") == "system"][:1]
    return {**conversation.document, "messages": kept + messages[first_user:]}


def import_steps(ledger: Ledger, read: ReadFile, report: BatchReport) -> Iterator[int]:
    """Import `read`'s conversations into `ledger`, filling `report`; yields the count done
    after each one (stop iterating to stop: what is written stays)."""
    report.skipped.extend(read.skipped)
    for done, conversation in enumerate(read.conversations, 1):
        name = f"“{conversation.title}”" if conversation.title else f"conversation {done}"
        try:
            imported = import_openai(ledger, _importable(conversation), conversation.title)
        except ConversationFormatError as exc:
            report.skipped.append(f"{name}: not imported ({exc})")
        else:
            report.imported.append(imported)
            report.skipped.extend(conversation.skipped)
        yield done


def import_all(ledger: Ledger, read: ReadFile) -> BatchReport:
    """`import_steps` run to the end (the CLI)."""
    report = BatchReport(read.format, len(read.conversations))
    for _done in import_steps(ledger, read, report):
        pass
    return report
