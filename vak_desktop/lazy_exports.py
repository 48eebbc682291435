"""A package's names imported on first use: the one `__getattr__` `ledger`, `runtime` and `ui`
share, so that importing one of their modules does not import every module the package
re-exports (the window's first frame costs only what it shows: `tests/test_first_frame.py`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `from package import X` imports X from the module
    `where` names for it, and keeps it in the package's `namespace` (its `globals()`)."""

    def attribute(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return attribute
