"""When an imported message was said: its source's timestamp, or a dated header in its text.

Exports record time differently: ChatGPT's `create_time` and Open WebUI's `timestamp` are epoch
seconds, the OpenAI shape has none of its own (Vak reads an optional `timestamp` per message,
ISO-8601 or epoch seconds), and transcripts of long conversations date a session in the text —
"[1:56 pm on 8 May, 2023]", "Session 3 — 8 May 2023", "2023-05-08 13:56". Each becomes one
ISO-8601 UTC string (a time written without a zone is kept as written, read as UTC), so a turn
keeps the day it was said (a header's reading is the engine's, `context/planning/headers.py`:
it also dates the lines after a header further down a message). Pure: no clock is read; ""
when no time is found.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

from vak_desktop.context.planning.headers import header_time

__all__ = ["header_time", "source_time"]


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
