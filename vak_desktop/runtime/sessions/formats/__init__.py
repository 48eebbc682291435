"""Conversation files of other apps, read into the OpenAI chat shape the ledger imports.

Each module turns one app's export into `Conversation`s (an OpenAI-format document: title,
model, messages) plus what it left out and why; `interchange.import_openai` writes each one the
way it writes any import, as its own session. Detection is by shape, never by file name:

- ChatGPT's `conversations.json`: a list of conversations, each a `mapping` tree of nodes
  (`message.author.role`, `message.content.parts`) with `current_node` the shown leaf.
- Open WebUI's chat export: a list of `{"chat": {"history": {"messages": {id: …},
  "currentId"}, "messages": […]}}`, or one such chat.
- The OpenAI shape itself: `{"messages": […]}`, or a list of them.

A tree export keeps every branch: `tree` walks it into root-to-leaf paths (the shown one last),
each a list of OpenAI messages carrying their source `id`, so the paths' shared beginnings are
written once and their forks become message versions. What cannot be kept is a `Skipped` item
(its kind, its position, why). Pure functions over parsed JSON: no ledger, no I/O; an image's
bytes come through an `Assets` the caller opens (`runtime/sessions/assets.py`). `markdown`
writes a session as Markdown.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Skipped:
    """One thing an import left out: its kind ("image", "file", "message" …), where it was
    ("message 4", "item 2") and why."""

    kind: str
    where: str
    why: str
    conversation: str = ""  # the conversation's title, when the thing was inside one

    def __str__(self) -> str:
        lead = f"“{self.conversation}”: " if self.conversation else ""
        return f"{lead}skipped: {self.kind} in {self.where} ({self.why})"


class Assets(Protocol):
    """The files an export holds beside its JSON (ChatGPT's `file-…` images)."""

    def find(self, file_id: str) -> bytes | None:
        """The bytes of the file named by `file_id`, None when the export does not hold it."""
        ...


class NoAssets:
    """An export read without its folder: no file is given."""

    def find(self, file_id: str) -> bytes | None:
        return None


@dataclass(frozen=True)
class Conversation:
    """One conversation in the OpenAI chat shape, ready for `import_openai`: its shown path in
    `document`, every other branch as a whole root-to-leaf path in `branches`."""

    document: dict[str, Any]  # {"title", "model", "messages": [...]}
    skipped: tuple[Skipped, ...] = ()  # what was left out of it, and why
    branches: tuple[tuple[dict[str, Any], ...], ...] = ()  # the other paths, messages by `id`
    source_id: str = ""  # the source app's id of the conversation ("" when it has none)

    @property
    def title(self) -> str:
        return str(self.document.get("title", ""))


@dataclass(frozen=True)
class ReadFile:
    """What a file held: its format, its conversations, and what could not be read at all."""

    format: str  # "openai", "chatgpt", "openwebui"
    conversations: tuple[Conversation, ...]
    skipped: tuple[Skipped, ...] = field(default_factory=tuple)
    digests: tuple[str, ...] = ()  # per conversation, the digest of its source item


def digest(item: Any) -> str:
    """A conversation's content digest: SHA-256 of its source item as canonical JSON."""
    text = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class UnknownFormat(ValueError):
    """Not a conversation file this app reads; the message says what was expected."""


def _items(document: Any) -> list[Any]:
    """The conversations of a file: its list, the list some exports wrap as
    `{"conversations": [...]}`, or the one object it is."""
    if isinstance(document, dict) and isinstance(document.get("conversations"), list):
        document = document["conversations"]
    return document if isinstance(document, list) else [document]


def detect(document: Any) -> str:
    """'openai', 'chatgpt' or 'openwebui' for a parsed file (UnknownFormat otherwise)."""
    items = _items(document)
    first = next((item for item in items if isinstance(item, dict)), None)
    if first is None:
        raise UnknownFormat("expected a JSON object or a list of conversations")
    if "mapping" in first:
        return "chatgpt"
    chat = first.get("chat")
    if isinstance(chat, dict) and ("history" in chat or "messages" in chat):
        return "openwebui"
    if "history" in first and isinstance(first.get("history"), dict):
        return "openwebui"  # a bare chat object, without its export wrapper
    if isinstance(first.get("messages"), list):
        return "openai"
    raise UnknownFormat(
        'not a conversation export: expected OpenAI chat JSON ({"messages": [...]}), '
        "ChatGPT's conversations.json or an Open WebUI chat export"
    )


def read_conversations(document: Any, assets: Assets | None = None) -> ReadFile:
    """Every conversation in a parsed file, in the OpenAI shape, with what was skipped;
    `assets` gives the files the export holds beside it (none by default)."""
    from vak_desktop.runtime.sessions.formats import chatgpt, openwebui

    kind = detect(document)
    items = _items(document)
    if kind == "chatgpt":
        return chatgpt.read(items, assets or NoAssets())
    if kind == "openwebui":
        return openwebui.read(items)
    conversations, skipped, digests = [], [], []
    for i, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("messages"), list):
            conversations.append(Conversation(item, source_id=str(item.get("id") or "")))
            digests.append(digest(item))
        else:
            skipped.append(Skipped("item", f"item {i + 1}", "not an OpenAI chat document"))
    return ReadFile("openai", tuple(conversations), tuple(skipped), tuple(digests))


def plain_text(value: Any) -> str:
    """A message content as text: a string, or the text of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [plain_text(part) for part in value]
        return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        return str(value.get("text") or value.get("content") or "")
    return ""
