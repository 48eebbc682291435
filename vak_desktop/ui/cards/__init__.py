"""Native cards, one module per semantic type, built from `Presentation` ledger entries.

`card_widget` picks the module for the entry's `semantic_type` (unknown types, and payloads a
card cannot read, get the generic JSON card with a note) and wraps the body in the shared
frame with 👍 / 👎 and dismiss — or, for a dismissed card, the one-line stub with Restore.
A type's module is imported the first time a card of that type is drawn: the chart's QtCharts
alone cost ~100 ms of every start, with no chart on screen.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType
from typing import Any

from PySide6.QtWidgets import QWidget

from vak_desktop.context.payloads import Presentation
from vak_desktop.ui.cards import generic
from vak_desktop.ui.cards.frame import CardFrame, DismissedStub, OnSelection, OnVerdict

log = logging.getLogger(__name__)

CARD_TYPES: dict[str, str] = {  # semantic type -> its module in this package
    "metric": "metric",
    "table": "table",
    "chart": "chart",
    "entity": "entity",
    "checklist": "checklist",
    "timeline": "timeline",
    "research.synthesis": "synthesis",
}

__all__ = ["CARD_TYPES", "CardFrame", "DismissedStub", "card_module", "card_widget"]


def card_module(semantic_type: str) -> ModuleType:
    """The module that draws cards of `semantic_type` (the generic JSON card for others)."""
    name = CARD_TYPES.get(semantic_type)
    return importlib.import_module(f"{__name__}.{name}") if name else generic


def card_widget(
    presentation_id: str,
    presentation: Presentation,
    *,
    verdict: str = "",
    dismissed: bool = False,
    on_verdict: OnVerdict | None = None,
    on_selection: OnSelection | None = None,
) -> QWidget:
    """The widget for one Presentation entry: its card, or the stub of a dismissed one."""
    module = card_module(presentation.semantic_type)
    payload: dict[str, Any] = dict(presentation.payload)
    title = presentation.title
    try:
        title = title or module.title_of(payload)
    except Exception:
        title = presentation.title
    if dismissed:
        return DismissedStub(presentation_id, module.KIND_LABEL, title, on_selection)
    try:
        body = module.build(payload)
        kind_label = module.KIND_LABEL
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        log.info("card %s (%s) shown as data: %r", presentation_id, presentation.semantic_type, exc)
        body = generic.build(
            payload, note=f"This {presentation.semantic_type} card could not be drawn ({exc!r})."
        )
        kind_label = generic.KIND_LABEL
    if module is generic and presentation.semantic_type:
        kind_label = presentation.semantic_type
    return CardFrame(
        presentation_id,
        kind_label,
        title,
        body,
        verdict=verdict,
        on_verdict=on_verdict,
        on_selection=on_selection,
    )
