"""The chat template's own markup left at the edge of a model's answer.

Qwen2.5's chat template wraps the offered tools in `<tools>` … `</tools>`. The real 1.5B
sometimes opens a good answer with the bare tag ("<tools>\n\nThe hall is booked for 46
guests…": 2 of 12 answers in one efficacy run, 1 of 4 fresh answers in the next; issue #22).
The words after it are the answer, so the tag is cut from what is shown and kept, and the
step is not redone. Markup that *is* the reply (`<tool_response>` echoed back, a call written
as text) is `answering.not_an_answer`'s to judge, not this module's.
"""

from __future__ import annotations

import re

from vak_desktop.context.payloads import Activity

_TAGS = ("<tools>", "</tools>")
_EDGE = re.compile(r"\A\s*</?tools>\s*|\s*</?tools>\s*\Z", re.I)

MARKUP_CUT = "markup_cut"  # Activity: a stray template tag cut from a step's text


def stray_markup(text: str) -> str:
    """`text` without a lone `<tools>` or `</tools>` at its start or end."""
    return _EDGE.sub("", text)


def opening_markup(text: str) -> tuple[str, bool]:
    """What a stream's first text may show: (`text` with a whole stray tag cut from its start,
    whether its start could still become one, so it waits for the next chunk)."""
    head = text.lstrip()
    for tag in _TAGS:
        if head[: len(tag)].lower() == tag:
            return head[len(tag) :].lstrip(), False
        if tag.startswith(head.lower()):  # "", "<", "<to" …: not known yet
            return text, True
    return text, False


def markup_activity(raw: str, step: int) -> Activity:
    """The step's text as the model wrote it, kept where the answer shows it without the tag."""
    return Activity(
        type=MARKUP_CUT,
        message=f"step {step}'s text had the chat template's <tools> tag at its edge: cut "
        "from the answer, kept here",
        detail={"step": step, "text": raw},
    )
