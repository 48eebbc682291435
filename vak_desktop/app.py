"""Startup of the desktop app (`vak-desktop`): QApplication, one qasync loop, and the window.

`main` builds the QApplication and runs `asyncio.Runner(loop_factory=…)` on a qasync loop
(`ui/shell/event_loop.py`): the asyncio loop *is* Qt's event loop, so every task the service starts runs on the UI thread
between Qt events. The runner runs `run_window` until its quit future completes, which happens
when the last window closes (Qt's own quit-on-last-window is off: it would stop the loop under
the runner's feet). Then the service's tasks are cancelled (a running turn is closed
`cancelled`, its partial text kept), an embedded engine is stopped, the HTTP client is closed,
and the ledger after it. Ctrl-C and SIGTERM take the same way out (`ui/shell/quit_signals.py`), and
exit 0.

The window comes first: `run_window` shows its first frame (the shell, every control disabled,
"Opening…": `ui/shell/opening.py`) before the ledger, the providers, the runtime and the tools
are even imported, then imports and opens them (`ui/shell/wiring.py`) and attaches them to the
window, which becomes whole in place. Importing them cost four times what PySide6 does, and on
a busy machine the window took seconds to appear (issue 25, item 9); this module imports only
what that first frame needs.

Before the QApplication exists, `ui/shell/platform_check.py` makes sure Qt can open a window here
(naming the packages to install when it cannot); records go to a rotating log file
(`logfile.py`). `--self-test` checks a build offscreen (`ui/shell/self_test.py`); `--version` prints
the version. `python -m vak_desktop` is this entry point too.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication

from vak_desktop.about import APP_NAME, DESKTOP_ID, version
from vak_desktop.crashes import CrashGuard, PreviousCrash, install_loop_handler
from vak_desktop.logfile import start_logging
from vak_desktop.runtime.settings import settings_path
from vak_desktop.ui.parts.theme import apply_theme
from vak_desktop.ui.settings.settings_controller import SettingsController
from vak_desktop.ui.shell.app_icon import app_icon
from vak_desktop.ui.shell.event_loop import new_event_loop
from vak_desktop.ui.shell.main_window import MainWindow
from vak_desktop.ui.shell.opening import first_frame
from vak_desktop.ui.shell.platform_check import display_problem
from vak_desktop.ui.shell.qt_messages import install_qt_message_handler
from vak_desktop.ui.shell.quit_signals import QuitOnSignals

RunWindow = Callable[..., Any]
log = logging.getLogger(__name__)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="vak-desktop",
        description="Chat with local language models through Ollama, a GGUF file or the "
        "providers in the settings.",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where the ledger lives (default: $VAK_DATA_DIR, else the per-user data directory)",
    )
    parser.add_argument(
        "--host",
        default=None,
        help="the Ollama server (default: $OLLAMA_HOST, else http://127.0.0.1:11434)",
    )
    parser.add_argument("--version", action="version", version=f"vak-desktop {version()}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this install offscreen (resources, engine, window), print one JSON line, "
        "exit 0 or 1",
    )
    parser.add_argument(
        "--self-test-model",
        type=Path,
        default=None,
        metavar="GGUF",
        help="with --self-test: also serve this GGUF file with the embedded engine, get one answer",
    )
    return parser.parse_args(argv)


async def run_window(
    app: QApplication,
    args: argparse.Namespace,
    settings: SettingsController | None = None,
    *,
    on_shown: Callable[[MainWindow], None] | None = None,
    previous_crash: PreviousCrash | None = None,
) -> None:
    """Show the window, then open the ledger, the provider and the rest behind it; return once
    the last window has closed (or SIGINT/SIGTERM closed it). `on_shown` sees the window once
    its services are attached and the last chat reopened (--self-test);
    `previous_crash` is said once the window is up, with a way to open the log."""
    loop = asyncio.get_running_loop()
    install_loop_handler(loop)  # a task that failed unseen reaches the log with its traceback
    closed: asyncio.Future[None] = loop.create_future()

    def quit_when_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    def quit_on_signal() -> None:
        app.closeAllWindows()  # dialogs too; the main window's close is the normal way out
        quit_when_closed()  # also when the signal came before the window was shown

    app.lastWindowClosed.connect(quit_when_closed)
    signals = QuitOnSignals(quit_on_signal)
    try:
        await _open_window(app, args, settings, closed, on_shown, previous_crash)
    finally:
        signals.close()
        app.lastWindowClosed.disconnect(quit_when_closed)


async def _open_window(
    app: QApplication,
    args: argparse.Namespace,
    settings: SettingsController | None,
    closed: asyncio.Future[None],
    on_shown: Callable[[MainWindow], None] | None,
    previous_crash: PreviousCrash | None = None,
) -> None:
    """Show the window's first frame, then open its services (`ui/shell/wiring.py`, imported
    only now) and serve until `closed`."""
    settings = settings or SettingsController(
        settings_path(args.data_dir), host_override=args.host or None
    )
    window = MainWindow()  # the shell, every control disabled, "Opening…"
    window.show()
    await first_frame(window)
    log.info("window shown")  # bench/ui_start.py and bench/bundle_start.py wait for it
    from vak_desktop.ui.shell.wiring import serve_window  # the engine, providers, ledger …

    await serve_window(window, args, settings, closed, on_shown, previous_crash)


def run_self_test(
    app: QApplication, run_window: RunWindow, log_file: Path | None, model: Path | None = None
) -> int:
    """`--self-test` (`ui/shell/self_test.py`, imported only for it)."""
    from vak_desktop.ui.shell import self_test

    return self_test.run_self_test(app, run_window, log_file, model)


def main(argv: Sequence[str] | None = None) -> int:
    """The `vak-desktop` entry point."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif problem := display_problem():
        print(problem, file=sys.stderr)
        return 1
    log_file = start_logging()
    crashes = CrashGuard.install()  # uncaught exceptions and hard crashes reach the log dir
    install_qt_message_handler()
    log.info("vak-desktop %s starting", version())
    code = _run(args, log_file, crashes.previous)  # an exception leaves the mark: reported
    crashes.close()  # a clean exit: the next start reports nothing
    return code


def _run(args: argparse.Namespace, log_file: Path | None, previous: PreviousCrash | None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setApplicationVersion(version())
    app.setDesktopFileName(DESKTOP_ID)  # Wayland/X11 match the window to the desktop entry
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    if args.self_test:
        return run_self_test(app, run_window, log_file, args.self_test_model)
    settings = SettingsController(settings_path(args.data_dir), host_override=args.host or None)
    apply_theme(app, settings.settings.theme)
    with asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner:
        runner.run(run_window(app, args, settings, previous_crash=previous))
    return 0


if __name__ == "__main__":
    sys.exit(main())
