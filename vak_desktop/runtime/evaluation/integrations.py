"""No first-class integrations (spec §9): production code and shipped data never name a
configured MCP server or a topic that once steered behaviour during development.

The banned words are the MCP server names of the operator's settings plus the fixture topics
("weather", "noida" — written here, in the one module that must name them, and left out of its
own scan). Every Python module of the installed package is read with `tokenize`: identifiers and
string literals count, comments and docstrings do not. Every shipped file counts whole: the card
library, the chat templates and the reading lexicons, whose cue words are routing keys (a topic
word there would steer which tools load); not the WordNet nouns passage recall ranks with,
which hold every English noun and route nothing. A match is case-insensitive and also found inside a
longer word (`weather_card`), with a server's `-` read as `_`, ` ` or nothing. A frozen bundle
without module sources is audited on its shipped files alone, and the check says so.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Iterator
from importlib.resources.abc import Traversable
from pathlib import Path

import vak_desktop
from vak_desktop.runtime.lexicons import LEXICONS, lexicon_files
from vak_desktop.shipped import shipped

TOPICS = ("weather", "noida")
_CODE_TOKENS = {tokenize.NAME, tokenize.STRING} | {
    getattr(tokenize, name) for name in ("FSTRING_MIDDLE",) if hasattr(tokenize, name)
}
_SKIPPED_SUFFIXES = {".pyc", ".png", ".ico", ".svg", ".icns"}
# WordNet's every English noun ("weather" among them), read only to rank recalled passages: a
# dictionary, which decides no tool's loading (context/planning/kinds.py)
_DICTIONARIES = {"kinds"}


def banned_words(server_names: Iterable[str]) -> set[str]:
    """The topics and every spelling of each server name that could appear in code."""
    words = set(TOPICS)
    for name in server_names:
        lowered = name.lower()
        words |= {lowered, lowered.replace("-", "_"), lowered.replace("-", " ")}
        words.add(lowered.replace("-", ""))
    return words


def _docstring_starts(tree: ast.AST) -> set[tuple[int, int]]:
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
    skip = _docstring_starts(ast.parse(source))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _CODE_TOKENS and token.start not in skip:
            yield token.start[0], token.string


def violations(label: str, text: str, banned: set[str], *, python: bool) -> list[str]:
    """`label:line: words in 'piece'` for each piece of `text` holding a banned word."""
    pieces = code_words(text) if python else enumerate(text.splitlines(), 1)
    found = []
    for line, piece in pieces:
        lowered = piece.lower()
        hits = sorted(word for word in banned if word in lowered)
        if hits:
            found.append(f"{label}:{line}: {', '.join(hits)} in {piece[:80]!r}")
    return found


def module_sources() -> list[tuple[str, str]]:
    """(path, text) of every Python module of the installed package but this one."""
    root = Path(vak_desktop.__file__).parent
    this = Path(__file__).resolve()
    return [
        (f"vak_desktop/{p.relative_to(root).as_posix()}", p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*.py"))
        if "__pycache__" not in p.parts and p.resolve() != this
    ]


def _walk(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        path = f"{prefix}/{child.name}" if prefix else child.name
        if child.name in {"__init__.py", "__pycache__"}:  # the package marker, not data
            continue
        if child.is_dir() and not prefix and child.name in _DICTIONARIES:
            continue
        if child.is_dir():
            yield from _walk(child, path)
        elif child.name.rsplit(".", 1)[-1] not in {s[1:] for s in _SKIPPED_SUFFIXES}:
            yield path, child


def shipped_texts() -> list[tuple[str, str]]:
    """(path, text) of every shipped data file, read through `shipped`; the reading lexicons
    are listed by their own loader too, so they are audited wherever the resources live."""
    texts = {f"resources/{p}": n.read_text(encoding="utf-8") for p, n in _walk(shipped(""), "")}
    for name, data in lexicon_files():
        texts[f"resources/{LEXICONS}/{name}"] = data.decode("utf-8")
    return sorted(texts.items())


def audit(server_names: Iterable[str]) -> tuple[list[str], int, int]:
    """Every violation, and how many modules and shipped files were read."""
    banned = banned_words(server_names)
    modules, data = module_sources(), shipped_texts()
    found = [v for label, text in modules for v in violations(label, text, banned, python=True)]
    found += [v for label, text in data for v in violations(label, text, banned, python=False)]
    return found, len(modules), len(data)
