"""Cold start (issue 25 item 9): the real app shows its window before the ledger, the providers,
the runtime, httpx or the MCP client are imported, and the window becomes whole in place.

Run as a fresh process (a clean `sys.modules`): the app's own `main`, on a real ledger file with
one chat, offscreen, with a logging handler that looks at the process the moment the app logs
"window shown" and again at "window ready".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vak_desktop.context.payloads import AssistantStep, Directive
from vak_desktop.ledger import LEDGER_FILENAME, Ledger

# Nothing the first frame shows needs these; each cost the start-up time it was measured at.
HEAVY = (
    "httpx",
    "mcp",
    "sqlite_utils",
    "jsonschema",
    "keyring",
    "vak_desktop.ledger.store",
    "vak_desktop.providers",
    "vak_desktop.runtime.turn.runner",
    "vak_desktop.runtime.tools",
    "vak_desktop.runtime.lexicons",
    "vak_desktop.context.payloads",
    "vak_desktop.ui.chat.chat_service",
    "vak_desktop.ui.chat.chat_view",
)

WATCH = """
import json, logging, sys
from PySide6.QtWidgets import (
    QAbstractButton, QApplication, QComboBox, QLineEdit, QListWidget, QMainWindow, QPlainTextEdit, QWidget,
)
from vak_desktop import app as vak_app

HEAVY = {heavy!r}
CONTROLS = (QAbstractButton, QComboBox, QLineEdit, QListWidget, QPlainTextEdit)


def window():
    (found,) = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow)]
    return found


def look():
    w = window()
    controls = [
        c for c in w.findChildren(QWidget) if isinstance(c, CONTROLS) and c.isVisibleTo(w)
    ]
    return {{
        "id": id(w),
        "visible": w.isVisible(),
        "exposed": w.windowHandle() is not None and w.windowHandle().isExposed(),
        "title": w.windowTitle(),
        "status": w.statusBar().currentMessage(),
        "menus": [a.text() for a in w.menuBar().actions()],
        "controls": len(controls),
        "enabled": [type(c).__name__ + ":" + c.objectName() for c in controls if c.isEnabled()],
        "heavy": [m for m in HEAVY if m in sys.modules],
    }}


def report_ready():
    seen = look()
    w = window()
    seen.update(
        ready=getattr(w, "ready", None),
        chats=w.sessions.list.count(),
        open=w.service.session,
        composer=w.composer.input.isEnabled(),
    )
    print("ready " + json.dumps(seen), flush=True)
    QApplication.instance().closeAllWindows()


class Watch(logging.Handler):
    def emit(self, record):
        said = record.getMessage()
        if said == "window shown":
            print("shown " + json.dumps(look()), flush=True)
            if not hasattr(window(), "ready"):  # a window that was whole when first shown
                report_ready()
        elif said == "window ready":
            report_ready()


logging.getLogger("vak_desktop.app").addHandler(Watch())
sys.exit(vak_app.main(["--host", "http://127.0.0.1:9"]))  # the discard port: nothing is asked
"""


@pytest.mark.slow
def test_the_window_is_on_screen_before_the_services_are_imported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    ledger = Ledger.open(data / LEDGER_FILENAME)
    session = ledger.create_session("the chat to reopen").id
    ledger.append(session, Directive(text="hello"))
    ledger.append(session, AssistantStep(text="hi"))
    ledger.close()
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "VAK_DATA_DIR": str(data),
        "VAK_LOG_DIR": str(tmp_path / "log"),
    }
    done = subprocess.run(
        [sys.executable, "-c", WATCH.format(heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " {" in line)
    assert set(said) == {"shown", "ready"}, done.stdout + done.stderr
    shown, ready = json.loads(said["shown"]), json.loads(said["ready"])

    # the first frame: the real window, on screen, its shell laid out, nothing heavy imported
    assert shown["heavy"] == []
    assert (shown["visible"], shown["exposed"], shown["title"]) == (True, True, "Vak")
    assert shown["status"] == "Opening…"
    assert shown["menus"] == ["&File", "&Chat", "&View", "&Tools"]
    assert shown["controls"] >= 7  # New chat, search, the list, model, Refresh, message, Send…
    assert shown["enabled"] == []  # every one waits for the services behind it

    # the same window, whole: the chat reopened, the composer live
    assert ready["id"] == shown["id"]
    assert ready["ready"] and ready["composer"]
    assert (ready["chats"], ready["open"]) == (1, session)
    assert ready["menus"] == ["&File", "&Chat", "&View", "&Tools"]
    assert ready["status"] != "Opening…"
    assert "vak_desktop.ledger.store" in ready["heavy"]  # what the window waited for
