"""Pull a model by name: a name field, Pull, a progress bar with the bytes so far, and Cancel.

Shared by the model manager and onboarding. It follows one `ModelsController`'s pull signals,
so two panels over the same controller show the same pull; `values` keeps every value the bar
took during the last pull (tests check the bar really advanced).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.runtime.providers.models import ModelRow, PullState, check_model_name
from vak_desktop.ui.models.models_controller import CANCELLED, SUCCEEDED, ModelsController

_PROGRESS_STEPS = 1000


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit in ("B", "KB") else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"  # pragma: no cover


class PullPanel(QFrame):
    """Pull a model by name: a name field, Pull, a progress bar with the bytes, and Cancel."""

    def __init__(
        self, controller: ModelsController, suggestion: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.name = QLineEdit(suggestion)
        self.name.setPlaceholderText("Model name, e.g. qwen2.5:0.5b or llama3.2:1b")
        self.name.setAccessibleName("Model to pull")
        self.name.returnPressed.connect(self.start)
        self.pull_button = QPushButton("Pull")
        self.pull_button.setObjectName("primaryButton")
        self.pull_button.setAccessibleName("Pull model")
        self.pull_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel pull")
        self.cancel_button.clicked.connect(controller.cancel_pull)
        # Enter in the field is the field's: in a dialog it would also click the default
        # button, which the pull's own Cancel had just become (the pull was cancelled unsent).
        for button in (self.pull_button, self.cancel_button):
            button.setAutoDefault(False)
        self.bar = QProgressBar()
        self.bar.setRange(0, _PROGRESS_STEPS)
        self.bar.setAccessibleName("Pull progress")
        self.bar.setFormat("%p%")
        self.status = QLabel()
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.name, 1)
        top.addWidget(self.pull_button)
        progress = QHBoxLayout()
        progress.addWidget(self.bar, 1)
        progress.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.error)
        layout.addLayout(progress)
        layout.addWidget(self.status)
        self.values: list[int] = []  # every value the bar showed during the last pull
        self._ready = ""  # the model the status line says is ready, while it says so
        controller.pullStarted.connect(self._started)
        controller.pullProgress.connect(self.show_state)
        controller.pullFinished.connect(self._finished)
        controller.modelsChanged.connect(self._listed)
        self._idle()

    def start(self) -> None:
        """Pull the model named in the field (refuses an empty or malformed name inline)."""
        try:
            name = check_model_name(self.name.text())
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.error.hide()
        if self.controller.pull(name) is None:
            self.error.setText(f"{self.controller.pulling} is being pulled; wait or cancel it")
            self.error.show()

    def _idle(self) -> None:
        self.bar.hide()
        self.cancel_button.hide()
        self.error.hide()
        self.status.setVisible(bool(self.status.text()))
        self.pull_button.setEnabled(True)
        self.name.setEnabled(True)

    def _started(self, model: str) -> None:
        self._ready = ""
        self.values = []
        self.bar.setValue(0)
        self.bar.show()
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)
        self.pull_button.setEnabled(False)
        self.name.setEnabled(False)
        self.status.setText(f"Pulling {model}: asking for the manifest…")
        self.status.show()

    def show_state(self, state: PullState) -> None:
        """Show one progress report (the controller's signal; screenshots call it directly)."""
        value = round(state.fraction * _PROGRESS_STEPS)
        self.bar.setValue(value)
        self.values.append(value)
        self.bar.show()
        self.cancel_button.show()
        size = f" · {human_size(state.completed)} of {human_size(state.total)}"
        self.status.setText(f"{state.model}: {state.status}{size if state.total else ''}")
        self.status.show()

    def _listed(self, rows: list[ModelRow]) -> None:
        """A model deleted since its pull is no longer ready to chat with: the line goes."""
        names = {row.name for row in rows}
        if self._ready and not {self._ready, f"{self._ready}:latest"} & names:  # "llama3.2"
            self._ready = ""
            self.status.setText("")
            self.status.hide()

    def _finished(self, model: str, outcome: str, message: str) -> None:
        if outcome == SUCCEEDED:
            self.status.setText(f"✓ {model} is ready to chat with.")
            self._ready = model
            self.name.clear()
        elif outcome == CANCELLED:
            self.status.setText(f"Pull of {model} cancelled. Pulling it again resumes.")
        else:
            self.status.setText("")
            self.error.setText(f"Could not pull {model}: {message}")
        self._idle()
        if outcome not in (SUCCEEDED, CANCELLED):
            self.error.show()
