"""Syntax colours for code blocks in answers, with Pygments, in the theme's light or dark style.

A code block is coloured only when its fence names a language Pygments knows (guessing costs
milliseconds per block and guesses wrong on short snippets); anything else stays plain,
escaped text. The output is Pygments' inline-styled spans (`noclasses`), the one form Qt's text
engine draws without a style sheet. Measured: ~0.35 ms for a 250-character Python block, so
the streaming pane can colour its live part on every render tick (bench/ui_stream.py). Pygments
is imported on the first code block, not at start-up.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

LIGHT_STYLE = "default"
DARK_STYLE = "one-dark"
# Lexers compiled ahead, off the UI thread: Pygments compiles a lexer's regular expressions the
# first time it is made, measured 5-80 ms a language (python ~55 ms, css ~80 ms), which the
# first code block of that language would otherwise cost the window mid-stream.
COMMON_LANGUAGES = (
    "python", "javascript", "typescript", "bash", "json", "html", "css", "sql", "rust", "go",
    "c", "cpp", "java", "yaml", "toml",
)  # fmt: skip


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def preload(languages: Iterable[str] = COMMON_LANGUAGES) -> threading.Thread:
    """Compile the lexers of `languages` and both styles on a background thread (the window
    calls it once it is shown); a block that needs one sooner compiles it itself."""

    def work() -> None:
        for style in (LIGHT_STYLE, DARK_STYLE):
            _formatter(style)
        for language in languages:
            _lexer(language)

    thread = threading.Thread(target=work, name="pygments-preload", daemon=True)
    thread.start()
    return thread


def tokens(code: str, language: str) -> Iterator[tuple[Any, str]] | None:
    """`code` as Pygments (token type, text) pairs whose texts add up to `code`; None if
    `language` is unknown. A generator: a long block can be lexed a slice at a time."""
    lexer = _lexer(language.lower()) if language else None
    return None if lexer is None else lexer.get_tokens(code)


@lru_cache(maxsize=512)
def token_style(token_type: Any, dark: bool) -> tuple[str, bool, bool]:
    """The colour ('' for the text's own), boldness and italics of a token in the theme's style."""
    from pygments.styles import get_style_by_name

    style = get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE).style_for_token(token_type)
    color = style["color"]
    return (f"#{color}" if color else "", bool(style["bold"]), bool(style["italic"]))


@lru_cache(maxsize=4)
def _formatter(style: str) -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True, noclasses=True, style=style)


def highlighted(code: str, language: str, dark: bool) -> str:
    """`code` as HTML spans coloured for `language` (escaped plain text if it is unknown)."""
    lexer = _lexer(language.lower()) if language else None
    if lexer is None:
        return html.escape(code)
    from pygments import highlight

    out: str = highlight(code, lexer, _formatter(DARK_STYLE if dark else LIGHT_STYLE))
    return out.rstrip("\n")
