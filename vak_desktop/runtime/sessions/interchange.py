"""Import and export of conversations in the OpenAI chat format.

`{"messages": [...]}` with `system`, `user`, `assistant` (optionally `tool_calls`) and `tool`
messages is what most tools exchange. Import (`writing.py`) writes the same entries a live turn
would (Directive, AssistantStep, EvidenceBody + ToolResult, a closing Activity), every branch of
a tree export as message versions; export writes the shown branch, tool results back in full
from their evidence, so an export never carries a windowed result.

Time is kept: a message's optional `timestamp` (ISO-8601 or epoch seconds; the other formats fill
it from ChatGPT's `create_time` and Open WebUI's `timestamp`), else a dated header at the start
of its text ("[1:56 pm on 8 May, 2023] …"), becomes its entry's `said_at`; a turn with no time of
its own takes the latest one before it (a dated session header dates the session's turns), and
the report names the turns that had none at all (they are dated when imported).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from vak_desktop.context.payloads import AssistantStep, EvidenceBody, ToolResult
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.providers.openai_wire import function_calls
from vak_desktop.runtime.sessions.formats import digest
from vak_desktop.runtime.sessions.openai_messages import ConversationFormatError, check
from vak_desktop.runtime.sessions.writing import ImportReport, write_paths

__all__ = ["ConversationFormatError", "ImportReport", "export_openai", "import_openai"]


def import_openai(
    ledger: Ledger,
    document: Any,
    title: str = "",
    branches: Sequence[Sequence[dict[str, Any]]] = (),
    origin: dict[str, Any] | None = None,
) -> ImportReport:
    """Write the conversation in `document` into a new session, with the other `branches` of
    its tree (whole root-to-leaf paths) as message versions; `origin` names its source
    (default: an OpenAI document, by its digest)."""
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        raise ConversationFormatError('expected a JSON object with a "messages" list')
    paths = [*branches, document["messages"]]
    for path in paths:
        check(list(path))  # every format error before a byte is written
    conversation = str(document.get("id") or "")
    origin = origin or {
        "source": "openai",
        "conversation": conversation,
        "digest": digest(document),
    }
    # in chunks, so that other writers are not starved; shown only once whole (`staged`)
    with ledger.staged():
        return write_paths(
            ledger,
            paths,
            str(document.get("model", "")),
            title or str(document.get("title", "")),
            origin,
        )


def _mime(image_base64: str) -> str:
    """The image type from its leading bytes (stored images carry no type of their own)."""
    head = base64.b64decode(image_base64[:24] + "=" * (-len(image_base64[:24]) % 4))
    for magic, mime in (
        (b"\x89PNG", "image/png"),
        (b"\xff\xd8", "image/jpeg"),
        (b"GIF8", "image/gif"),
    ):
        if head.startswith(magic):
            return mime
    return "image/webp" if head[8:12] == b"WEBP" else "application/octet-stream"


def export_openai(ledger: Ledger, session: str) -> dict[str, Any]:
    """The session's current branch as an OpenAI-format document, tool results in full."""
    info = ledger.session(session)
    turns = split_turns(ledger.chain_to_root(session))
    messages: list[dict[str, Any]] = []
    if turns and turns[0].directive.system:
        messages.append({"role": "system", "content": turns[0].directive.system})
    for turn in turns:
        directive = turn.directive
        if directive.images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": directive.text}]
            parts += [
                {"type": "image_url", "image_url": {"url": f"data:{_mime(image)};base64,{image}"}}
                for image in directive.images
            ]
            messages.append({"role": "user", "content": parts})
        else:
            messages.append({"role": "user", "content": directive.text})
        if directive.said_at:  # the source time an import kept goes back out with it
            messages[-1]["timestamp"] = directive.said_at
        for entry in turn.entries:
            payload = entry.payload
            if isinstance(payload, AssistantStep):
                message: dict[str, Any] = {"role": "assistant", "content": payload.text}
                if payload.tool_calls:
                    message["tool_calls"] = function_calls(payload.tool_calls)
                messages.append(message)
            elif isinstance(payload, ToolResult):
                body = ledger.entry(payload.evidence).payload
                content = body.content if isinstance(body, EvidenceBody) else payload.content
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": payload.tool_call_id,
                        "name": payload.tool_name,
                        "content": content,
                    }
                )
    model = turns[-1].directive.model if turns else ""
    return {"title": info.title, "model": model, "messages": messages}
