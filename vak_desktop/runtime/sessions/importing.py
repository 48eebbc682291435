"""Import a whole file of conversations: each one its own session, through `import_openai`.

`read_conversations` (formats/) says what the file holds; `import_steps` writes the
conversations one at a time and yields after each, so the window can show progress and stay
responsive and the CLI can simply run it to the end. A conversation already imported with the
same content (its source's id and digest, `origins.py`) is not written again: the report says
"already imported as CHAT". A conversation that cannot be imported is skipped with its reason;
what one left out (an image with no file, an audio part …) is itemised by kind and position.
Nothing already imported is undone by a later failure: each conversation stands alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.formats import Conversation, ReadFile, Skipped, digest
from vak_desktop.runtime.sessions.interchange import (
    ConversationFormatError,
    ImportReport,
    import_openai,
)
from vak_desktop.runtime.sessions.origins import Origins, origin


def counted(count: int, one: str, many: str | None = None) -> str:
    """'1 thing', '2 things': a count and its noun, agreeing in number."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


@dataclass(frozen=True)
class AlreadyImported:
    """A conversation the ledger holds already, with the same content: nothing was written."""

    title: str
    session: str
    session_title: str

    def __str__(self) -> str:
        return f"“{self.title}”: already imported as “{self.session_title or 'Untitled'}”"


@dataclass
class BatchReport:
    """What an import did: the sessions written, the ones already there, every thing skipped."""

    format: str
    total: int
    imported: list[ImportReport] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    already: list[AlreadyImported] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. a newer copy of a chat imported

    @property
    def turns(self) -> int:
        return sum(r.turns for r in self.imported)

    @property
    def branches(self) -> int:
        return sum(r.branches for r in self.imported)

    @property
    def untimed(self) -> int:
        """Turns for which the file held no time (dated when imported)."""
        return sum(len(r.untimed) for r in self.imported)

    def skipped_by_kind(self) -> str:
        """'1 image, 2 audio parts' — what was skipped, most first."""
        kinds = Counter(_kind(s) for s in self.skipped)
        return ", ".join(counted(n, kind) for kind, n in kinds.most_common())

    def summary(self) -> str:
        what = f"{len(self.imported):,} of {counted(self.total, 'conversation')}"
        kept = [counted(self.turns, "turn")]
        if self.branches:
            kept.append(f"{counted(self.branches, 'other branch', 'other branches')} kept")
        parts = [f"Imported {what} ({', '.join(kept)})" if self.imported else f"Imported {what}"]
        source = FORMAT_NAMES.get(self.format, self.format)
        parts[0] += f" from {'an' if source[:1] in 'AEIOU' else 'a'} {source} file"
        if self.already:
            parts.append(f"{counted(len(self.already), 'conversation')} already imported")
        if self.skipped:
            parts.append(
                f"{counted(len(self.skipped), 'thing')} skipped ({self.skipped_by_kind()})"
            )
        if self.untimed:
            parts.append(f"{counted(self.untimed, 'turn')} had no time in the file")
        return "; ".join(parts) + "."

    def lines(self) -> list[str]:
        """Every conversation already there, note and skipped thing, one line each."""
        return [*map(str, self.already), *self.notes, *map(str, self.skipped)]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "conversations": self.total,
            "sessions": [r.session for r in self.imported],
            "turns": self.turns,
            "branches": self.branches,
            "already_imported": [{"title": a.title, "session": a.session} for a in self.already],
            "skipped": [str(s) for s in self.skipped],
            "skipped_items": [
                {"kind": s.kind, "where": s.where, "why": s.why, "conversation": s.conversation}
                for s in self.skipped
            ],
            # per session, the turn numbers no time in the file dated (dated when imported)
            "untimed_turns": {r.session: list(r.untimed) for r in self.imported if r.untimed},
        }


def _kind(skipped: Skipped) -> str:
    """The kind a summary counts: "file" for every named file ("file notes.pdf")."""
    return "file" if skipped.kind.startswith("file ") else skipped.kind


FORMAT_NAMES = {"openai": "OpenAI chat JSON", "chatgpt": "ChatGPT", "openwebui": "Open WebUI"}


def _importable(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A path with anything before the first user message (but a system one) dropped: apps
    start chats with a greeting of their own; the ledger starts a turn with the user."""
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if first_user is None:
        return list(messages)
    kept = [m for m in messages[:first_user] if m.get("role") == "system"][:1]
    return kept + list(messages[first_user:])


def import_steps(
    ledger: Ledger, read: ReadFile, report: BatchReport, known: Origins | None = None
) -> Iterator[int]:
    """Import `read`'s conversations into `ledger`, filling `report`; yields the count done
    after each one (stop iterating to stop: what is written stays). `known`: the ledger's
    origins, read once by a caller that imports a file in many reads (else read here)."""
    report.skipped.extend(read.skipped)
    known = known if known is not None else Origins.read(ledger)
    for done, conversation in enumerate(read.conversations, 1):
        name = f"“{conversation.title}”" if conversation.title else f"conversation {done}"
        sums = read.digests[done - 1] if done <= len(read.digests) else ""
        source = origin(read.format, conversation.source_id, sums or digest(conversation.document))
        same = known.same(source)
        if same is not None:
            title = ledger.session(same).title
            report.already.append(AlreadyImported(conversation.title, same, title))
            yield done
            continue
        try:
            imported = _import(ledger, conversation, source, report)
        except ConversationFormatError as exc:
            why = str(exc)
            report.skipped.append(Skipped("conversation", f"item {done}", why, conversation.title))
        else:
            older = known.older(source)
            if older is not None:
                was = ledger.session(older).title or "Untitled"
                note = f"{name}: changed since it was imported as “{was}”: imported anew beside it"
                report.notes.append(note)
            known.add(imported.session, source)
            report.imported.append(imported)
            report.skipped.extend(conversation.skipped)
        yield done


def _import(
    ledger: Ledger, conversation: Conversation, source: dict[str, str], report: BatchReport
) -> ImportReport:
    document = conversation.document
    shown = {**document, "messages": _importable(document.get("messages", []))}
    branches = []
    for n, path in enumerate(conversation.branches, 1):
        kept = _importable(path)
        if any(m.get("role") == "user" for m in kept):
            branches.append(kept)
        else:  # a regenerated greeting: no turn to hang it on
            why = "it holds no user message"
            report.skipped.append(Skipped("branch", f"branch {n}", why, conversation.title))
    return import_openai(ledger, shown, conversation.title, branches, source)


def import_all(ledger: Ledger, read: ReadFile, known: Origins | None = None) -> BatchReport:
    """`import_steps` run to the end (the CLI)."""
    report = BatchReport(read.format, len(read.conversations))
    for _done in import_steps(ledger, read, report, known):
        pass
    return report
