"""Dated headers: when a transcript's text says its lines were said.

Transcripts of long conversations date their sessions in the text — "[1:56 pm on 8 May, 2023]",
"Session 3 — 8 May 2023", "2023-05-08 13:56". An import dates a message by the header it opens
with (`runtime/sessions/formats/times.py`); a header further down a message dates the lines
after it (`dated_parts`): a session's first line joined to the message before it, a pasted log
with a dated section per day. A passage of those lines is shown with that day, and "yesterday"
in them is resolved against it, not against the day the message began. Pure: no clock is read.
"""

from __future__ import annotations

import re
from datetime import datetime, time

from vak_desktop.context.planning.dates import first_day_named

_CLOCK_AT = re.compile(
    r"(?P<hour>\d{1,2})[:.](?P<minute>\d{2})(?::\d{2})?\s*(?P<half>[ap]\.?m\.?)?", re.IGNORECASE
)
HEADER_CHARS = 120  # a dated header is a short first line (or a bracketed lead), not prose
LABEL_WORDS = 4  # what a header line may hold beside its date: "Session 3 —", "Date:", "on"


# a line that may be a dated header: short, and holding a year (every date pattern has one);
# looked for in a message's first SCANNED characters (more than its passages index: a pasted
# 5 MB log with a date on every line would otherwise cost seconds a request)
SCANNED = 65_536
_HEADER_LINE = re.compile(rf"^[^\n]{{0,{HEADER_CHARS}}}?\b\d{{4}}\b[^\n]*$", re.MULTILINE)


def header_time(text: str) -> str:
    """The time a dated header at the start of `text` gives ("[1:56 pm on 8 May, 2023] …", a
    first line "Session 3 — 8 May 2023"), as ISO-8601; "" when its lead holds no date."""
    lead = text.lstrip()
    if lead.startswith("["):
        end = lead.find("]")
        lead = lead[1:end] if 0 < end <= HEADER_CHARS else ""
    else:
        lead = lead.split("\n", 1)[0]
        if len(lead) > HEADER_CHARS:
            return ""
    found = first_day_named(lead)  # "8 May, 2023", "May 8, 2023", "2023-05-08"
    if found is None:
        return ""
    day, first, last = found
    rest = lead[:first] + " " + lead[last:]  # a label, and a clock before or after the day
    if len(_CLOCK_AT.sub(" ", rest).split()) > LABEL_WORDS and text.lstrip()[:1] != "[":
        return ""  # a date inside a sentence is what it says, not when it was said
    return datetime.combine(day, time(*_clock(rest))).strftime("%Y-%m-%dT%H:%M:%SZ")


def dated_parts(text: str, said_at: str) -> list[tuple[str, str]]:
    """`text` cut before each line that is a dated header, each part with when its lines were
    said: the first part at `said_at`, each later one at its header's time (ISO-8601). The
    parts joined are `text`; a text with no dated header below its first line is one part, and
    so is all that follows its first `SCANNED` characters."""
    if "\n" not in text:  # a header below the first line starts a line: one line is one part
        return [(text, said_at)]
    parts: list[tuple[str, str]] = []
    start, when = 0, said_at
    for found in _HEADER_LINE.finditer(text, 0, SCANNED):
        if found.start() == 0 or len(found.group()) > HEADER_CHARS:
            continue  # the opening header dates the message itself (its import read it)
        moment = header_time(found.group())
        if not moment:
            continue
        parts.append((text[start : found.start()], when))
        start, when = found.start(), moment
    parts.append((text[start:], when))
    return parts


def _clock(text: str) -> tuple[int, int]:
    """The hour and minute a header's clock gives ("1:56 pm" → 13, 56), else midnight."""
    found = _CLOCK_AT.search(text)
    if found is None:
        return 0, 0
    hour, minute = int(found.group("hour")), int(found.group("minute"))
    half = (found.group("half") or "").lower().replace(".", "")
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return (hour, minute) if hour < 24 and minute < 60 else (0, 0)
