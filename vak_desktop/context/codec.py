"""Turning payload dataclasses into JSON values and back, driven by their type hints.

One generic codec instead of a hand-written `to_dict`/`from_dict` per payload: the dataclass
definitions in `payloads.py` are the schema. Decoding ignores keys a newer version added and
fills fields an older version lacked from their defaults, so old and new ledgers both read.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar

from vak_desktop.context.payloads import PAYLOAD_TYPES, Payload

T = TypeVar("T")


class PayloadDecodeError(ValueError):
    """A stored payload does not match the shape its kind declares."""


_SCALARS = (str, int, float, bool, type(None))


def to_json_value(value: Any) -> Any:
    """A dataclass (or nested containers of them) as plain JSON-able lists and dicts."""
    if type(value) in _SCALARS:  # the common case first: this runs on every ledger append
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode(arg, value, where)
            except PayloadDecodeError as exc:
                errors.append(str(exc))
        raise PayloadDecodeError("; ".join(errors))
    if origin is tuple:
        if not isinstance(value, list):
            raise PayloadDecodeError(f"{where}: expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(tp)[:1]
        return tuple(_decode(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise PayloadDecodeError(f"{where}: expected an object, got {type(value).__name__}")
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_json_value(tp, value, where)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(tp, type) and isinstance(value, tp) and not (tp is int and value is True):
        return value
    raise PayloadDecodeError(f"{where}: expected {tp}, got {type(value).__name__}")


def from_json_value(cls: type[T], data: Any, where: str = "") -> T:
    """Rebuild a dataclass of type `cls` from a JSON value produced by `to_json_value`."""
    where = where or cls.__name__
    if not isinstance(data, dict):
        raise PayloadDecodeError(f"{where}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)  # type: ignore[arg-type]  # classes are hashable
    kwargs = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise PayloadDecodeError(f"{where}: missing field {f.name!r}")
    return cls(**kwargs)


def decode_payload(kind: str, data: Any) -> Payload:
    """The typed payload for a stored (kind, JSON value) pair."""
    try:
        cls = PAYLOAD_TYPES[kind]
    except KeyError:
        raise PayloadDecodeError(f"unknown entry kind {kind!r}") from None
    return from_json_value(cls, data)
