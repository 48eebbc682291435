"""Open WebUI's chat export (Settings → Chats → Export, or a chat's ⋯ → Download → JSON).

The export is a list of `{"id", "title", "chat": {"title", "models", "history": {"currentId",
"messages": {id: {"id", "parentId", "childrenIds", "role", "content", "model", "files"}}},
"messages": [...]}}`; a single downloaded chat may be one such object (or its bare `chat`).
The shown conversation is the path from the root to `history.currentId`; without a history the
flat `chat.messages` list is read in order. Kept: system, user and assistant text, and each
message's `timestamp` (epoch seconds: the turn keeps the time it was said). Left out and
reported: attached files and images (the export names them, it does not hold them), and
messages whose content is not text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vak_desktop.runtime.sessions.formats import Conversation, ReadFile, path_to, plain_text

ROLES = ("system", "user", "assistant")


def _chat(item: dict[str, Any]) -> dict[str, Any]:
    chat = item.get("chat")
    return chat if isinstance(chat, dict) else item


def _history_path(history: dict[str, Any]) -> list[dict[str, Any]]:
    messages = history.get("messages")
    if not isinstance(messages, dict) or not messages:
        return []
    cursor = history.get("currentId")
    if cursor not in messages:
        cursor = next(reversed(messages))
    return path_to(messages, cursor, "parentId")


def convert(item: dict[str, Any], number: int) -> Conversation:
    """One Open WebUI chat as an OpenAI chat document."""
    chat = _chat(item)
    title = str(item.get("title") or chat.get("title") or f"Open WebUI chat {number}")
    history = chat.get("history")
    raw = _history_path(history) if isinstance(history, dict) else []
    if not raw and isinstance(chat.get("messages"), list):
        raw = [m for m in chat["messages"] if isinstance(m, dict)]
    models = chat.get("models") if isinstance(chat.get("models"), list) else []
    model = str(models[0]) if models else ""
    messages: list[dict[str, Any]] = []
    skipped: list[str] = []
    for message in raw:
        role = str(message.get("role", ""))
        where = f"“{title}”"
        if role not in ROLES:
            skipped.append(f"{where}: a {role or 'role-less'} message")
            continue
        files = message.get("files") or []
        if files:
            skipped.append(f"{where}: {len(files)} attached file(s) (not in the export)")
        text = plain_text(message.get("content"))
        if not text.strip():
            continue
        if role == "system" and messages:
            continue
        model = str(message.get("model") or model)
        said = {"timestamp": message["timestamp"]} if message.get("timestamp") else {}
        messages.append({"role": role, "content": text, **said})
    return Conversation({"title": title, "model": model, "messages": messages}, tuple(skipped))


def read(items: Sequence[Any]) -> ReadFile:
    conversations, skipped = [], []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            skipped.append(f"item {i}: not an Open WebUI chat")
            continue
        conversations.append(convert(item, i))
    return ReadFile("openwebui", tuple(conversations), tuple(skipped))
