"""The model picker: the provider's models in a combo box, and a button to ask again."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from vak_desktop.ui.chat_service import ChatService


class ModelPicker(QWidget):
    """Shows `service.models`; choosing one selects it on the service."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        label = QLabel("Model")
        label.setObjectName("fieldLabel")
        self.combo = QComboBox()
        self.combo.setObjectName("modelPicker")
        self.combo.setPlaceholderText("No models yet")
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.setMinimumWidth(240)
        self.refresh = QPushButton("Refresh")
        self.refresh.setToolTip("Ask the server for its models again")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(label)
        layout.addWidget(self.combo)
        layout.addWidget(self.refresh)
        layout.addStretch(1)
        self.combo.activated.connect(self._chosen)
        self.refresh.clicked.connect(lambda: service.refresh_models())
        service.modelsChanged.connect(self._fill)
        service.modelChanged.connect(self._show_selected)
        self._fill(service.models)

    def choose(self, model: str) -> None:
        """Select `model` as a user would (tests and scripts use this)."""
        index = self.combo.findText(model)
        if index < 0:
            raise ValueError(f"{model!r} is not in the list: {self._service.models}")
        self.combo.setCurrentIndex(index)
        self.combo.activated.emit(index)

    def _fill(self, models: list[str]) -> None:
        blocked = self.combo.blockSignals(True)
        try:
            self.combo.clear()
            self.combo.addItems(models)
            self.combo.setEnabled(bool(models))
        finally:
            self.combo.blockSignals(blocked)
        self._show_selected(self._service.model)

    def _show_selected(self, model: str) -> None:
        blocked = self.combo.blockSignals(True)
        try:
            self.combo.setCurrentIndex(self.combo.findText(model) if model else -1)
        finally:
            self.combo.blockSignals(blocked)

    def _chosen(self, index: int) -> None:
        self._service.select_model(self.combo.itemText(index))
