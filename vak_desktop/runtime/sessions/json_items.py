"""The items of a JSON file's top-level list, read one at a time: a large export in bounded memory.

`vak import` read the whole file, decoded it and parsed it whole: a 200 MB export held the bytes,
the text and every parsed conversation at once (730 MB resident, issue 24). A file whose JSON
is a list is read here in 1 MB pieces and each item is parsed as soon as it is whole
(`json.JSONDecoder.raw_decode`), so what is held is the item being read and the one being
imported. Only how the file is cut into items lives here; what an item means is `formats/`'s.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PIECE = 1 << 20
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class ItemsError(ValueError):
    """The file is not a readable JSON list; the message says where (a byte or an item)."""


def is_json_list(path: Path) -> bool:
    """Whether the file's JSON begins with `[` (after a BOM and white space)."""
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(codecs.BOM_UTF8).lstrip(b" \t\r\n")
    return head.startswith(b"[")


def json_items(path: Path) -> Iterator[Any]:
    """Each item of the top-level list in `path`, parsed, in order."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    with open(path, "rb") as handle:
        text, at, ended, read = "", 0, False, 0

        def more() -> bool:
            nonlocal text, at, ended, read
            if ended:
                return False
            piece = handle.read(PIECE)
            try:
                text = text[at:] + decoder.decode(piece, final=not piece)
            except UnicodeDecodeError as exc:
                raise ItemsError(f"not UTF-8 (byte {read + exc.start})") from None
            read += len(piece)
            at, ended = 0, not piece
            return True

        def skip() -> None:
            nonlocal at
            while True:
                while at < len(text) and text[at] in _SPACE:
                    at += 1
                if at < len(text) or not more():
                    return

        skip()
        if text[at : at + 1] != "[":
            raise ItemsError("not a JSON list")
        at += 1
        index = 0
        while True:
            skip()
            if text[at : at + 1] == "]":
                return
            if index:
                if text[at : at + 1] != ",":
                    raise ItemsError(f"expected ',' or ']' after item {index}")
                at += 1
                skip()
            while True:
                try:
                    item, end = _DECODER.raw_decode(text, at)
                except json.JSONDecodeError as exc:
                    if more():
                        continue  # the item goes on in the next piece
                    raise ItemsError(f"item {index} is not JSON: {exc.msg}") from None
                except RecursionError:
                    raise ItemsError(f"item {index} is nested too deeply to read") from None
                if end == len(text) and not ended and not isinstance(item, dict | list):
                    more()  # a number or literal may go on in the next piece
                    continue
                break
            at = end
            index += 1
            yield item
