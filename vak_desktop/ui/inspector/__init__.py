"""The inspector: the plan, the request, the evidence and the probe behind every turn.

`source.Inspection` reads them from the ledger and the runtime; `dock.InspectorDock` holds one
panel per tab (`plan`, `request`, `evidence`, `probe`).
"""

from vak_desktop.ui.inspector.dock import InspectorDock
from vak_desktop.ui.inspector.source import NEXT, Gauge, Inspection

__all__ = ["NEXT", "Gauge", "Inspection", "InspectorDock"]
