"""A chat's title, written by a side call after its first answer (spec §10).

Until then the sidebar shows the first words of the first message (`ledger.auto_title`), and
that stays the title whenever the side call cannot help (the server is busy or gone, the reply
is empty or a paragraph). The call follows the side-call rule: the cheapest capable model — the
one that just answered, which a local server still holds loaded, so it costs a short decode and
no load; a purpose-built packet — the first question and the start of the answer, never the
turn's history — and the binding's own `num_ctx`, since another one would make Ollama reload
the model. It runs after the turn closed and the turn never waits for it. A title the user
gave (a rename) is never replaced: the title is written only while it is still the automatic
one, checked again after the reply arrives.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re

from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.store import auto_title
from vak_desktop.providers.base import ChatProvider, TextDelta
from vak_desktop.runtime.capacity.binding import ModelBinding

TITLE_SYSTEM = (
    "You name chats. Reply with a title of two to six words for the conversation below: "
    "no quotes, no full stop, nothing else."
)
ANSWER_CHARS = 600  # the start of the answer is what the chat is about; the rest is detail
TITLE_MAX_TOKENS = 24
MAX_TITLE_CHARS = 60


def title_request(directive: Directive, answer: str, binding: ModelBinding) -> ChatRequest:
    """The side call's packet: the first question and the start of its answer."""
    excerpt = answer.strip()[:ANSWER_CHARS]
    return ChatRequest(
        model=binding.model,
        messages=(
            Message("system", TITLE_SYSTEM),
            Message(
                "user", f"User: {directive.text.strip()[:ANSWER_CHARS]}\n\nAssistant: {excerpt}"
            ),
        ),
        max_tokens=TITLE_MAX_TOKENS,
        think=False if "thinking" in binding.capabilities else None,
        temperature=0.2,
        num_ctx=binding.num_ctx,
    )


def clean_title(reply: str) -> str:
    """The model's reply as a title, or '' when it is not one (empty, or a paragraph)."""
    line = next((ln for ln in reply.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(title\s*:\s*)", "", line.strip(), flags=re.IGNORECASE)
    line = line.strip(" \t\"'“”‘’*#`").rstrip(".").strip()
    words = line.split()
    if not words or len(words) > 10 or len(line) > MAX_TITLE_CHARS:
        return ""
    return " ".join(words)


def wants_title(ledger: Ledger, session: str) -> Directive | None:
    """The first directive, if the session has exactly one finished turn and still carries the
    title taken from its words (no rename, no title written yet)."""
    turns = split_turns(ledger.chain_to_root(session))
    if len(turns) != 1 or not turns[0].answer.strip():
        return None
    directive = turns[0].directive
    if ledger.session(session).title != auto_title(directive.text):
        return None
    return directive


async def write_title(
    ledger: Ledger,
    session: str,
    provider: ChatProvider,
    binding: ModelBinding,
    *,
    keep_alive: str | int | None = None,
) -> str:
    """Ask for a title and write it; '' when the automatic title stays."""
    directive = wants_title(ledger, session)
    if directive is None:
        return ""
    answer = split_turns(ledger.chain_to_root(session))[0].answer
    request = title_request(directive, answer, binding)
    if keep_alive is not None:
        request = dataclasses.replace(request, keep_alive=keep_alive)
    parts: list[str] = []
    async with contextlib.aclosing(provider.stream(request)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
    title = clean_title("".join(parts))
    if not title or ledger.session(session).title != auto_title(directive.text):
        return ""  # nothing usable, or the user renamed it meanwhile
    ledger.rename_session(session, title)
    return title
