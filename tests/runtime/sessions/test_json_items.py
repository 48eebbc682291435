"""`json_items`: a JSON list read one item at a time, items across 1 MB pieces included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vak_desktop.runtime.sessions.json_items import ItemsError, is_json_list, json_items


def test_the_items_come_back_as_json_loads_reads_them(tmp_path: Path) -> None:
    items = [{"big": "x" * 2_500_000}, 12345, "text", [1, [2, {"a": None}]], True, 1.5e300]
    path = tmp_path / "list.json"
    path.write_bytes(
        b"\xef\xbb\xbf  [\n" + ",\n".join(json.dumps(i) for i in items).encode() + b"]"
    )
    assert is_json_list(path)
    assert list(json_items(path)) == items


def test_a_number_cut_by_a_piece_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    head = '["' + "y" * ((1 << 20) - 8) + '", '
    path.write_text(head + "123456789012345]")
    assert list(json_items(path))[1] == 123456789012345


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'[{"a": 1}, {"b": ]', "item 1 is not JSON"),
        (b'[{"a": 1} {"b": 2}]', "expected ',' or ']' after item 1"),
        (b'[{"a": "\xff"}]', "not UTF-8 (byte 8)"),
        (b'{"messages": []}', "not a JSON list"),
    ],
)
def test_a_bad_list_is_named_by_item_or_byte(tmp_path: Path, body: bytes, said: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(body)
    with pytest.raises(ItemsError, match=re.escape(said)):
        list(json_items(path))
