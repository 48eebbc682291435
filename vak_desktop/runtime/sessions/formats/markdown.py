"""A session's shown branch as Markdown, for reading or pasting elsewhere (File → Export).

A heading per chat, then each turn: the user's words, the model's answer (its text as the model
wrote it, so its own Markdown renders), and each tool call with its result in a fenced block.
Thinking is left out (it is not the answer); images are named, not inlined.
"""

from __future__ import annotations

import json

from vak_desktop.context.payloads import AssistantStep, EvidenceBody, ToolResult
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger


def _fence(text: str, info: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def export_markdown(ledger: Ledger, session: str) -> str:
    """The session's current branch as one Markdown document."""
    info = ledger.session(session)
    turns = split_turns(ledger.chain_to_root(session))
    out = [f"# {info.title or 'Chat'}", ""]
    if turns and turns[0].directive.system:
        out += ["<details><summary>System prompt</summary>", "", turns[0].directive.system]
        out += ["", "</details>", ""]
    for turn in turns:
        directive = turn.directive
        out += ["## You", "", directive.text, ""]
        if directive.images:
            out += [f"*({len(directive.images)} image(s) attached)*", ""]
        out += [f"## {directive.model or 'Assistant'}", ""]
        for entry in turn.entries:
            payload = entry.payload
            if isinstance(payload, AssistantStep):
                if payload.text.strip():
                    out += [payload.text.strip(), ""]
                for call in payload.tool_calls:
                    arguments = json.dumps(call.arguments, ensure_ascii=False)
                    out += [f"**Tool call** `{call.name}` {arguments}", ""]
            elif isinstance(payload, ToolResult):
                body = ledger.entry(payload.evidence).payload
                content = body.content if isinstance(body, EvidenceBody) else payload.content
                out += [f"**Result of** `{payload.tool_name}`:", "", _fence(content), ""]
    return "\n".join(out).rstrip() + "\n"
