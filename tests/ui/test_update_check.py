"""The window's update check: off by default (the feed is never asked), and when turned on it
says "Vak X is available" as a link to the release, after the window is up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.doubles.file_server import FileServer
from tests.ui.harness import SCREENSHOTS, until
from tests.ui.test_providers import closed_port, open_window
from vak_desktop.runtime.settings import Settings
from vak_desktop.ui.settings.update_check import attach_update_check

FEED = {"version": "9.0.0", "url": "https://example.org/vak/9.0.0", "notes": "A new release."}


async def test_the_check_is_off_unless_turned_on_and_then_links_the_new_version(
    qtbot: Any, tmp_path: Path, memory_keyring: Any
) -> None:
    with FileServer(json.dumps(FEED).encode(), name="latest.json") as feed:
        async with open_window(qtbot, tmp_path, closed_port(), Settings()) as app:
            off = attach_update_check(app.window, app.settings, current="0.1.0")
            assert off.start() is None  # not turned on: nothing is asked
            app.settings.save(app.settings.settings.replace(update_feed=feed.url))
            assert off.start() is None  # a feed alone is not consent
            assert feed.ranges == []

            app.settings.save(app.settings.settings.replace(update_check=True))
            check = attach_update_check(app.window, app.settings, current="0.1.0")
            task = check.start()
            assert task is not None and not task.done()  # in the background
            await until(lambda: check.release is not None, what="the feed's answer")
            assert check.link is not None and check.link.isVisible()
            assert "Vak 9.0.0 is available" in check.link.text()
            assert "href='https://example.org/vak/9.0.0'" in check.link.text()
            assert "A new release: https://example.org" in app.window.notice_line.text.text()
            assert app.window.grab().save(str(SCREENSHOTS / "update_available.png"))
            await check.aclose()
            await off.aclose()


async def test_the_settings_dialog_turns_the_check_on_only_with_a_feed(
    qtbot: Any, tmp_path: Path, memory_keyring: Any
) -> None:
    async with open_window(qtbot, tmp_path, closed_port(), Settings()) as app:
        dialog = app.window.tools.open_settings()
        assert not dialog.update_check.isChecked() and dialog.update_feed.text() == ""
        dialog.update_check.setChecked(True)
        assert dialog.collect() is None and "name the release feed" in dialog.update_error.text()
        dialog.update_feed.setText("ftp://example.org/latest.json")
        assert dialog.collect() is None and "not an http" in dialog.update_error.text()
        dialog.update_feed.setText("https://example.org/latest.json")
        collected = dialog.collect()
        assert collected is not None
        chosen, _keys = collected
        assert chosen.update_check and chosen.update_feed == "https://example.org/latest.json"
        dialog.close()
