"""The model picker: every provider's models in one combo box, grouped by provider, and a button
to ask again.

With more than one provider a model reads "Ollama — llama3.2:latest" or "claude (anthropic) —
claude-sonnet-4-5", the providers separated by a line; with Ollama alone, just the model name. A provider that cannot offer models now (no API key, not
reachable, the embedded engine starting or failed) is one greyed-out line saying so, with the
whole reason as its tooltip, so it is visible without standing in the way of the others.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QWidget,
)

from vak_desktop.runtime.providers.choices import (
    DORMANT,
    FAILED,
    NEEDS_KEY,
    READY,
    STARTING,
    UNREACHABLE,
    ModelChoice,
    ProviderListing,
)
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.parts import theme

CHOICE_ROLE = Qt.ItemDataRole.UserRole + 1  # the item's ModelChoice (None for a state line)

_STATE_WORDS = {
    UNREACHABLE: "not reachable",
    NEEDS_KEY: "needs an API key (Tools → Settings → Providers)",
    FAILED: "did not answer with models",
    STARTING: "starting…",
}


def choice_label(listing: ProviderListing, model: str, grouped: bool = True) -> str:
    """ "Ollama — llama3.2:latest" ("llama3.2:latest" alone when there is one provider); an
    engine's model says when it is not running yet."""
    label = f"{listing.title} — {model}" if grouped else model
    if listing.state == STARTING:
        return label + " (starting…)"
    return label + " (starts when picked)" if listing.state == DORMANT else label


def state_label(listing: ProviderListing) -> str:
    """The one line of a provider without models to offer: why."""
    if listing.state == FAILED and listing.kind == "embedded":
        return f"{listing.title} — could not start (see the tooltip)"
    if listing.state == READY:
        return f"{listing.title} — lists no models"
    if listing.state == UNREACHABLE and listing.host:
        return f"{listing.title} — not reachable at {listing.host}"
    return f"{listing.title} — {_STATE_WORDS.get(listing.state, listing.state or 'not asked yet')}"


class ModelPicker(QWidget):
    """Shows `service.listings`; choosing a model selects it on the service."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        label = QLabel("Model")
        label.setObjectName("fieldLabel")
        self.combo = QComboBox()
        self.combo.setObjectName("modelPicker")
        self.combo.setAccessibleName("Model")
        self.combo.setPlaceholderText("No models yet")
        # wide enough for "qwen2.5-coder:1.5b-instruct", never wider than the pane beside
        # an open inspector leaves it (AdjustToContents overlapped the buttons there)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(16)
        self.combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.combo.setMaximumWidth(420)
        self.items = QStandardItemModel(self.combo)
        self.combo.setModel(self.items)
        self.refresh = QPushButton("Refresh")
        self.refresh.setToolTip("Ask every provider for its models again")
        self.refresh.setAccessibleName("Refresh the model list")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(label)
        layout.addWidget(self.combo)
        layout.addWidget(self.refresh)
        layout.addStretch(1)
        self.combo.activated.connect(self._chosen)
        self.refresh.clicked.connect(self._refresh)
        service.choicesChanged.connect(self._fill)
        service.modelChanged.connect(self._show_selected)
        self._fill(service.listings)

    def _choice_at(self, row: int) -> ModelChoice | None:
        choice = self.combo.itemData(row, CHOICE_ROLE)
        return choice if isinstance(choice, ModelChoice) else None

    def choices(self) -> list[ModelChoice]:
        """The models that can be picked, in the order shown."""
        found = (self._choice_at(row) for row in range(self.combo.count()))
        return [choice for choice in found if choice is not None]

    def lines(self) -> list[str]:
        """Every line of the list as it reads (separators left out)."""
        texts = (self.combo.itemText(row) for row in range(self.combo.count()))
        return [text for text in texts if text]

    def choose(self, model: str | ModelChoice) -> None:
        """Select `model` (a name: the first provider listing it) as a user would."""
        for row in range(self.combo.count()):
            choice = self._choice_at(row)
            if choice is not None and model in (choice, choice.model):
                self.combo.setCurrentIndex(row)
                self.combo.activated.emit(row)
                return
        raise ValueError(f"{model!r} is not in the list: {self.lines()}")

    def _refresh(self) -> None:
        self._service.refresh_models(everything=True)

    def _fill(self, listings: list[ProviderListing]) -> None:
        blocked = self.combo.blockSignals(True)
        try:
            self.items.clear()
            grouped = len(listings) > 1  # alone, Ollama's state is the banner's to say
            for listing in listings:
                if self.items.rowCount():
                    self.combo.insertSeparator(self.items.rowCount())
                self._add(listing, grouped)
            self.combo.setEnabled(bool(self.choices()))
            self.combo.setPlaceholderText("Pick a model" if self.choices() else "No models yet")
        finally:
            self.combo.blockSignals(blocked)
        self._show_selected(self._service.model)

    def _add(self, listing: ProviderListing, grouped: bool) -> None:
        where = f" at {listing.host}" if listing.host else ""
        if listing.usable and listing.models:
            for model in listing.models:
                item = QStandardItem(choice_label(listing, model, grouped))
                item.setData(ModelChoice(listing.name, model), CHOICE_ROLE)
                item.setToolTip(f"{model} from {listing.title}{where}")
                self.items.appendRow(item)
            return
        kept = self._service.choice
        if kept is not None and kept.provider == listing.name:
            # a server that is down for a moment keeps its model selected: the picker shows it
            # (greyed) rather than "No models yet", and the next turn asks the server again
            item = QStandardItem(choice_label(listing, kept.model, grouped))
            item.setData(kept, CHOICE_ROLE)
            item.setForeground(QBrush(QColor(theme.SUBTLE)))
            item.setToolTip(f"{kept.model}: {state_label(listing)}{where}; kept selected")
            self.items.appendRow(item)
        if not grouped:
            return
        item = QStandardItem(state_label(listing))
        item.setFlags(item.flags() & ~(Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled))
        item.setForeground(QBrush(QColor(theme.SUBTLE)))  # read as a note, not as a model
        font = item.font()
        font.setItalic(True)
        item.setFont(font)
        item.setToolTip(listing.reason or f"{listing.title}{where}: {listing.state}")
        self.items.appendRow(item)

    def _show_selected(self, _model: str) -> None:
        choice = self._service.choice
        rows = range(self.combo.count())
        index = next((r for r in rows if choice and self._choice_at(r) == choice), -1)
        blocked = self.combo.blockSignals(True)
        try:
            self.combo.setCurrentIndex(index)
        finally:
            self.combo.blockSignals(blocked)
        self._fit_current()

    def _fit_current(self) -> None:
        """Wide enough for the chosen line whole ("Ollama — qwen2.5-coder:1.5b-instruct" was cut
        to 16 characters once a second provider grouped the lines), up to the maximum width."""
        combo = self.combo
        option = QStyleOptionComboBox()
        combo.initStyleOption(option)
        field = combo.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, combo
        )
        text = combo.currentText() or combo.placeholderText()
        need = combo.fontMetrics().horizontalAdvance(text) + option.rect.width() - field.width()
        combo.setMinimumWidth(min(need + 2, combo.maximumWidth()))

    def _chosen(self, index: int) -> None:
        choice = self._choice_at(index) if index >= 0 else None
        if choice is not None:
            self._service.select_model(choice)
