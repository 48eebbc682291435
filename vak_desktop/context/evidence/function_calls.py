"""Tool calls written in function form: `read(path="notes.txt")`, `grep({"pattern": "x"})`.

The second shape `text_calls.py` recognises (its docstring says what counts): `name(...)` must
parse as a call whose arguments are literals — keywords, one JSON-object argument, or a single
positional value when the tool's schema names exactly one parameter the value can be (its only
required one, else its only one). JSON's true/false/null are read as Python's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from typing import Any

from vak_desktop.context.payloads import JsonObject

_JS_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False}


def function_calls(
    text: str, admitted: Mapping[str, JsonObject]
) -> Iterator[tuple[str, JsonObject, int, int]]:
    """(tool, arguments, start, end) of every well-formed `tool(...)` of an admitted tool."""
    for name, schema in admitted.items():
        for match in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", text):
            end = _closing_paren(text, match.end())
            if end < 0:
                continue
            arguments = _call_arguments(text[match.start() : end], schema)
            if arguments is not None:
                yield name, arguments, match.start(), end


def _closing_paren(text: str, position: int) -> int:
    """The index just past the parenthesis closing the one opened before `position`, skipping
    brackets inside string literals; -1 if it never closes."""
    depth, quote, escaped = 1, "", False
    for i in range(position, len(text)):
        c = text[i]
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _call_arguments(source: str, schema: JsonObject) -> JsonObject | None:
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return None
    call = tree.body
    if not isinstance(call, ast.Call) or any(k.arg is None for k in call.keywords):
        return None
    try:
        keywords = {str(k.arg): _literal(k.value) for k in call.keywords}
        positional = [_literal(a) for a in call.args]
    except ValueError:
        return None
    if not positional:
        return keywords
    if len(positional) > 1:
        return None
    only = positional[0]
    if isinstance(only, dict) and not keywords:
        return only if all(isinstance(k, str) for k in only) else None
    parameter = _sole_parameter(schema)
    if parameter is None or parameter in keywords:
        return None
    return {parameter: only, **keywords}


def _sole_parameter(schema: JsonObject) -> str | None:
    required = schema.get("required")
    if isinstance(required, list) and len(required) == 1 and isinstance(required[0], str):
        return required[0]
    properties = schema.get("properties")
    if isinstance(properties, dict) and len(properties) == 1:
        return str(next(iter(properties)))
    return None


def _literal(node: ast.expr) -> Any:
    """A literal argument as JSON would have it (JSON's true/false/null accepted too)."""
    if isinstance(node, ast.Name) and node.id in _JS_LITERALS:
        return _JS_LITERALS[node.id]
    if isinstance(node, ast.Dict):
        keys = [_literal(k) if k is not None else None for k in node.keys]
        if not all(isinstance(k, str) for k in keys):
            raise ValueError("a dict argument needs string keys")
        return {k: _literal(v) for k, v in zip(keys, node.values, strict=True)}
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value
        raise ValueError("only a number can be negated")
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | None):
        return node.value
    raise ValueError(f"not a literal: {ast.dump(node)[:40]}")
