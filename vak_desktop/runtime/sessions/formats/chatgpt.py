"""ChatGPT's `conversations.json` (Settings → Data controls → Export) as OpenAI chat documents.

Each conversation is `{"title", "create_time", "conversation_id", "mapping": {node_id: {"id",
"parent", "children", "message"}}, "current_node"}`. Every branch of the mapping tree (an edit,
a regenerated answer) is kept: `tree.leaf_paths` gives each root-to-leaf path, the one to
`current_node` last, and each node is read once by `chatgpt_parts.read_message` (so what it
skips is reported once, at its position: "message N" counts the messages ChatGPT showed, from
the root). The first system message of a path is its system prompt; a later one has no place
and is reported. Each message's `create_time` is kept as its `timestamp`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from vak_desktop.runtime.sessions.formats import (
    Assets,
    Conversation,
    ReadFile,
    Skipped,
    digest,
)
from vak_desktop.runtime.sessions.formats.chatgpt_parts import read_message
from vak_desktop.runtime.sessions.formats.tree import leaf_paths


def convert(conversation: dict[str, Any], number: int, assets: Assets) -> Conversation:
    """One ChatGPT conversation: its shown path as the document, the others as branches."""
    title = str(conversation.get("title") or f"ChatGPT conversation {number}")
    mapping = conversation.get("mapping") or {}
    read: dict[str, list[dict[str, Any]]] = {}
    skipped: list[Skipped] = []
    paths: list[list[dict[str, Any]]] = []
    for ids in leaf_paths(mapping, "parent", conversation.get("current_node")):
        messages: list[dict[str, Any]] = []
        position, pending = 0, None
        for key in ids:
            message = (mapping.get(key) or {}).get("message")
            if not isinstance(message, dict):
                continue  # the tree's root holds no message
            hidden = (message.get("metadata") or {}).get("is_visually_hidden_from_conversation")
            position += 0 if hidden else 1
            if key not in read:
                where = (
                    f"message {position}" if not hidden else f"a hidden message after {position}"
                )
                got, skips = read_message(key, message, where, pending, assets)
                if got and got[0]["role"] == "system" and messages:
                    skips = [Skipped("system message", where, "only one at the start has a place")]
                    got = []
                read[key] = got
                skipped += [dataclasses.replace(s, conversation=title) for s in skips]
            got = read[key]
            messages += got
            if got:
                calls = got[-1].get("tool_calls")
                pending = calls[0]["id"] if calls and got[-1]["role"] == "assistant" else None
        paths.append(messages)
    shown = paths[-1] if paths else []
    models = [str(m["model"]) for m in shown if m.get("model")]
    model = models[-1] if models else str(conversation.get("default_model_slug") or "")
    source = str(conversation.get("conversation_id") or conversation.get("id") or "")
    return Conversation(
        {"title": title, "model": model, "messages": shown},
        tuple(skipped),
        tuple(tuple(path) for path in paths[:-1]),
        source,
    )


def read(items: Sequence[Any], assets: Assets) -> ReadFile:
    conversations, skipped, digests = [], [], []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
            skipped.append(Skipped("item", f"item {i}", "not a ChatGPT conversation (no mapping)"))
            continue
        conversations.append(convert(item, i, assets))
        digests.append(digest(item))
    return ReadFile("chatgpt", tuple(conversations), tuple(skipped), tuple(digests))
