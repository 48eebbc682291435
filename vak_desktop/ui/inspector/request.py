"""The Request panel: the exact request a step sent — system, tools, messages — rebuilt from the
ledger (`runtime/inspection/replay.py`), with the stable prefix and the tail marked and the prefix digest.

The rebuild is checked against the step's Receipt (prefix digest, characters, message count),
and the panel says plainly whether it matches, so what it shows is never a guess passed off as
the truth.
"""

from __future__ import annotations

import json
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.context.planning.assemble import AssembledRequest
from vak_desktop.context.request import Message
from vak_desktop.runtime.inspection.replay import NotReplayable, SentRequest
from vak_desktop.ui.inspector.source import NEXT, Inspection

PREFIX_TINT = QColor(37, 99, 235)
TAIL_TINT = QColor(217, 119, 6)
HISTORY_TINT = QColor(120, 120, 120)


def blend(tint: QColor, base: QColor, amount: float) -> str:
    """`tint` laid over `base` at `amount` opacity, as #rrggbb (Qt's rich text has no alpha)."""
    pairs = ((tint.red(), base.red()), (tint.green(), base.green()), (tint.blue(), base.blue()))
    mix = [round(t * amount + b * (1 - amount)) for t, b in pairs]
    return "#{:02x}{:02x}{:02x}".format(*mix)


def _pre(text: str) -> str:
    return f"<pre style='white-space:pre-wrap; margin:2px 0'>{escape(text)}</pre>"


def _message_html(index: int, message: Message, tail: str, tail_box: str) -> str:
    """One message; a user message that opens with `tail` shows it as `tail_box` first."""
    label = message.role
    if message.role == "tool":
        label = f"tool result · {message.tool_name} · {message.tool_call_id}"
    parts = [f"<p style='margin:6px 0 0 0'><b>[{index}] {escape(label)}</b></p>"]
    content = message.content
    if tail and message.role == "user" and content.startswith(tail):
        parts.append(tail_box)
        content = content[len(tail) :].lstrip("\n")
    if message.thinking:
        parts.append(f"<p style='margin:0'><i>thinking:</i></p>{_pre(message.thinking)}")
    if content:
        parts.append(_pre(content))
    for call in message.tool_calls:
        args = escape(json.dumps(call.arguments, ensure_ascii=False))
        parts.append(
            f"<p style='margin:0'>→ calls <code>{escape(call.name)}</code> {args}"
            f" as <code>{escape(call.id)}</code></p>"
        )
    if message.images:
        parts.append(f"<p style='margin:0'><i>{len(message.images)} image(s)</i></p>")
    return "".join(parts)


class RequestPanel(QWidget):
    """Shows one step's rebuilt request; `show_turn` picks the turn, the combo the step."""

    def __init__(self, inspection: Inspection, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._inspection = inspection
        self._turn = NEXT
        self.sent: SentRequest | None = None
        self.step = QComboBox()
        self.step.setObjectName("requestStep")
        self.step.setAccessibleName("Step of the turn")
        self.step.activated.connect(self._show_step)
        self.status = QLabel()
        self.status.setObjectName("requestCheck")
        self.status.setAccessibleName("Whether the rebuilt request matches the receipt")
        self.status.setWordWrap(True)
        self.digest = QLabel()
        self.digest.setObjectName("prefixDigest")
        self.digest.setAccessibleName("Prefix digest")
        self.digest.setWordWrap(True)
        self.digest.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body = QTextBrowser()
        self.body.setObjectName("requestBody")
        self.body.setAccessibleName("The request, message by message")
        self.body.setOpenLinks(False)
        row = QHBoxLayout()
        label = QLabel("Step")
        label.setAccessibleName("Step label")
        row.addWidget(label)
        row.addWidget(self.step)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.digest)
        layout.addWidget(self.body, 1)

    def show_turn(self, turn_id: str) -> None:
        self._turn = turn_id
        steps = self._inspection.steps_of(turn_id) if turn_id != NEXT else []
        self.step.clear()
        for step in steps:
            self.step.addItem(f"{step + 1} of {len(steps)}", step)
        self.step.setEnabled(len(steps) > 1)
        self._show_step()

    def _show_step(self, *_args: object) -> None:
        step = self.step.currentData()
        self.sent = None
        if self._turn == NEXT:
            self._show_preview()
            return
        if step is None:
            self._show_note()
            return
        try:
            sent = self._inspection.request_for(self._turn, int(step))
        except NotReplayable as exc:
            self.status.setText(f"Cannot rebuild this request: {exc}.")
            self.digest.clear()
            self.body.clear()
            return
        self.sent = sent
        receipt = sent.receipt
        if sent.matches:
            self.status.setText(
                f"✓ Rebuilt from the ledger; matches the receipt: {receipt.request_chars:,} "
                f"characters in {receipt.request_messages} messages, num_ctx "
                f"{receipt.num_ctx:,}, {receipt.usage.prompt_tokens():,} prompt tokens counted."
            )
        else:
            why = (
                "the tools or system prompt differ from the ones it was sent with"
                if not sent.prefix_matches
                else f"{sent.chars:,} characters rebuilt, {receipt.request_chars:,} sent"
            )
            self.status.setText(f"⚠ Rebuilt, but it does not match the receipt: {why}.")
        self._show_digest(
            f"Prefix digest {_short(sent.request.prefix_digest)} (receipt: "
            f"{_short(receipt.prefix_digest)})"
            if not sent.prefix_matches
            else f"Prefix digest {_short(receipt.prefix_digest)}",
            f"sent {sent.request.prefix_digest}\nreceipt {receipt.prefix_digest}",
        )
        self.body.setHtml(self.request_html(sent.request, sent.history_messages, sent.step))

    def _show_digest(self, text: str, whole: str) -> None:
        """The digest cut to fit the dock (a 67-character hex run cannot wrap); the whole one in
        its tooltip."""
        self.digest.setText(text)
        self.digest.setToolTip(whole)

    def _show_preview(self) -> None:
        """The next request, as `vak request` builds it: planned now, not sent."""
        preview = self._inspection.preview_request()
        if preview is None:
            self._show_note()
            return
        request = preview.request
        self.status.setText(
            f"Not sent yet: the request sending now would carry (what `vak request` prints), "
            f"≈{preview.request_tokens:,} tokens, num_ctx {preview.num_ctx:,}. Your message "
            "goes after the tail."
        )
        self._show_digest(f"Prefix digest {_short(request.prefix_digest)}", request.prefix_digest)
        history = len(request.messages) - 2  # the system prompt and the new directive
        self.body.setHtml(self.request_html(request, history, None))

    def _show_note(self) -> None:
        self.status.setText(
            "This turn recorded no request: it ended before the model was asked."
            if self._inspection.session
            else "Start or open a chat, and pick a model, to see its requests."
        )
        self.digest.clear()
        self.body.clear()

    def request_html(
        self, request: AssembledRequest, history_messages: int, step: int | None
    ) -> str:
        """The request as HTML: the prefix, the history and the current turn, each marked.
        `step` is the step it was sent for (None: the next request, not sent yet)."""
        base = self.palette().color(QPalette.ColorRole.Base)
        prefix_bg = blend(PREFIX_TINT, base, 0.12)
        tail_bg = blend(TAIL_TINT, base, 0.16)
        history_bg = blend(HISTORY_TINT, base, 0.08)
        tail = request.tail

        def box(title: str, colour: str, inner: str) -> str:
            return (
                f"<table width='100%' cellpadding='8' cellspacing='0' style='margin:6px 0'>"
                f"<tr><td bgcolor='{colour}'><p style='margin:0'><b>{title}</b></p>{inner}"
                "</td></tr></table>"
            )

        tools = "".join(
            f"<p style='margin:4px 0 0 0'><code>{escape(t.name)}</code> — "
            f"{escape(t.description)}</p>"
            f"<p style='margin:0; font-family:monospace; font-size:small'>"
            f"{escape(json.dumps(t.parameters, ensure_ascii=False, separators=(', ', ': ')))}</p>"
            for t in request.tools
        )
        prefix = box(
            f"Stable prefix: the system prompt and {len(request.tools)} tool schemas, identical "
            "every turn so the cache hits",
            prefix_bg,
            f"<p style='margin:4px 0 0 0'><b>[0] system</b></p>{_pre(request.system)}"
            + (tools or "<p><i>no tools</i></p>"),
        )
        messages = request.messages
        history_end = 1 + history_messages
        history = (
            "".join(_message_html(i, messages[i], "", "") for i in range(1, history_end))
            or "<p><i>No earlier turns.</i></p>"
        )
        tail_box = box("Tail (this turn only: time, stance, thread)", tail_bg, _pre(tail))
        current = [
            _message_html(i, messages[i], tail, tail_box) for i in range(history_end, len(messages))
        ]
        last = len(messages) - 1
        contents = (
            f"<p style='margin:0 0 4px 0'>{len(messages)} messages: [0] the prefix · "
            + (f"[1–{history_end - 1}] earlier turns · " if history_end > 2 else "")
            + ("[1] earlier turns · " if history_end == 2 else "")
            + (f"[{history_end}–{last}]" if last > history_end else f"[{last}]")
            + (
                f" this turn, up to step {step + 1}</p>"
                if step is not None
                else " the next turn</p>"
            )
        )
        return (
            contents
            + prefix
            + box(
                f"History: {history_messages} messages (earlier turns as planned)",
                history_bg,
                history,
            )
            + box("Current turn", blend(HISTORY_TINT, base, 0.0), "".join(current))
        )


def _short(digest: str) -> str:
    """ "b3:3c64bfebab1753f0…": enough to tell two digests apart at a glance."""
    return digest if len(digest) <= 22 else digest[:19] + "…"
