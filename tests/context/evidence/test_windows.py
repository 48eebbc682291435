"""Evidence windows: verbatim when it fits, whole lines otherwise, every omission recallable."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from vak_desktop.context.evidence.windows import (
    LINE_LIMIT,
    RESULT_LIMIT,
    carry,
    select_chars,
    select_lines,
    short_ref,
)

EVIDENCE = "b3:" + "ab" * 32
RECALL = re.compile(r"recall\((\{.*?\})\)")


def _expand(window: str, content: str) -> str:
    """Rebuild the whole result from a window by following every recall call it names."""
    lines = content.split("\n")
    out: list[str] = []
    for shown in window.split("\n"):
        match = RECALL.search(shown)
        if match is None:
            out.append(shown)
            continue
        args = json.loads(match.group(1))
        assert args["id"] == short_ref(EVIDENCE)
        if "range" in args:  # the omitted-lines marker line
            out.append(select_lines(content, *args["range"]))
        else:  # a long line shown by its start
            start, end = args["chars"]
            out.append(shown[:LINE_LIMIT] + select_chars(content, start, end))
    rebuilt = "\n".join(out)
    assert len(lines) >= 1
    return rebuilt


def test_a_result_that_fits_is_verbatim_however_long_its_lines() -> None:
    content = "x" * (RESULT_LIMIT - 1)
    carried = carry(content, EVIDENCE)
    assert carried.text == content and not carried.windowed


def test_a_long_result_shows_head_and_tail_lines_and_names_the_omission() -> None:
    content = "\n".join(f"line {i:05d}" for i in range(1, 20_001))
    carried = carry(content, EVIDENCE)
    assert carried.windowed
    assert carried.text.startswith("line 00001\n")
    assert carried.text.endswith("line 20000")
    assert "omitted" in carried.text and f'"id": "{short_ref(EVIDENCE)}"' in carried.text
    assert len(carried.text) <= RESULT_LIMIT


def test_a_single_enormous_line_shows_its_start_and_how_much_follows() -> None:
    content = "y" * 10_000_000
    carried = carry(content, EVIDENCE)
    assert carried.text.startswith("y" * LINE_LIMIT + " [… line 1 continues for 9,998,000")
    assert len(carried.text) < 3_000


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "é", "☃", " x", ""]), st.integers(0, 6_000)),
        min_size=1,
        max_size=300,
    )
)
def test_every_window_is_reversible_and_cuts_no_line_silently(
    shapes: list[tuple[str, int]],
) -> None:
    content = "\n".join(f"{n}:" + unit * (n // max(len(unit), 1)) for unit, n in shapes)
    carried = carry(content, EVIDENCE, limit=8_000)
    if len(content) <= 8_000:
        assert carried.text == content
        return
    assert carried.windowed
    assert _expand(carried.text, content) == content
