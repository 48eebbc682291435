"""Relative dates resolved against the day they were said (issue #22 item 2).

"I went to Paris yesterday", said on Sun 29 January 2023, means Sat 28 January 2023; a small
model handed the passage and its day rarely does that arithmetic, and asked "when did Jon go
to Paris?" it answers with the day of the message or, worse, with today's. So a passage whose
words hold a relative time shows what it resolves to right after the words, marked "=":

    … I've been to Paris yesterday (= Sat 28 January 2023)!

Right after, not at the end of the passage: given "(yesterday = …)" after the passage, the
1.5B still copied the words nearest the event ("honeymoon in Canada next month", LoCoMo
conv-49); the resolution must sit where the words it replaces are read.

Resolved: yesterday, today / tonight / this morning …, tomorrow, "last / next / this week,
weekend, month, year", "last Friday", "this Friday", "N days / weeks / months / years ago",
and forward, "N days … later / from now", "in N days …", "N weekends later" (N as a digit, a
word up to twelve, "a" or "a couple of"; "a few" is left alone). A week is named by the week it falls in ("the week before Sun
29 January 2023"), a month by its name, a year by its number: no more precise than the words.
English only: the other languages' words are left as they are (nothing is guessed). Pure: the
day comes in with the text; nothing reads a clock.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from vak_desktop.context.planning.dates import first_day_named, months_named, said_on
from vak_desktop.context.planning.headers import dated_parts

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NUMBERS = {w: n for n, w in enumerate((*_WORDS, "eleven", "twelve"), start=1)}
_NUMBERS |= {"a": 1, "an": 1, "a couple of": 2}
_COUNT = r"(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an?|a couple of)"
_RELATIVE = re.compile(
    r"\b(?:(yesterday|today|tonight|tomorrow)"
    r"|this (morning|afternoon|evening)"
    r"|(last|next|this) (week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")"
    rf"|{_COUNT} (day|week|month|year)s? ago"
    rf"|(?:in )?{_COUNT} (day|week|weekend|month|year)s? (later|from now)"
    rf"|in {_COUNT} (day|week|month|year)s?)\b",
    re.IGNORECASE,
)
# a question that asks for a time: "when did …", "what date …", "how long ago …"
_ASKS_WHEN = re.compile(
    r"\b(?:when (?:did|does|do|is|was|were|will|are|has|have|had)"
    r"|what (?:date|day|time|year|month)|which (?:date|day|year|month)|how long ago)\b",
    re.IGNORECASE,
)
# one of these is in every relative time `_RELATIVE` reads ("yesterday", "last Friday",
# "tonight", "tomorrow", "2 weeks ago")
_TIME_WORDS = ("day", "night", "morrow", "morning", "afternoon", "evening", "week", "month", "year")
_YEAR = re.compile(r"\b\d{4}\b")  # a year is a word of its own in every date read
_MONTH_STEMS = tuple(month[:3].lower() for month in _MONTHS)
MAX_RESOLVED = 3  # a text names at most this many of its relative times
ADDED = re.compile(r" \(= [^()]*\)")  # what `annotate` adds: " (= Sat 28 January 2023)"


def annotate(text: str, said_at: str) -> str:
    """`text` (said at the ISO-8601 `said_at`) with " (= Sat 28 January 2023)" after the first
    use of each of its first `MAX_RESOLVED` relative times; unchanged when it holds none or its
    day is unknown. The lines after a dated header in it are read against the header's day
    (`dated_parts`)."""
    return "".join(_annotated(part, when) for part, when in dated_parts(text, said_at))


def asks_when(text: str) -> bool:
    """Whether `text` asks when something happened ("When did Jon go to Paris?")."""
    return _ASKS_WHEN.search(text) is not None


def says_when(text: str) -> bool:
    """Whether `text` says when something happened: a relative time `annotate` resolves
    ("yesterday", "last week", "two weekends later"), or a day or month named with its year.
    Every piece of a session is asked, so each pattern runs only on a text holding the words
    it needs: a relative time's word ("day", "week" …), or a year and a month's name or the
    dashes of "2023-10-13"."""
    lowered = text.lower()
    if any(word in lowered for word in _TIME_WORDS) and _RELATIVE.search(text):
        return True
    if not _YEAR.search(text) or not ("-" in text or any(m in lowered for m in _MONTH_STEMS)):
        return False
    return bool(months_named(text) or first_day_named(text))


def _annotated(text: str, said_at: str) -> str:
    try:
        day = date.fromisoformat(said_at[:10])
    except ValueError:
        return text
    pieces, seen, last = [], set(), 0
    for match in _RELATIVE.finditer(text):
        said = match.group(0).lower()
        if said in seen:
            continue
        resolved = _resolved(match, day)
        if not resolved:
            continue
        seen.add(said)
        pieces += [text[last : match.end()], f" (= {resolved})"]
        last = match.end()
        if len(seen) == MAX_RESOLVED:
            break
    return "".join(pieces) + text[last:]


def _resolved(match: re.Match[str], day: date) -> str:
    near, part, direction, unit, count, counted, ahead, onward, _, inside, within = (
        g and g.lower() for g in match.groups()
    )
    if near or part:
        shift = {"yesterday": -1, "tomorrow": 1}.get(near or "", 0)
        return _day(day + timedelta(days=shift))
    if direction == "this":
        return _this(day, unit or "")
    if direction:
        return _step(day, unit or "", -1 if direction == "last" else 1)
    if counted:
        return _counted(day, _count(count), counted, -1)
    if onward:
        return _counted(day, _count(ahead), onward, 1)
    return _counted(day, _count(inside), within or "", 1)


def _count(said: str | None) -> int:
    return int(said) if said and said.isdigit() else _NUMBERS.get(said or "", 0)


def _counted(day: date, n: int, unit: str, sign: int) -> str:
    """ "N days / weeks / weekends / months / years" before (`sign` -1) or after `day`."""
    if not n:
        return ""
    if unit == "day":
        return _day(day + timedelta(days=sign * n))
    if unit == "week":
        return f"the week of {_day(day + timedelta(weeks=sign * n))}"
    if unit == "weekend":  # the first weekend after the day is "one weekend later"
        saturday = day + timedelta(days=(5 - day.weekday()) % 7 or 7) + timedelta(weeks=n - 1)
        return f"the weekend of {_day(saturday)}"
    if unit == "month":
        return _month(day, sign * n)
    return str(day.year + sign * n)


def _this(day: date, unit: str) -> str:
    """ "this week, weekend, month, year, or weekday": the one the day is in (a weekday: the
    next such day, or the day itself)."""
    if unit in _WEEKDAYS:
        return _day(day + timedelta(days=(_WEEKDAYS.index(unit) - day.weekday()) % 7))
    if unit == "weekend":  # said on a Sunday, the weekend it is in
        shift = -1 if day.weekday() == 6 else 5 - day.weekday()
        return f"the weekend of {_day(day + timedelta(days=shift))}"
    if unit == "week":
        return f"the week of {_day(day)}"
    return _month(day, 0) if unit == "month" else str(day.year)


def _step(day: date, unit: str, sign: int) -> str:
    """ "last/next week, weekend, month, year, or a weekday" from `day`."""
    if unit in _WEEKDAYS:  # the nearest such weekday before (or after) the day, never itself
        wanted = _WEEKDAYS.index(unit)
        apart = day.weekday() - wanted if sign < 0 else wanted - day.weekday()
        return _day(day + timedelta(days=sign * (apart % 7 or 7)))
    if unit in ("week", "weekend"):
        where = "before" if sign < 0 else "after"
        return f"the {unit} {where} {_day(day)}"
    if unit == "month":
        return _month(day, sign)
    return str(day.year + sign)


def _month(day: date, shift: int) -> str:
    months = day.year * 12 + day.month - 1 + shift
    return f"{_MONTHS[months % 12]} {months // 12}"


def _day(day: date) -> str:
    return said_on(day.isoformat())
