"""Emoji on buttons only where a font can draw them; plain words elsewhere.

Qt falls back across fonts per character, so an emoji shows wherever *some* installed font has
it (every desktop with a colour-emoji font). A machine without one would draw empty boxes, so
there the words stand alone.
"""

from __future__ import annotations

import functools

from PySide6.QtGui import QFontDatabase

_EMOJI_FAMILIES = ("emoji", "twemoji", "emojione")


@functools.cache
def has_emoji_font() -> bool:
    return any(
        word in family.lower() for family in QFontDatabase.families() for word in _EMOJI_FAMILIES
    )


def glyph(emoji: str, words: str) -> str:
    """`emoji` where it can be drawn, else `words` (pass "" to get just the emoji)."""
    return emoji if has_emoji_font() else words
