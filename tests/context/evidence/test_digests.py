"""Closed-turn digests: built from the result's shape, never cut by a count, always reversible."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vak_desktop.context.evidence.digests import (
    EDGE_LINES,
    PARAGRAPH_LINES,
    digest_result,
    result_shape,
)
from vak_desktop.context.evidence.windows import LINE_LIMIT, select_chars, select_lines, short_ref

EVIDENCE = "b3:" + "9f2a" * 16
REF = short_ref(EVIDENCE)
RECALL = re.compile(r"recall\((\{.*?\})\)")
NOTE = "continues for"


def _footer(content: str) -> str:
    return f"[evidence:{REF} — {len(content):,} chars; call recall to expand]"


def _recall(line: str) -> dict[str, Any]:
    match = RECALL.search(line)
    assert match is not None, line
    args: dict[str, Any] = json.loads(match.group(1))
    assert args["id"] == REF
    return args


def _search_api_response() -> str:
    results = [
        {
            "title": f"Qwen2.5 context window benchmark, part {i}",
            "url": f"https://example.org/posts/qwen-{i}",
            "content": f"SNIPPET-{i} " + "long extracted page body " * 40,
            "score": 0.9 - i / 100,
            "raw_content": None,
        }
        for i in range(8)
    ]
    return json.dumps(
        {
            "query": "qwen2.5 long context",
            "answer": "ANSWER-BODY " * 30,
            "results": results,
            "response_time": 1.42,
        }
    )


def _ls(count: int) -> list[str]:
    return [
        f"-rw-r--r--  1 vak staff {i * 37:>6} Mar  3 10:{i % 60:02d} file_{i:03d}.log"
        for i in range(count)
    ]


README = """\
# Vak Desktop

Vak Desktop is a chat app for local models.
It never cuts a tool result blindly — ünïcode keeps bytes ≠ chars.

## Install

```bash
# this comment is code, not a heading
pip install vak-desktop
```

Usage
-----

Run `vak` and pick a model.

Design notes
============

### The context engine
See docs/design.
"""


def test_search_results_show_every_title_and_url_and_no_bodies() -> None:
    content = _search_api_response()
    digest = digest_result(content, EVIDENCE, tool_name="web_search")
    assert result_shape(content) == "search_results"
    for i in range(8):
        assert (
            f"{i + 1}. Qwen2.5 context window benchmark, part {i} — https://example.org/posts/qwen-{i}"
            in digest
        )
    assert "SNIPPET" not in digest and "ANSWER-BODY" not in digest and "page body" not in digest
    assert "results: 8 hits" in digest and "answer: string (360 chars)" in digest
    assert digest.endswith("\n" + _footer(content))


def test_search_results_are_found_under_nested_keys_and_as_a_bare_list() -> None:
    brave = {
        "type": "search",
        "web": {
            "type": "search",
            "results": [
                {"title": "Ollama\nblog", "url": "https://ollama.com/blog", "description": "BODY"},
                {"title": "Ollama docs", "url": "https://docs.ollama.com", "description": "BODY"},
            ],
        },
    }
    serper = [{"title": "A page", "link": "https://a.example", "snippet": "BODY"}]
    crawl = {
        "data": [
            {"markdown": "BODY", "metadata": {"title": "Crawled", "sourceURL": "https://c.example"}}
        ]
    }
    digests = [digest_result(json.dumps(v), EVIDENCE) for v in (brave, serper, crawl)]
    assert [result_shape(json.dumps(v)) for v in (brave, serper, crawl)] == ["search_results"] * 3
    assert (
        "web.results: 2 hits\n1. Ollama blog — https://ollama.com/blog\n2. Ollama docs"
        in digests[0]
    )
    assert "1. A page — https://a.example" in digests[1]
    assert "1. Crawled — https://c.example" in digests[2]
    assert all("BODY" not in d for d in digests)


def test_nested_json_config_shows_top_level_keys_sizes_and_first_elements() -> None:
    config = {
        "server": {"host": "127.0.0.1", "port": 11434, "tls": {"enabled": False}},
        "models": [
            {"name": "qwen2.5:7b", "num_ctx": 32768, "options": {"temperature": 0.2}},
            {"name": "llama3.1:8b", "num_ctx": 8192},
        ],
        "name": "vak",
        "debug": True,
        "timeout": 30.5,
        "plugins": [],
        "proxy": None,
        "weird key": ["x"],
    }
    content = json.dumps(config, indent=2)
    assert result_shape(content) == "json"
    assert digest_result(content, EVIDENCE) == "\n".join(
        [
            "JSON object with 8 keys",
            "server: object{3}",
            "models: array[2]",
            'models[0]: {"name":"qwen2.5:7b","num_ctx":32768,"options":{"temperature":0.2}}',
            "name: string (3 chars)",
            "debug: boolean true",
            "timeout: number 30.5",
            "plugins: array[0]",
            "proxy: null",
            '"weird key": array[1]',
            '"weird key"[0]: "x"',
            _footer(content),
        ]
    )


def test_a_json_array_shows_its_length_and_first_element_whole() -> None:
    rows = [{"id": i, "tags": ["a", "b"], "note": "n" * 50} for i in range(42)]
    content = json.dumps(rows)
    digest = digest_result(content, EVIDENCE)
    assert result_shape(content) == "json"
    assert digest.split("\n")[:2] == [
        "JSON array[42]",
        "[0]: " + json.dumps(rows[0], separators=(",", ":")),
    ]


def test_ls_output_keeps_exit_code_and_first_and_last_ten_lines() -> None:
    listing = _ls(200)
    content = "exit code: 0\n" + "\n".join(listing) + "\n"
    assert result_shape(content) == "command_output"
    lines = digest_result(content, EVIDENCE, tool_name="run_command").split("\n")
    assert lines[:2] == ["exit code: 0", "output: 200 lines"]
    assert lines[2 : 2 + EDGE_LINES] == listing[:EDGE_LINES]
    assert lines[-1 - EDGE_LINES : -1] == listing[-EDGE_LINES:]
    between = lines[2 + EDGE_LINES]
    assert between.startswith("[… 180 lines between (lines 12–191, ")
    assert select_lines(content, *_recall(between)["range"]) == "\n".join(listing[10:190])
    assert len(lines) == 2 + 2 * EDGE_LINES + 1 + 1


def test_json_command_output_shows_stdout_edges_then_stderr_then_other_fields() -> None:
    stdout = "\n".join(_ls(50)) + "\n"
    content = json.dumps(
        {
            "command": "ls -l /var/log",
            "exit_code": 2,
            "stdout": stdout,
            "stderr": "ls: /x: denied\n",
            "duration_ms": 41,
        }
    )
    assert result_shape(content) == "command_output"
    lines = digest_result(content, EVIDENCE).split("\n")
    assert lines[:3] == ["exit code: 2", "command: ls -l /var/log", "stdout: 50 lines"]
    between = lines[3 + EDGE_LINES]
    assert between.startswith("[… 30 lines between (")
    start, end = _recall(between)["chars"]
    assert json.loads(select_chars(content, start, end)) == stdout
    assert lines[-5:-1] == [
        _ls(50)[-1],
        "stderr: 1 line",
        "ls: /x: denied",
        "duration_ms: number 41",
    ]


def test_exit_lines_in_their_common_spellings_mark_command_output() -> None:
    for first, code in [("exit status 1", "1"), ("[exit 127]", "127"), ("Exit code: -9", "-9")]:
        content = f"{first}\nstdout:\nhello\nstderr:\nboom\n"
        assert result_shape(content) == "command_output"
        assert digest_result(content, EVIDENCE).split("\n")[:-1] == [
            f"exit code: {code}",
            "stdout: 1 line",
            "hello",
            "stderr: 1 line",
            "boom",
        ]


def test_markdown_readme_shows_headings_first_paragraph_and_sizes() -> None:
    assert result_shape(README) == "text"
    lines = README.split("\n")
    assert digest_result(README, EVIDENCE) == "\n".join(
        [
            f"text: {len(lines) - 1} lines, {len(README.encode()):,} bytes",
            "headings:",
            "line 1: # Vak Desktop",
            "line 6: ## Install",
            "line 13: Usage",
            "line 14: -----",
            "line 18: Design notes",
            "line 19: ============",
            "line 21: ### The context engine",
            "first paragraph (lines 3–4):",
            lines[2],
            lines[3],
            _footer(README),
        ]
    )
    assert len(README.encode()) != len(README)


def test_a_paragraph_with_no_blank_line_shows_its_first_lines_and_names_the_rest() -> None:
    log = [f"2025-03-03T10:00:{i % 60:02d} INFO request {i} served" for i in range(500)]
    content = "\n".join(log)
    lines = digest_result(content, EVIDENCE).split("\n")
    shown = lines[lines.index("first paragraph (lines 1–500):") + 1 :]
    assert shown[:PARAGRAPH_LINES] == log[:PARAGRAPH_LINES]
    assert shown[PARAGRAPH_LINES].startswith(
        "[… the paragraph continues for 480 more lines (lines 21–500, "
    )
    assert select_lines(content, *_recall(shown[PARAGRAPH_LINES])["range"]) == "\n".join(log[20:])


def test_a_single_huge_line_shows_its_start_and_how_many_characters_follow() -> None:
    content = "".join(f"token{i} " for i in range(20_000))
    digest = digest_result(content, EVIDENCE)
    line = digest.split("\n")[3]
    assert line.startswith(
        content[:LINE_LIMIT]
        + f" [… line 1 continues for {len(content) - LINE_LIMIT:,} more characters;"
    )
    assert content[:LINE_LIMIT] + select_chars(content, *_recall(line)["chars"]) == content
    assert len(digest) < 3 * LINE_LIMIT


def test_a_huge_first_json_element_is_shown_by_its_start_and_recalled_whole() -> None:
    rows = [{"html": "<p>" + "x" * 9_000 + "</p>"}, {"html": "short"}]
    content = json.dumps({"pages": rows}, indent=1)
    digest = digest_result(content, EVIDENCE).split("\n")
    line = next(shown for shown in digest if shown.startswith("pages[0]"))
    assert NOTE in line and len(line) < LINE_LIMIT + 200
    assert json.loads(select_chars(content, *_recall(line)["chars"])) == rows[0]


def test_an_error_is_verbatim() -> None:
    content = 'Traceback (most recent call last):\n  File "tool.py", line 3\nPermissionError: /etc/shadow\n'
    assert result_shape(content, is_error=True) == "error"
    assert digest_result(content, EVIDENCE, is_error=True) == content + _footer(content)
    assert digest_result("no such file", EVIDENCE, is_error=True) == "no such file\n" + _footer(
        "no such file"
    )


def test_the_footer_is_exact_with_thousands_separators() -> None:
    content = "word " * 2_842
    assert len(content) == 14_210
    assert (
        digest_result(content, EVIDENCE).split("\n")[-1]
        == f"[evidence:{REF} — 14,210 chars; call recall to expand]"
    )
    assert digest_result("", EVIDENCE).endswith(
        "\n" + f"[evidence:{REF} — 0 chars; call recall to expand]"
    )


def test_digests_are_deterministic_byte_for_byte() -> None:
    samples = [
        _search_api_response(),
        README,
        "exit code: 0\n" + "\n".join(_ls(200)),
        json.dumps([{"a": 1}] * 3),
    ]
    for content in samples:
        first = digest_result(content, EVIDENCE).encode()
        again = digest_result(str(content), EVIDENCE).encode()
        assert first == again
        assert digest_result(content, EVIDENCE).endswith(_footer(content))


# Content lines drawn from characters no digest label starts with, so a label never looks like
# a cut; long lines come from repetition so lines over LINE_LIMIT are common.
_UNITS = st.text(alphabet="ab #=-`é\t\r", min_size=1, max_size=3)
_LINE = st.one_of(
    st.text(alphabet="ab #=-`é\t", max_size=40),
    st.builds(lambda unit, n: unit * n, _UNITS, st.integers(500, 1_400)),
    st.sampled_from(["", "stderr:", "# a", "===", "```"]),
)
_TEXT = st.builds(
    lambda head, lines: head + "\n".join(lines),
    st.sampled_from(["", "exit code: 3\n", "[exit 1]\n"]),
    st.lists(_LINE, max_size=60),
)
_LABEL = re.compile(r"line \d+: ")


@settings(max_examples=80, deadline=None)
@given(_TEXT)
def test_no_digest_line_is_a_silent_cut_of_a_content_line(content: str) -> None:
    digest = digest_result(content, EVIDENCE)
    assert digest == digest_result(content, EVIDENCE)
    lines = digest.split("\n")
    assert lines[-1] == _footer(content)
    content_lines = [line.removesuffix("\r") for line in content.split("\n")]
    for line in lines[:-1]:
        shown = _LABEL.sub("", line, count=1) if _LABEL.match(line) else line
        if NOTE in shown and RECALL.search(shown) and "chars" in _recall(shown):
            start, end = _recall(shown)["chars"]
            whole = shown[:LINE_LIMIT] + select_chars(content, start, end)
            assert whole in content_lines
            continue
        assert len(shown) <= LINE_LIMIT
        is_cut = any(c.startswith(shown) and len(c) > len(shown) for c in content_lines)
        assert shown in content_lines or not is_cut, shown


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.builds(lambda n: "z" * n, st.integers(0, 3_000)),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_JSON, max_size=4) | st.dictionaries(st.text(max_size=6), _JSON, max_size=5),
    st.sampled_from([None, 1, 2]),
)
def test_json_digest_lines_fit_or_name_a_recall_range_that_parses(
    value: Any, indent: int | None
) -> None:
    content = json.dumps(value, indent=indent)
    digest = digest_result(content, EVIDENCE)
    lines = digest.split("\n")
    assert lines[-1] == _footer(content)
    for line in lines[:-1]:
        if NOTE in line:
            start, end = _recall(line)["chars"]
            json.loads(select_chars(content, start, end))
        else:
            assert len(line) <= LINE_LIMIT
