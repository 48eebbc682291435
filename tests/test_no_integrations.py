"""No first-class integrations (spec §9): production code never names a configured MCP server
or a topic that once steered behaviour during development.

The banned words are the MCP server names of the operator settings fixture
(`tests/fixtures/operator_settings.toml`, read by the real settings loader) plus "weather" and
"noida". Every Python module under `vak_desktop/` is read with `tokenize`: identifiers and
string literals count, comments and docstrings do not. Any other file shipped in the package
(resources such as card definitions) counts whole. A match is case-insensitive and also found
inside a longer word (`weather_card`), with a server's `-` read as `_`, ` ` or nothing.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from vak_desktop.runtime.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "vak_desktop"
RESOURCES = ROOT / "resources"  # shipped inside the package as vak_desktop.resources
FIXTURE = Path(__file__).parent / "fixtures" / "operator_settings.toml"
TOPICS = ("weather", "noida")
_CODE_TOKENS = {tokenize.NAME, tokenize.STRING} | {
    getattr(tokenize, name) for name in ("FSTRING_MIDDLE",) if hasattr(tokenize, name)
}


def banned_words() -> set[str]:
    names = [server.name for server in load_settings(FIXTURE).mcp_servers]
    assert names, f"{FIXTURE} configures no MCP servers"
    words = set(TOPICS)
    for name in names:
        lowered = name.lower()
        words |= {lowered, lowered.replace("-", "_"), lowered.replace("-", " ")}
        words.add(lowered.replace("-", ""))
    return words


def docstring_starts(tree: ast.AST) -> set[tuple[int, int]]:
    """Where each docstring (module, class, function) starts: (line, column)."""
    starts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                starts.add((body[0].lineno, body[0].col_offset))
    return starts


def code_words(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each identifier and string literal that is not a docstring."""
    skip = docstring_starts(ast.parse(source))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _CODE_TOKENS and token.start not in skip:
            yield token.start[0], token.string


def violations(path: Path, banned: set[str], root: Path = ROOT) -> list[str]:
    text = path.read_text(encoding="utf-8")
    pieces = code_words(text) if path.suffix == ".py" else enumerate(text.splitlines(), 1)
    found = []
    for line, piece in pieces:
        lowered = piece.lower()
        hits = sorted(word for word in banned if word in lowered)
        if hits:
            found.append(f"{path.relative_to(root)}:{line}: {', '.join(hits)} in {piece[:80]!r}")
    return found


def production_files() -> list[Path]:
    return sorted(
        p
        for p in [*PACKAGE.rglob("*"), *RESOURCES.rglob("*")]
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix not in {".pyc", ".png", ".ico", ".svg", ".icns"}
    )


def test_production_code_names_no_configured_server_and_no_fixture_topic() -> None:
    banned = banned_words()
    found = [v for path in production_files() for v in violations(path, banned)]
    assert not found, "first-class integrations in production code:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ('def route(q):\n    if "weather" in q:\n        return "x"\n', True),
        ("NOIDA_DEFAULT = 1\n", True),
        ("def tavily_search():\n    pass\n", True),
        ('SERVER = "brave-search"\n', True),
        ('SERVER = f"{1}open_meteo"\n', True),
        ("x = 1  # the weather in Noida was a fixture once\n", False),
        ('"""A module about weather, in its docstring."""\n', False),
        ('def f():\n    """Noida, in a docstring."""\n    return 2\n', False),
    ],
)
def test_the_scan_reads_code_and_skips_comments_and_docstrings(
    tmp_path: Path, source: str, caught: bool
) -> None:
    module = tmp_path / "planted.py"
    module.write_text(source)
    assert bool(violations(module, banned_words(), root=tmp_path)) is caught
