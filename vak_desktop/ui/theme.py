"""How the window looks, in one place: the palette, the colours the chat view paints with, and
the style sheet. Light theme only for now.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

ACCENT = "#2563eb"
ACCENT_HOVER = "#1d4ed8"
WINDOW = "#f3f4f6"
SIDEBAR = "#e9ebef"
CANVAS = "#f8f9fb"  # behind the messages
TEXT = "#1f2328"
CODE_BACKGROUND = "#f1f3f6"
SUBTLE = "#5b6472"
BORDER = "#d5d9df"

USER_BACKGROUND = "#e6efff"
USER_BORDER = "#c3d5fb"
ASSISTANT_BACKGROUND = "#ffffff"
ASSISTANT_BORDER = "#dfe3e8"

WARNING = "#9a5b00"
DANGER = "#b42318"
DANGER_BACKGROUND = "#fdecea"
DANGER_BORDER = "#f3b8b2"

MIN_POINT_SIZE = 10.0

STYLE_SHEET = f"""
QMainWindow, QWidget#chatPane {{ background: {WINDOW}; }}
QWidget#sidebar {{ background: {SIDEBAR}; border-right: 1px solid {BORDER}; }}
QListWidget#sessionList {{
    background: transparent; border: none; outline: none;
}}
QListWidget#sessionList::item {{
    padding: 7px 10px; margin: 1px 0; border-radius: 6px; color: {TEXT};
}}
QListWidget#sessionList::item:hover {{ background: #dde1e7; }}
QListWidget#sessionList::item:selected {{ background: #d3dcf0; color: {TEXT}; }}
QLabel#sidebarTitle {{ color: {SUBTLE}; font-weight: bold; }}
QLabel#fieldLabel {{ color: {SUBTLE}; }}
QTextBrowser#chatView {{
    background: {CANVAS}; border: 1px solid {BORDER}; border-radius: 8px;
}}
QPlainTextEdit#composer {{
    background: white; border: 1px solid {BORDER}; border-radius: 8px; padding: 6px;
}}
QPlainTextEdit#composer:focus {{ border: 1px solid {ACCENT}; }}
QPushButton {{
    padding: 6px 14px; border: 1px solid {BORDER}; border-radius: 6px; background: white;
}}
QPushButton:hover {{ background: #f0f2f5; }}
QPushButton:disabled {{ color: #a0a6ae; background: #f3f4f6; }}
QPushButton#sendButton {{
    background: {ACCENT}; color: white; border: 1px solid {ACCENT}; font-weight: bold;
}}
QPushButton#sendButton:hover {{ background: {ACCENT_HOVER}; }}
QPushButton#sendButton:disabled {{ background: #9db7ee; border-color: #9db7ee; color: #eef3fd; }}
QScrollBar:vertical {{ background: transparent; width: 10px; margin: 2px; }}
QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 2px; }}
QScrollBar::handle {{ background: #c3c8cf; border-radius: 3px; }}
QScrollBar::handle:hover {{ background: #a9afb8; }}
QScrollBar::handle:vertical {{ min-height: 28px; }}
QScrollBar::handle:horizontal {{ min-width: 28px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: none; }}
QFrame#banner {{
    background: {DANGER_BACKGROUND}; border-bottom: 1px solid {DANGER_BORDER};
}}
QFrame#banner QLabel {{ color: {DANGER}; }}
QStatusBar {{ background: {SIDEBAR}; border-top: 1px solid {BORDER}; color: {SUBTLE}; }}
QStatusBar QLabel {{ color: {SUBTLE}; padding: 0 8px; }}
"""


def apply_theme(app: QApplication) -> None:
    """Fusion style with our palette and style sheet, and a body font no smaller than 10 pt."""
    app.setStyle("Fusion")
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Window, QColor(WINDOW))
    palette.setColor(QPalette.ColorRole.WindowText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Base, QColor("white"))
    palette.setColor(QPalette.ColorRole.Text, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Button, QColor("white"))
    palette.setColor(QPalette.ColorRole.ButtonText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Highlight, QColor(ACCENT))
    palette.setColor(QPalette.ColorRole.HighlightedText, QColor("white"))
    palette.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8b929c"))
    app.setPalette(palette)
    font = QFont(app.font())
    if font.pointSizeF() < MIN_POINT_SIZE:
        font.setPointSizeF(MIN_POINT_SIZE)
        app.setFont(font)
    app.setStyleSheet(STYLE_SHEET)
