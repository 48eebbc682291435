"""Dates on the history: when a turn was said, as a request shows it (spec §4, issue #22).

A turn's time is its directive's `said_at` (an import keeps its source's time) or, for a live
turn, the entry's own `created_at`; both are ISO-8601. Cards, passages and packet lines show it
as a short day ("Mon 8 May 2023"), so a model resolves "last Saturday" or "next month" against
the day the words were said, apart from today's date, which the tail gives as such. Pure: the
strings come in, nothing reads a clock.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from datetime import date

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


_MONTH = r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_NAMED_DAYS = re.compile(
    rf"\b(?:{_MONTH}\s+{_ORDINAL},?\s+(\d{{4}})"  # October 13, 2023
    rf"|{_ORDINAL}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})"  # 13 October 2023, 13th of Oct 2023
    r"|(\d{4})-(\d{2})-(\d{2}))\b",  # 2023-10-13
    re.IGNORECASE,
)


def days_named(text: str) -> list[str]:
    """The days `text` names with their year, as ISO dates ("2023-10-13"), each once, in order:
    "October 13, 2023", "13 October 2023", "13th of Oct 2023", "2023-10-13" (English month
    names). A day without its year, or that is no day of the calendar, is not read."""
    return list(dict.fromkeys(day.isoformat() for day, _ in _named_days(text)))


_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)


def months_named(text: str) -> list[str]:
    """The months `text` names with their year ("in November 2023", "Nov. 2023", a day's
    "13 October 2023" too), as "2023-11", each once, in order."""
    found = (f"{year}-{_month_number(month):02d}" for month, year in _MONTH_YEAR.findall(text))
    return list(dict.fromkeys(found))


def first_day_named(text: str) -> tuple[date, int, int] | None:
    """The first day `text` names with its year (as `days_named` reads them), and where its
    words start and end; None when it names none."""
    for day, match in _named_days(text):
        return day, match.start(), match.end()
    return None


def _named_days(text: str) -> Iterator[tuple[date, re.Match[str]]]:
    for match in _NAMED_DAYS.finditer(text):
        g = match.groups()
        if g[0]:
            month, day, year = g[0], g[1], g[2]
        elif g[4]:
            day, month, year = g[3], g[4], g[5]
        else:
            year, month, day = g[6], g[7], g[8]
        number = int(month) if month.isdigit() else _month_number(month)
        try:
            yield date(int(year), number, int(day)), match
        except ValueError:
            continue


def _month_number(name: str) -> int:
    prefix = name[:3].lower()
    return next(i for i, m in enumerate(_MONTHS, start=1) if m[:3].lower() == prefix)


def said_on(iso: str) -> str:
    """The day of an ISO-8601 time as the history shows it ("Mon 8 May 2023"), "" when there is
    none or it does not read as a date. Keyed by its date part, so a session's turns of one day
    are read once."""
    return _day(iso[:10]) if len(iso) >= 10 else ""


@functools.lru_cache(maxsize=4096)
def _day(part: str) -> str:
    try:
        day = date.fromisoformat(part)
    except ValueError:
        return ""
    return f"{_DAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


def short_day(day: str) -> str:
    """ "2023-01-20" as "20 Jan 2023" ("" when it is not a date): a packet's stretch's day."""
    if len(day) != 10 or day[4] != "-" or day[7] != "-" or not day[:4].isdigit():
        return ""
    month = int(day[5:7]) if day[5:7].isdigit() else 0
    if not 1 <= month <= 12 or not day[8:].isdigit():
        return ""
    return f"{int(day[8:])} {_MONTHS[month - 1][:3]} {day[:4]}"


def day_span(first: str, last: str) -> str:
    """The days of a stretch or group: "20 Jan 2023", "20 Jan – 3 Mar 2023", or across years."""
    a, b = short_day(first), short_day(last)
    if not a or not b or a == b:
        return a or b
    if a[-8:] == b[-8:]:  # one month: "13–21 Jun 2023"
        return f"{a.split()[0]}–{b}"
    if a[-4:] == b[-4:]:
        return f"{a[:-5]} – {b}"
    return f"{a} – {b}"
