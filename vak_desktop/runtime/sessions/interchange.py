"""Import and export of conversations in the OpenAI chat format.

`{"messages": [...]}` with `system`, `user`, `assistant` (optionally `tool_calls`) and `tool`
messages is what most tools exchange. Import writes the same entries a live turn would
(Directive, AssistantStep, EvidenceBody + ToolResult, a closing Activity); export writes tool
results back in full from their evidence, so an export never carries a windowed result.

Time is kept: a message's optional `timestamp` (ISO-8601 or epoch seconds; the other formats fill
it from ChatGPT's `create_time` and Open WebUI's `timestamp`), else a dated header at the start
of its text ("[1:56 pm on 8 May, 2023] …"), becomes its entry's `said_at`; a turn with no time of
its own takes the latest one before it (a dated session header dates the session's turns), and
the report names the turns that had none at all (they are dated when imported).
"""

from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import TURN_CLOSED, split_turns
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.providers.openai_wire import function_calls
from vak_desktop.runtime.sessions.formats.times import header_time, source_time

ROLES = ("system", "user", "assistant", "tool")


class ConversationFormatError(ValueError):
    """The document is not a conversation we can import; the message says where."""


@dataclass(frozen=True)
class ImportReport:
    session: str
    turns: int
    entries: int
    untimed: tuple[int, ...] = ()  # turn numbers no source time dated (dated when imported)
    inherited: int = 0  # turns without a time of their own, dated by the latest one before


def _text_and_images(content: Any, where: str) -> tuple[str, tuple[str, ...]]:
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        raise ConversationFormatError(f"{where}.content must be a string or a list of parts")
    texts, images = [], []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            if not url.startswith("data:") or ";base64," not in url:
                raise ConversationFormatError(
                    f"{where}.content[{i}]: only inline base64 images import"
                )
            images.append(url.split(";base64,", 1)[1])
        else:
            raise ConversationFormatError(f"{where}.content[{i}]: unknown part type {kind!r}")
    return "\n".join(texts), tuple(images)


def _tool_calls(raw: Any, where: str) -> tuple[ToolCall, ...]:
    if raw in (None, []):
        return ()
    if not isinstance(raw, list):
        raise ConversationFormatError(f"{where}.tool_calls must be a list")
    calls = []
    for i, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise ConversationFormatError(f"{where}.tool_calls[{i}] has no function name")
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = {"_unparsed": arguments}  # kept as written, nothing dropped
        if not isinstance(arguments, dict):
            arguments = {"_value": arguments}
        calls.append(ToolCall(str(call.get("id") or f"call_{i}"), function["name"], arguments))
    return tuple(calls)


def import_openai(ledger: Ledger, document: Any, title: str = "") -> ImportReport:
    """Write the conversation in `document` into a new session."""
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        raise ConversationFormatError('expected a JSON object with a "messages" list')
    messages = document["messages"]
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            role = message.get("role") if isinstance(message, dict) else message
            raise ConversationFormatError(
                f"messages[{i}]: role {role!r} is not one of {', '.join(ROLES)}"
            )
    if not any(m["role"] == "user" for m in messages):
        raise ConversationFormatError("the conversation has no user message")
    _check(messages)  # every format error before a byte is written
    # in chunks, so that other writers are not starved; shown only once whole (`staged`)
    with ledger.staged():
        return _write(ledger, messages, str(document.get("model", "")), title, document)


def _check(messages: list[Any]) -> None:
    """Raise the ConversationFormatError `_write` would meet, before it writes anything: a
    staged import commits as it goes, so a file rejected half-way must be rejected first."""
    in_turn = False
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message["role"]
        text, _images = _text_and_images(message.get("content"), where)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConversationFormatError(
                f"{where}: text is not valid Unicode (lone surrogate at character {exc.start + 1})"
            ) from None
        if role == "system":
            continue
        if role != "user" and not in_turn:
            raise ConversationFormatError(f"{where}: a {role} message before any user message")
        in_turn = True
        if role == "assistant":
            _tool_calls(message.get("tool_calls"), where)


def _write(
    ledger: Ledger, messages: list[Any], model: str, title: str, document: dict[str, Any]
) -> ImportReport:
    session = ledger.create_session(title=title or str(document.get("title", "")))
    system, names, written, in_turn = "", {}, 0, False
    turn: list[Entry] = []  # the current turn's entries: closing it reads only these
    turns = 0
    known, untimed, inherited = "", [], 0  # the latest source time read, and the turns without
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message["role"]
        text, images = _text_and_images(message.get("content"), where)
        if role == "system":
            system = text
            continue
        own = source_time(message.get("timestamp")) if role != "tool" else ""
        if not own and role != "tool":
            own = header_time(text)
        known = own or known
        if role != "user" and not in_turn:
            raise ConversationFormatError(f"{where}: a {role} message before any user message")
        if role == "user":
            if in_turn:
                written += _close_imported(ledger, session.id, turn, turns)
                turns += 1
            if not own and known:
                inherited += 1
            elif not own:
                untimed.append(turns + 1)
            payload: Any = Directive(
                text=text, images=images, model=model, system=system, said_at=known
            )
            turn = []
            in_turn = True
        elif role == "assistant":
            calls = _tool_calls(message.get("tool_calls"), where)
            names.update({c.id: c.name for c in calls})
            thinking = str(message.get("reasoning_content") or message.get("thinking") or "")
            payload = AssistantStep(
                text=text, thinking=thinking, tool_calls=calls, model=model, said_at=own
            )
        else:
            call_id = str(message.get("tool_call_id", ""))
            name = str(message.get("name") or names.get(call_id, ""))
            body = ledger.append(
                session.id, EvidenceBody(call_id, name, content=text, chars=len(text))
            )
            turn.append(body)
            carried = carry(text, body.id)
            payload = ToolResult(
                call_id, name, carried.text, body.id, len(text), windowed=carried.windowed
            )
            written += 1
        turn.append(ledger.append(session.id, payload))
        written += 1
    written += _close_imported(ledger, session.id, turn, turns)
    return ImportReport(session.id, turns + 1, written, tuple(untimed), inherited)


def _close_imported(ledger: Ledger, session: str, entries: list[Entry], index: int) -> int:
    """Close the imported turn as a live one closes: its TurnCard, then the mark. Returns 2.
    The turn is built from its own entries (re-reading the chain each turn was quadratic:
    3,288 of 10,000 turns after 1,025 s)."""
    (turn,) = split_turns(entries)
    turn = dataclasses.replace(turn, index=index)
    ledger.append(session, build_turn_card(turn, "completed", FALLBACK_TOKENS_PER_CHAR))
    ledger.append(
        session, Activity(type=TURN_CLOSED, message="imported", detail={"outcome": "completed"})
    )
    return 2


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
