"""The inspector: a dock with the Plan, Request, Evidence and Probe panels.

A turn picker at the top chooses what Plan and Request show (default: the latest turn; "Next
request" is the preview of what sending now would plan). Panels are read only while the dock is
visible and only the tab in view, so a hidden inspector costs the window nothing.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.ui.inspector.evidence import EvidencePanel
from vak_desktop.ui.inspector.plan import PlanPanel
from vak_desktop.ui.inspector.probe import ProbePanel
from vak_desktop.ui.inspector.request import RequestPanel
from vak_desktop.ui.inspector.source import NEXT, Inspection

ASKED_CHARS = 48
PANELS = ("Plan", "Request", "Evidence", "Probe")


class InspectorDock(QDockWidget):
    """The four panels over one `Inspection`."""

    def __init__(self, inspection: Inspection, parent: QWidget | None = None) -> None:
        super().__init__("Inspector", parent)
        self.setObjectName("inspectorDock")
        self.setAccessibleName("Inspector")
        self.setAllowedAreas(
            Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.BottomDockWidgetArea
        )
        self._inspection = inspection
        self._stale: set[int] = set()
        self._panels: dict[str, QWidget] = {}
        self.turn = QComboBox()
        self.turn.setObjectName("inspectorTurn")
        self.turn.setAccessibleName("Turn to inspect")
        self.turn.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.turn.setMinimumContentsLength(20)
        self.turn.activated.connect(self._turn_chosen)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("inspectorTabs")
        self.tabs.setAccessibleName("Inspector panels")
        self.tabs.setDocumentMode(True)
        label = QLabel("Turn")
        label.setObjectName("fieldLabel")
        label.setAccessibleName("Turn label")
        self.picker = QWidget()
        self.picker.setAccessibleName("Turn picker")
        picker = QHBoxLayout(self.picker)
        picker.setContentsMargins(10, 8, 10, 0)
        picker.addWidget(label)
        picker.addWidget(self.turn, 1)
        body = QWidget()
        body.setObjectName("inspectorBody")
        body.setAccessibleName("Inspector body")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.picker)
        layout.addWidget(self.tabs, 1)
        self.setWidget(body)
        inspection.changed.connect(self.refresh)
        self.visibilityChanged.connect(self._shown)

    # The panels are built the first time the dock is shown: most starts never open it, and
    # building them is a third of the window's construction time.

    @property
    def plan(self) -> PlanPanel:
        self._build()
        panel = self._panels["plan"]
        assert isinstance(panel, PlanPanel)
        return panel

    @property
    def request(self) -> RequestPanel:
        self._build()
        panel = self._panels["request"]
        assert isinstance(panel, RequestPanel)
        return panel

    @property
    def evidence(self) -> EvidencePanel:
        self._build()
        panel = self._panels["evidence"]
        assert isinstance(panel, EvidencePanel)
        return panel

    @property
    def probe(self) -> ProbePanel:
        self._build()
        panel = self._panels["probe"]
        assert isinstance(panel, ProbePanel)
        return panel

    def _build(self) -> None:
        if self._panels:
            return
        inspection = self._inspection
        panels = (
            ("plan", PlanPanel(inspection), "Plan", "Plan panel"),
            ("request", RequestPanel(inspection), "Request", "Request panel"),
            ("evidence", EvidencePanel(inspection), "Evidence", "Evidence panel"),
            ("probe", ProbePanel(inspection), "Probe", "Probe panel"),
        )
        for attribute, panel, title, name in panels:
            panel.setAccessibleName(name)
            self._panels[attribute] = panel
            self.tabs.addTab(panel, title)
        self.tabs.currentChanged.connect(self._refresh_current)

    def _shown(self, visible: bool) -> None:
        if visible:
            self.refresh()

    @property
    def turn_id(self) -> str:
        data = self.turn.currentData()
        return str(data) if data is not None else NEXT

    def show_panel(self, name: str) -> None:
        """Bring the panel called `name` (Plan, Request, Evidence, Probe) to the front."""
        self._build()
        for index in range(self.tabs.count()):
            if self.tabs.tabText(index) == name:
                self.tabs.setCurrentIndex(index)
                return
        raise ValueError(f"no inspector panel called {name!r}")

    def select_turn(self, turn_id: str) -> None:
        """Inspect `turn_id` (NEXT for the next request)."""
        index = self.turn.findData(turn_id)
        if index >= 0:
            self.turn.setCurrentIndex(index)
            self._turn_chosen()

    def refresh(self) -> None:
        """Re-read after a change: the turn list, then the panel in view (others when shown)."""
        self._stale = set(range(len(PANELS)))
        if not self.isVisible():
            return
        self._build()
        previous = self.turn.currentData()
        turns = self._inspection.turns()
        blocked = self.turn.blockSignals(True)
        try:
            self.turn.clear()
            self.turn.addItem("Next request (preview)", NEXT)
            for turn in reversed(turns):
                asked = " ".join(turn.directive.text.split())
                if len(asked) > ASKED_CHARS:
                    asked = asked[: ASKED_CHARS - 1] + "…"
                self.turn.addItem(f"Turn {turn.number}: {asked}", turn.turn_id)
            index = self.turn.findData(previous) if previous not in (None, NEXT) else -1
            self.turn.setCurrentIndex(index if index >= 0 else min(1, self.turn.count() - 1))
        finally:
            self.turn.blockSignals(blocked)
        self._refresh_current()

    def _turn_chosen(self, *_args: object) -> None:
        self._stale |= {PANELS.index("Plan"), PANELS.index("Request")}
        self._refresh_current()

    def _refresh_current(self, *_args: object) -> None:
        index = self.tabs.currentIndex()
        panel = self.tabs.widget(index)
        # Evidence and Probe are about the whole chat and the model, not one turn.
        self.picker.setVisible(panel in (self.plan, self.request))
        if index not in self._stale or not self.isVisible():
            return
        self._stale.discard(index)
        if panel is self.plan:
            self.plan.show_turn(self.turn_id)
        elif panel is self.request:
            self.request.show_turn(self.turn_id)
        elif panel is self.evidence:
            self.evidence.reload()
        elif panel is self.probe:
            self.probe.reload()
