"""Where an imported session came from, read back: so the same conversation is imported once.

Each imported session begins with an `imported` Activity (`writing.py`) whose detail is its
origin: `{"source": "chatgpt" | "openwebui" | "openai", "conversation": the source's id ("" when
it has none), "digest": SHA-256 of the source item}`. `Origins` reads every such entry once (one
indexed pass over activities) and answers, for a conversation about to be imported, the session
that already holds that very content, or one that holds an older copy of it. Sessions an import
left unfinished (staged, never shown) do not count; archived ones do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vak_desktop.context.payloads import Activity
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.writing import IMPORTED


def origin(source: str, conversation: str, digest: str) -> dict[str, str]:
    return {"source": source, "conversation": conversation, "digest": digest}


@dataclass
class Origins:
    """The origins of the ledger's imported sessions: exact copies and same-id ones."""

    exact: dict[tuple[str, str, str], str] = field(default_factory=dict)
    by_id: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def read(cls, ledger: Ledger) -> Origins:
        shown = {info.id for info in ledger.sessions(include_archived=True)}
        found = cls()
        for entry in ledger.entries_of_kind(Activity.KIND):
            payload = entry.payload
            if not isinstance(payload, Activity) or payload.type != IMPORTED:
                continue
            if entry.session in shown:
                found.add(entry.session, {k: str(v) for k, v in payload.detail.items()})
        return found

    def add(self, session: str, detail: dict[str, str]) -> None:
        source, conversation = detail.get("source", ""), detail.get("conversation", "")
        self.exact[(source, conversation, detail.get("digest", ""))] = session
        if conversation:
            self.by_id[(source, conversation)] = session

    def same(self, detail: dict[str, str]) -> str | None:
        """The session already holding exactly this conversation, if any."""
        return self.exact.get((detail["source"], detail["conversation"], detail["digest"]))

    def older(self, detail: dict[str, str]) -> str | None:
        """A session holding another copy of this conversation (it changed since), if any."""
        if not detail["conversation"]:
            return None
        return self.by_id.get((detail["source"], detail["conversation"]))
