"""Checking a captured request body against an official SDK's request types, strictly.

The `openai` and `anthropic` SDKs describe every request as TypedDicts (`CompletionCreateParams
Streaming`, `MessageCreateParamsStreaming`): code no one here wrote. pydantic's TypeAdapter over
them ignores unknown keys and validates `Iterable[...]` fields lazily, so a wrong block could
pass unseen; this walker checks every key and every item: no key the type does not declare, every
required key present, every value of a declared type (Literal, Union, TypedDict, Iterable,
Dict, str, int, float, bool). `sdk_errors(Type, body)` lists what does not match.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

from typing_extensions import is_typeddict


def sdk_errors(tp: Any, value: Any) -> list[str]:
    """Every way `value` does not match the SDK type `tp` (empty: it matches)."""
    errors: list[str] = []
    _check(tp, value, "body", errors)
    return errors


def _hints(tp: Any) -> dict[str, Any]:
    return typing.get_type_hints(tp, include_extras=True)


def _required(tp: Any, hints: dict[str, Any]) -> set[str]:
    """The keys a TypedDict requires, read from its hints: the SDKs annotate lazily (`from
    __future__ import annotations`), so `__required_keys__` misses their `Required[...]`."""
    declared = set(getattr(tp, "__required_keys__", ()))
    return {
        key
        for key, hint in hints.items()
        if get_origin(hint) is Required or (key in declared and get_origin(hint) is not NotRequired)
    }


def _check(tp: Any, value: Any, where: str, errors: list[str]) -> None:
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any or tp is object:
        return
    if origin in (Required, NotRequired, typing.Annotated):
        _check(args[0], value, where, errors)
        return
    if origin in (Union, types.UnionType):
        for option in args:
            trial: list[str] = []
            _check(option, value, where, trial)
            if not trial:
                return
        errors.append(f"{where}: {_short(value)} matches none of {_name(tp)}")
        return
    if origin is Literal:
        if value not in args:
            errors.append(f"{where}: {value!r} is not one of {args}")
        return
    if tp is type(None):
        if value is not None:
            errors.append(f"{where}: expected null")
        return
    if is_typeddict(tp):
        if not isinstance(value, dict):
            errors.append(f"{where}: expected an object ({tp.__name__})")
            return
        hints = _hints(tp)
        for key in value:
            if key not in hints:
                errors.append(f"{where}: {tp.__name__} has no key {key!r}")
        for key in _required(tp, hints):
            if key not in value:
                errors.append(f"{where}: {tp.__name__} requires {key!r}")
        for key, item in value.items():
            if key in hints:
                _check(hints[key], item, f"{where}.{key}", errors)
        return
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, tuple):
        if not isinstance(value, list):
            errors.append(f"{where}: expected a list")
            return
        item_type = args[0] if args else Any
        for index, item in enumerate(value):
            _check(item_type, item, f"{where}[{index}]", errors)
        return
    if origin in (dict, collections.abc.Mapping) or tp is dict:
        if not isinstance(value, dict):
            errors.append(f"{where}: expected an object")
            return
        if args:
            for key, item in value.items():
                _check(args[1], item, f"{where}.{key}", errors)
        return
    if tp is float:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            errors.append(f"{where}: expected a number, got {_short(value)}")
        return
    if tp is int:
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(f"{where}: expected an integer, got {_short(value)}")
        return
    if isinstance(tp, type):
        if not isinstance(value, tp):
            errors.append(f"{where}: expected {tp.__name__}, got {_short(value)}")
        return
    # a forward reference or alias the SDK resolves lazily: accept rather than guess
    return


def _name(tp: Any) -> str:
    return " | ".join(getattr(a, "__name__", repr(a)) for a in get_args(tp))[:200]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."
