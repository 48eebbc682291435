"""How the window looks, in one place: light and dark palettes, and the style sheet built from one.

`apply_theme(app, "light" | "dark" | "system")` sets Qt's palette and our style sheet; "system"
follows the platform's colour scheme (Qt's style hints) and switches when it does. The colours
the chat view paints with are this module's upper-case names (`theme.TEXT`, `theme.DANGER` …):
they always hold the palette in force, so text drawn after a switch uses the new colours
(`colors()` returns the same as a `Palette`). A widget that bakes a colour into its own style
sheet or document registers how to redo it (`follow_theme`, `on_theme`), and every switch redoes
them all, so an open chat restyles at once. Every text colour keeps a WCAG contrast of at
least 4.5:1 on the surfaces it is drawn on (`tests/ui/test_settings_dialog.py` checks it).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

MIN_POINT_SIZE = 10.0
THEMES = ("system", "light", "dark")


@dataclass(frozen=True)
class Palette:
    """Every colour the window uses, by role."""

    name: str
    ACCENT: str  # buttons that act; white text on it
    ACCENT_HOVER: str
    ACCENT_TEXT: str  # the accent as text on WINDOW/BASE (links, active labels)
    WINDOW: str
    SIDEBAR: str
    CANVAS: str  # behind the messages
    BASE: str  # inputs, lists, tables
    TEXT: str
    CODE_BACKGROUND: str
    SUBTLE: str
    BORDER: str
    HOVER: str
    SELECTED: str
    DISABLED_TEXT: str
    DISABLED_BACKGROUND: str
    SCROLL_HANDLE: str
    USER_BACKGROUND: str
    USER_BORDER: str
    ASSISTANT_BACKGROUND: str
    ASSISTANT_BORDER: str
    SUCCESS: str
    WARNING: str
    DANGER: str
    DANGER_BACKGROUND: str
    DANGER_BORDER: str
    INFO_BACKGROUND: str
    INFO_BORDER: str


LIGHT = Palette(
    name="light",
    ACCENT="#2563eb",
    ACCENT_HOVER="#1d4ed8",
    ACCENT_TEXT="#1d4ed8",
    WINDOW="#f3f4f6",
    SIDEBAR="#e9ebef",
    CANVAS="#f8f9fb",
    BASE="#ffffff",
    TEXT="#1f2328",
    CODE_BACKGROUND="#f1f3f6",
    SUBTLE="#545d6b",
    BORDER="#d5d9df",
    HOVER="#dde1e7",
    SELECTED="#d3dcf0",
    DISABLED_TEXT="#8a919b",
    DISABLED_BACKGROUND="#eef0f3",
    SCROLL_HANDLE="#c3c8cf",
    USER_BACKGROUND="#e6efff",
    USER_BORDER="#c3d5fb",
    ASSISTANT_BACKGROUND="#ffffff",
    ASSISTANT_BORDER="#dfe3e8",
    SUCCESS="#176b30",
    WARNING="#8a5100",
    DANGER="#b42318",
    DANGER_BACKGROUND="#fdecea",
    DANGER_BORDER="#f3b8b2",
    INFO_BACKGROUND="#eef4ff",
    INFO_BORDER="#c3d5fb",
)

DARK = Palette(
    name="dark",
    ACCENT="#2563eb",
    ACCENT_HOVER="#3b74f0",
    ACCENT_TEXT="#7eb0ff",
    WINDOW="#1c1e22",
    SIDEBAR="#17191c",
    CANVAS="#202328",
    BASE="#25282e",
    TEXT="#e6e8eb",
    CODE_BACKGROUND="#2c3038",
    SUBTLE="#a4acb8",
    BORDER="#3a3f48",
    HOVER="#2c3037",
    SELECTED="#2b3a55",
    DISABLED_TEXT="#6f7682",
    DISABLED_BACKGROUND="#23262b",
    SCROLL_HANDLE="#4a505a",
    USER_BACKGROUND="#1e3050",
    USER_BORDER="#2f4a78",
    ASSISTANT_BACKGROUND="#262a30",
    ASSISTANT_BORDER="#353a43",
    SUCCESS="#56d37a",
    WARNING="#e8ad4a",
    DANGER="#ff8a80",
    DANGER_BACKGROUND="#3a1f1f",
    DANGER_BORDER="#6e2f2b",
    INFO_BACKGROUND="#1f2a3d",
    INFO_BORDER="#2f4a78",
)

# The palette in force, role by role (rebound by `apply_theme`; the chat view reads these).
ACCENT = LIGHT.ACCENT
ACCENT_HOVER = LIGHT.ACCENT_HOVER
ACCENT_TEXT = LIGHT.ACCENT_TEXT
WINDOW = LIGHT.WINDOW
SIDEBAR = LIGHT.SIDEBAR
CANVAS = LIGHT.CANVAS
BASE = LIGHT.BASE
TEXT = LIGHT.TEXT
CODE_BACKGROUND = LIGHT.CODE_BACKGROUND
SUBTLE = LIGHT.SUBTLE
BORDER = LIGHT.BORDER
HOVER = LIGHT.HOVER
SELECTED = LIGHT.SELECTED
DISABLED_TEXT = LIGHT.DISABLED_TEXT
DISABLED_BACKGROUND = LIGHT.DISABLED_BACKGROUND
SCROLL_HANDLE = LIGHT.SCROLL_HANDLE
USER_BACKGROUND = LIGHT.USER_BACKGROUND
USER_BORDER = LIGHT.USER_BORDER
ASSISTANT_BACKGROUND = LIGHT.ASSISTANT_BACKGROUND
ASSISTANT_BORDER = LIGHT.ASSISTANT_BORDER
SUCCESS = LIGHT.SUCCESS
WARNING = LIGHT.WARNING
DANGER = LIGHT.DANGER
DANGER_BACKGROUND = LIGHT.DANGER_BACKGROUND
DANGER_BORDER = LIGHT.DANGER_BORDER
INFO_BACKGROUND = LIGHT.INFO_BACKGROUND
INFO_BORDER = LIGHT.INFO_BORDER

_PALETTES = {"light": LIGHT, "dark": DARK}
_active = LIGHT
_choice = "light"
_following_system = False


def colors() -> Palette:
    """The palette in force."""
    return _active


def _publish(palette: Palette) -> None:
    """Make the module's upper-case names the palette in force (the chat view reads them)."""
    global _active
    _active = palette
    globals().update({f.name: getattr(palette, f.name) for f in dataclasses.fields(palette)[1:]})


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 … 21)."""

    def luminance(hex_colour: str) -> float:
        color = QColor(hex_colour)
        channels = []
        for c in (color.redF(), color.greenF(), color.blueF()):
            channels.append(c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        r, g, b = channels
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def system_scheme() -> str:
    """ "dark" or "light": what the platform asks for ("light" when it does not say)."""
    hints = QGuiApplication.styleHints()
    return "dark" if hints.colorScheme() == Qt.ColorScheme.Dark else "light"


def resolve(theme: str) -> Palette:
    """The palette `theme` ("light", "dark" or "system") stands for now."""
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEMES)}, not {theme!r}")
    return _PALETTES[system_scheme() if theme == "system" else theme]


def current_theme() -> str:
    """The theme the user chose last ("system" included)."""
    return _choice


def apply_theme(app: QApplication, theme: str = "light") -> Palette:
    """Fusion style with the palette of `theme`, our style sheet, and a body font no smaller
    than 10 pt. With "system" the window follows the platform when its scheme changes."""
    global _choice, _following_system
    palette = resolve(theme)
    _choice = theme
    if theme == "system" and not _following_system:
        QGuiApplication.styleHints().colorSchemeChanged.connect(_system_changed)
        _following_system = True
    _publish(palette)
    app.setStyle("Fusion")
    app.setPalette(qt_palette(palette))
    font = QFont(app.font())
    if font.pointSizeF() < MIN_POINT_SIZE:
        font.setPointSizeF(MIN_POINT_SIZE)
        app.setFont(font)
    app.setStyleSheet(style_sheet(palette))
    _redo_theme_hooks(app)
    return palette


W = TypeVar("W", bound=QWidget)
_HOOKS = "_vak_theme_hooks"  # the Python attribute a widget keeps its hooks in


def on_theme(widget: W, hook: Callable[[W], None]) -> W:
    """Run `hook(widget)` after every theme switch (while the widget lives); returns it."""
    hooks: list[Callable[[W], None]] | None = getattr(widget, _HOOKS, None)
    if hooks is None:
        hooks = []
        setattr(widget, _HOOKS, hooks)
    hooks.append(hook)
    return widget


def follow_theme(widget: W, style: Callable[[QPalette], str]) -> W:
    """Give `widget` the style sheet `style(palette)` now and again after every theme switch.
    `palette` is the application's (a widget's own palette is the one its style sheet
    polished, which would carry the old colours into the new ones); `style` may also read this
    module's colour names."""
    widget.setStyleSheet(style(QApplication.palette()))
    return on_theme(widget, lambda w: w.setStyleSheet(style(QApplication.palette())))


def _redo_theme_hooks(app: QApplication) -> None:
    for widget in app.allWidgets():
        for hook in getattr(widget, _HOOKS, ()):
            hook(widget)


def _system_changed(_scheme: Qt.ColorScheme) -> None:
    app = QApplication.instance()
    if _choice == "system" and isinstance(app, QApplication):
        apply_theme(app, "system")


def qt_palette(p: Palette) -> QPalette:
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, colour in (
        (roles.Window, p.WINDOW),
        (roles.WindowText, p.TEXT),
        (roles.Base, p.BASE),
        (roles.AlternateBase, p.CANVAS),
        (roles.Text, p.TEXT),
        (roles.Button, p.BASE),
        (roles.ButtonText, p.TEXT),
        (roles.BrightText, "#ffffff"),
        (roles.Highlight, p.ACCENT),
        (roles.HighlightedText, "#ffffff"),
        (roles.ToolTipBase, p.BASE),
        (roles.ToolTipText, p.TEXT),
        (roles.PlaceholderText, p.DISABLED_TEXT),
        (roles.Link, p.ACCENT_TEXT),
        (roles.Mid, p.BORDER),
        (roles.Midlight, p.HOVER),
        (roles.Dark, p.BORDER),
    ):
        palette.setColor(role, QColor(colour))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(disabled, role, QColor(p.DISABLED_TEXT))
    return palette


def _arrow(p: Palette) -> str:
    """A small chevron in the palette's subtle colour, as an SVG file the style sheet names
    (a style sheet can only draw a combo box's arrow from an image)."""
    path = Path(tempfile.gettempdir()) / f"vak-chevron-{p.SUBTLE.lstrip('#')}.svg"
    if not path.exists():
        path.write_text(
            '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="6" viewBox="0 0 10 6">'
            f'<path d="M1 1l4 4 4-4" fill="none" stroke="{p.SUBTLE}" stroke-width="1.6" '
            'stroke-linecap="round" stroke-linejoin="round"/></svg>',
            encoding="utf-8",
        )
    return path.as_posix()


def _check() -> str:
    """A white tick for checked boxes (on the accent colour, in both themes)."""
    path = Path(tempfile.gettempdir()) / "vak-tick-ffffff.svg"
    if not path.exists():
        path.write_text(
            '<svg xmlns="http://www.w3.org/2000/svg" width="14" height="14" viewBox="0 0 14 14">'
            '<path d="M3 7.2l2.6 2.6L11 4.4" fill="none" stroke="#ffffff" stroke-width="1.9" '
            'stroke-linecap="round" stroke-linejoin="round"/></svg>',
            encoding="utf-8",
        )
    return path.as_posix()


def _dot() -> str:
    """A white dot for the checked radio button (on the accent colour, in both themes)."""
    path = Path(tempfile.gettempdir()) / "vak-dot-ffffff.svg"
    if not path.exists():
        path.write_text(
            '<svg xmlns="http://www.w3.org/2000/svg" width="14" height="14" viewBox="0 0 14 14">'
            '<circle cx="7" cy="7" r="3" fill="#ffffff"/></svg>',
            encoding="utf-8",
        )
    return path.as_posix()


def style_sheet(p: Palette) -> str:
    """The style sheet for palette `p` (objects are addressed by their object names)."""
    return f"""
QMainWindow, QDialog, QWidget#chatPane {{ background: {p.WINDOW}; color: {p.TEXT}; }}
QWidget#sidebar {{ background: {p.SIDEBAR}; border-right: 1px solid {p.BORDER}; }}
QListWidget#sessionList {{ background: transparent; border: none; outline: none; }}
QListWidget#sessionList::item {{
    padding: 7px 10px; margin: 1px 0; border-radius: 6px; color: {p.TEXT};
}}
QListWidget#sessionList::item:hover {{ background: {p.HOVER}; }}
QListWidget#sessionList::item:selected {{ background: {p.SELECTED}; color: {p.TEXT}; }}
QLabel#sidebarTitle, QLabel#sectionTitle {{ color: {p.SUBTLE}; font-weight: bold; }}
QLabel#fieldLabel, QLabel#hint {{ color: {p.SUBTLE}; }}
QLabel#fieldError {{ color: {p.DANGER}; }}
QLabel#dialogTitle {{ font-size: 15pt; font-weight: bold; }}
QTextBrowser#chatView {{
    background: {p.CANVAS}; border: 1px solid {p.BORDER}; border-radius: 8px; color: {p.TEXT};
}}
QPlainTextEdit#composer {{
    background: {p.BASE}; border: 1px solid {p.BORDER}; border-radius: 8px; padding: 6px;
    color: {p.TEXT};
}}
QPlainTextEdit#composer:focus, QLineEdit:focus, QComboBox:focus, QListWidget:focus,
QTableWidget:focus {{
    border: 2px solid {p.ACCENT_TEXT};
}}
QPushButton:focus, QToolButton:focus {{ border: 2px solid {p.ACCENT_TEXT}; }}
QComboBox:disabled, QLineEdit:disabled {{
    color: {p.DISABLED_TEXT}; background: {p.DISABLED_BACKGROUND}; border-style: dashed;
}}
QLineEdit, QComboBox, QPlainTextEdit {{
    background: {p.BASE}; color: {p.TEXT}; border: 1px solid {p.BORDER}; border-radius: 6px;
    padding: 4px 6px; selection-background-color: {p.ACCENT}; selection-color: white;
}}
QComboBox::drop-down {{ border: none; width: 24px; }}
QComboBox::down-arrow {{ image: url({_arrow(p)}); width: 10px; height: 6px; }}
QCheckBox::indicator, QTableWidget::indicator {{
    width: 14px; height: 14px; border: 1px solid {p.SUBTLE}; border-radius: 3px;
    background: {p.BASE};
}}
QCheckBox::indicator:checked, QTableWidget::indicator:checked {{
    background: {p.ACCENT}; border-color: {p.ACCENT}; image: url({_check()});
}}
QRadioButton::indicator {{
    width: 14px; height: 14px; border: 1px solid {p.SUBTLE}; border-radius: 8px;
    background: {p.BASE};
}}
QRadioButton::indicator:checked {{
    background: {p.ACCENT}; border-color: {p.ACCENT}; image: url({_dot()});
}}
QCheckBox::indicator:hover, QRadioButton::indicator:hover {{ border-color: {p.ACCENT}; }}
QCheckBox::indicator:disabled, QRadioButton::indicator:disabled {{
    border-color: {p.DISABLED_TEXT}; background: {p.DISABLED_BACKGROUND};
}}
QCheckBox::indicator:checked:disabled, QRadioButton::indicator:checked:disabled {{
    background: {p.DISABLED_TEXT};
}}
QCheckBox:disabled, QRadioButton:disabled {{ color: {p.DISABLED_TEXT}; }}
QLineEdit[invalid="true"] {{ border: 1px solid {p.DANGER}; }}
QComboBox QAbstractItemView {{
    background: {p.BASE}; color: {p.TEXT}; selection-background-color: {p.SELECTED};
    selection-color: {p.TEXT};
}}
QPushButton {{
    padding: 6px 14px; border: 1px solid {p.BORDER}; border-radius: 6px; background: {p.BASE};
    color: {p.TEXT};
}}
QPushButton:hover {{ background: {p.HOVER}; }}
QPushButton:disabled {{ color: {p.DISABLED_TEXT}; background: {p.DISABLED_BACKGROUND}; }}
QPushButton#sendButton, QPushButton#primaryButton {{
    background: {p.ACCENT}; color: white; border: 1px solid {p.ACCENT}; font-weight: bold;
}}
QPushButton#sendButton:hover, QPushButton#primaryButton:hover {{ background: {p.ACCENT_HOVER}; }}
QPushButton#sendButton:focus, QPushButton#primaryButton:focus {{ border: 2px solid {p.TEXT}; }}
QPushButton#sendButton:disabled, QPushButton#primaryButton:disabled {{
    background: {p.DISABLED_BACKGROUND}; border-color: {p.BORDER}; color: {p.DISABLED_TEXT};
}}
QPushButton#dangerButton {{ color: {p.DANGER}; }}
QTableWidget, QListWidget {{
    background: {p.BASE}; color: {p.TEXT}; border: 1px solid {p.BORDER}; border-radius: 6px;
    gridline-color: {p.BORDER}; alternate-background-color: {p.CANVAS};
    selection-background-color: {p.SELECTED}; selection-color: {p.TEXT};
}}
QHeaderView::section {{
    background: {p.WINDOW}; color: {p.SUBTLE}; border: none;
    border-bottom: 1px solid {p.BORDER}; padding: 5px 8px; font-weight: bold;
}}
QTabWidget::pane {{ border: 1px solid {p.BORDER}; border-radius: 6px; background: {p.WINDOW}; }}
QTabBar::tab {{
    padding: 6px 14px; color: {p.SUBTLE}; background: transparent; border: none;
    border-bottom: 2px solid transparent;
}}
QTabBar::tab:selected {{ color: {p.TEXT}; border-bottom: 2px solid {p.ACCENT}; }}
QProgressBar {{
    background: {p.DISABLED_BACKGROUND}; border: 1px solid {p.BORDER}; border-radius: 5px;
    color: {p.TEXT}; text-align: center; min-height: 18px;
}}
QProgressBar::chunk {{ background: {p.ACCENT}; border-radius: 4px; }}
QFrame#card {{
    background: {p.BASE}; border: 1px solid {p.BORDER}; border-radius: 8px;
}}
QFrame#onboarding {{
    background: {p.INFO_BACKGROUND}; border: 1px solid {p.INFO_BORDER}; border-radius: 10px;
}}
QFrame#onboarding QLabel {{ background: transparent; }}
QFrame#undoNotice {{
    background: {p.INFO_BACKGROUND}; border: 1px solid {p.INFO_BORDER}; border-radius: 8px;
}}
QFrame#undoNotice QLabel {{ background: transparent; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 2px; }}
QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 2px; }}
QScrollBar::handle {{ background: {p.SCROLL_HANDLE}; border-radius: 3px; }}
QScrollBar::handle:hover {{ background: {p.SUBTLE}; }}
QScrollBar::handle:vertical {{ min-height: 28px; }}
QScrollBar::handle:horizontal {{ min-width: 28px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: none; }}
QFrame#banner {{ background: {p.DANGER_BACKGROUND}; border-bottom: 1px solid {p.DANGER_BORDER}; }}
QFrame#banner QLabel {{ color: {p.DANGER}; }}
QStatusBar {{ background: {p.SIDEBAR}; border-top: 1px solid {p.BORDER}; color: {p.SUBTLE}; }}
QStatusBar QLabel {{ color: {p.SUBTLE}; padding: 0 8px; }}
QMenuBar {{ background: {p.WINDOW}; color: {p.TEXT}; }}
QMenuBar::item:selected, QMenu::item:selected {{ background: {p.SELECTED}; color: {p.TEXT}; }}
QMenu {{ background: {p.BASE}; color: {p.TEXT}; border: 1px solid {p.BORDER}; }}
QToolTip {{ background: {p.BASE}; color: {p.TEXT}; border: 1px solid {p.BORDER}; }}
"""
