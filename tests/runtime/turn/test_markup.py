"""The chat template's stray tag at an answer's edge (`runtime/turn/markup.py`)."""

from __future__ import annotations

import pytest

from vak_desktop.runtime.turn.markup import opening_markup, stray_markup


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("<tools>\n\nThe hall is booked for 46 guests.", "The hall is booked for 46 guests."),
        ("  </TOOLS> It is notes/feb.txt.", "It is notes/feb.txt."),
        ("It is notes/feb.txt.\n</tools>", "It is notes/feb.txt."),
        ("<tools>", ""),
        ("Use <tools> in the template.", "Use <tools> in the template."),  # inside: kept
        ("<tool_response>\nno tool matches", "<tool_response>\nno tool matches"),  # not ours
    ],
)
def test_only_a_lone_tools_tag_at_an_edge_is_cut(written: str, shown: str) -> None:
    assert stray_markup(written) == shown


def test_a_streams_start_waits_while_it_may_still_become_the_tag() -> None:
    assert opening_markup("") == ("", True)
    assert opening_markup("\n<to") == ("\n<to", True)
    assert opening_markup("<tools>\n\nThe") == ("The", False)
    assert opening_markup("<b>bold</b>") == ("<b>bold</b>", False)
    assert opening_markup("The hall") == ("The hall", False)
