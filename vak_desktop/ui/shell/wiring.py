"""The services behind a shown window: the ledger, the provider, the tools, the chat service,
the other providers and the live settings — opened, attached to the window, run until it
closes, and closed again in order.

`app.py` imports this module only once the window's first frame is on screen: it pulls in the
runtime, the providers (httpx), the ledger (sqlite-utils), the MCP client and the rest, which
cost several times what PySide6 does. Until `MainWindow.attach` returns, the window shows its
disabled shell (`ui/shell/opening.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Callable

from vak_desktop.crashes import PreviousCrash
from vak_desktop.ledger import LEDGER_FILENAME, Ledger, data_dir
from vak_desktop.providers import default_host, http_client, open_provider
from vak_desktop.runtime import default_tools
from vak_desktop.runtime.providers.catalogue import models_directory
from vak_desktop.runtime.sessions.system_prompts import PresetStore
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.models.providers_controller import ProvidersController
from vak_desktop.ui.parts.highlight import preload as preload_lexers
from vak_desktop.ui.settings.settings_controller import SettingsController
from vak_desktop.ui.settings.update_check import attach_update_check
from vak_desktop.ui.shell.collector import UiThreadCollector
from vak_desktop.ui.shell.crash_notice import crash_notice
from vak_desktop.ui.shell.live_settings import LiveSettings
from vak_desktop.ui.shell.main_window import MainWindow

PROVIDER = "ollama"
log = logging.getLogger("vak_desktop.app")  # the app's records, under the name it always had


async def serve_window(
    window: MainWindow,
    args: argparse.Namespace,
    settings: SettingsController,
    closed: asyncio.Future[None],
    on_shown: Callable[[MainWindow], None] | None = None,
    previous_crash: PreviousCrash | None = None,
) -> None:
    """Open everything the shown `window` needs, attach it, and serve until `closed`."""
    ledger = Ledger.open(data_dir(args.data_dir) / LEDGER_FILENAME)
    try:
        async with http_client() as client:
            # --host, then OLLAMA_HOST, then the settings file
            host = args.host or os.environ.get("OLLAMA_HOST") or settings.settings.ollama_host
            provider = open_provider(PROVIDER, client, host or default_host(PROVIDER))
            tools = default_tools(
                settings.settings, ledger, data_directory=data_dir(args.data_dir)
            )  # the workspace folders, MCP servers and skills of the settings, the card tools
            service = ChatService(
                ledger,
                provider,
                tools,
                keep_alive=settings.keep_alive_for,  # per model, else the default; every turn
                background_probes=settings.settings.probe_idle,
                probe_hosted=settings.settings.probe_hosted,
                titles=True,  # a side call names a new chat after its first answer
            )
            service.use_presets(PresetStore.open(data_dir(args.data_dir)))
            # the settings' other providers (keys from the keyring) and the embedded engine
            providers = ProvidersController(service, settings, client)
            window.attach(service, ledger, settings=settings)
            window.tools.downloads.directory = models_directory(args.data_dir)
            providers.attach(window)  # Tools → Run a GGUF file…, and downloaded models
            live = LiveSettings(  # host, folders and MCP servers apply without a restart
                service,
                window.tools.models,
                settings,
                client,
                data_directory=data_dir(args.data_dir),
                host_override=args.host or os.environ.get("OLLAMA_HOST", ""),
            )
            window.reopen_last_chat()
            log.info("window ready")
            if on_shown is not None:
                on_shown(window)
            if previous_crash is not None:
                notice = crash_notice(previous_crash, window)  # noqa: F841 (kept while open)
                log.info("said: %s", previous_crash.message)
            collector = UiThreadCollector(window)  # Qt objects are freed on this thread only
            updates = attach_update_check(window, settings)
            updates.start()  # only if the user turned it on; in the background
            service.refresh_models()
            preload_lexers()  # the code blocks' lexers, compiled off the UI thread
            try:
                await closed
            finally:
                await updates.aclose()
                await live.aclose()
                await window.tools.aclose()
                await providers.aclose()
                await service.aclose()  # stops the embedded engine too
                collector.stop(quitting=True)  # collection stays off until the exit
                window.deleteLater()
    finally:
        ledger.close()
