"""Qt's own messages (qWarning, qCritical … from Qt and its plugins) into the log file.

Why it exists: Qt writes them to stderr, which a desktop app started from a menu does not
have; a missing platform plugin, a font that does not load or a signal connected twice was
never seen. `install_qt_message_handler` sends each to the `qt` logger at the matching level,
with the Qt category and, when Qt gives one, the source file and line.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

log = logging.getLogger("qt")

_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def qt_message(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """The handler: one log record per Qt message."""
    category = context.category or "default"
    where = f" ({context.file}:{context.line})" if context.file else ""
    log.log(_LEVELS.get(kind, logging.WARNING), "[%s] %s%s", category, message, where)


def install_qt_message_handler() -> None:
    """Route every Qt message to the log from now on (call once, before the QApplication)."""
    qInstallMessageHandler(qt_message)
