"""When an imported message was said: its source's timestamp, or a dated header in its text.

Exports record time differently: ChatGPT's `create_time` and Open WebUI's `timestamp` are epoch
seconds, the OpenAI shape has none of its own (Vak reads an optional `timestamp` per message,
ISO-8601 or epoch seconds), and transcripts of long conversations date a session in the text —
"[1:56 pm on 8 May, 2023]", "Session 3 — 8 May 2023", "2023-05-08 13:56". Each becomes one
ISO-8601 UTC string (a time written without a zone is kept as written, read as UTC), so a turn
keeps the day it was said. Pure: no clock is read; "" when no time is found.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month>[A-Za-z]{3,9})\.?"
_CLOCK = r"(?P<hour>\d{1,2})[:.](?P<minute>\d{2})(?::\d{2})?\s*(?P<half>[ap]\.?m\.?)?"
# "8 May, 2023", "May 8, 2023", "2023-05-08", each with an optional clock before or after
_DATES = (
    re.compile(rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(?P<year>\d{{4}})"),
    re.compile(rf"{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})"),
    re.compile(r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"),
)
_CLOCK_AT = re.compile(_CLOCK, re.IGNORECASE)
HEADER_CHARS = 120  # a dated header is a short first line (or a bracketed lead), not prose
LABEL_WORDS = 4  # what a header line may hold beside its date: "Session 3 —", "Date:", "on"


def source_time(value: Any) -> str:
    """A source's timestamp as ISO-8601 UTC: epoch seconds (or milliseconds) or an ISO string;
    "" for anything else (a bad value loses only the time, never the message)."""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int | float):
        if not math.isfinite(value) or value <= 0:
            return ""
        seconds = value / 1000 if value > 1e11 else value  # milliseconds, as some apps write
        try:
            moment = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return ""
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            return source_time(float(text))
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return header_time(text)
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return ""


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
    for pattern in _DATES:
        found = pattern.search(lead)
        if found is None:
            continue
        month_text = found.group("month")
        month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower(), 0)
        rest = lead[: found.start()] + " " + lead[found.end() :]
        if len(_CLOCK_AT.sub(" ", rest).split()) > LABEL_WORDS and text.lstrip()[:1] != "[":
            return ""  # a date inside a sentence is what it says, not when it was said
        hour, minute = _clock(rest)
        try:
            moment = datetime(
                int(found.group("year")), month, int(found.group("day")), hour, minute
            )
        except ValueError:
            continue
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return ""


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
