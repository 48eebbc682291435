"""Dated headers inside a message's text date the lines after them; prose dates do not."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vak_desktop.context.planning.headers import dated_parts
from vak_desktop.context.planning.relative_dates import annotate

FRIDAY = "2022-06-03T10:00:00Z"


def test_a_header_line_starts_a_part_dated_by_it() -> None:
    text = "See you!\n[2:12 pm on 5 June, 2022]\nHey! Yesterday was great.\nSession 9 — 20 June 2022\nHi"
    assert dated_parts(text, FRIDAY) == [
        ("See you!\n", FRIDAY),
        ("[2:12 pm on 5 June, 2022]\nHey! Yesterday was great.\n", "2022-06-05T14:12:00Z"),
        ("Session 9 — 20 June 2022\nHi", "2022-06-20T00:00:00Z"),
    ]


def test_dates_said_in_prose_or_in_the_opening_header_cut_nothing() -> None:
    for text in (
        "[1:56 pm on 8 May, 2023] Hi there!\nHow are you?",  # the import dated it by this
        "We met.\nI fly to Paris on 8 May 2023 with my sister and her kids, then on to Rome.",
        "Notes\n" + "the 2023 budget " * 20,  # a year in a long line
        "Notes\n[shares a photo of a dog]\n2024 was long",  # a year alone is no day
    ):
        assert dated_parts(text, FRIDAY) == [(text, FRIDAY)], text


def test_relative_times_after_a_header_resolve_against_its_day() -> None:
    text = "See you tomorrow!\n[2:12 pm on 5 June, 2022]\nYesterday was great."
    assert annotate(text, FRIDAY) == (
        "See you tomorrow (= Sat 4 June 2022)!\n[2:12 pm on 5 June, 2022]\n"
        "Yesterday (= Sat 4 June 2022) was great."
    )


@given(st.lists(st.sampled_from(["hi there", "[9:00 am on 1 March, 2023]", "2023-03-04", ""])))
def test_the_parts_joined_are_the_text(lines: list[str]) -> None:
    text = "\n".join(lines)
    parts = dated_parts(text, FRIDAY)
    assert "".join(part for part, _ in parts) == text
    assert parts[0][1] == FRIDAY
