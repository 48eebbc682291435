"""The settings dialog: a round trip through the file, API keys only in the keyring, inline
validation that loses nothing, and the theme applied live (with readable contrast)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtWidgets import QApplication

from tests.doubles.keyring import MemoryKeyring
from tests.shots import shots_dir
from vak_desktop.runtime.settings import HostedProvider, McpServer, Settings, load_settings
from vak_desktop.ui.parts import theme
from vak_desktop.ui.settings.settings_dialog import SettingsController, SettingsDialog

SHOTS = shots_dir("shots_uimodels")
SECRET = "sk-test-7f3a9c1e5b"


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    """Free earlier tests' Qt garbage here, on the UI thread (see test_model_manager.py)."""
    gc.collect()


@pytest.fixture
def dialog(qtbot: Any, tmp_path: Path) -> Iterator[SettingsDialog]:
    dialog = SettingsDialog(SettingsController(tmp_path / "settings.toml"))
    dialog.show()  # deleted below on this thread, not by qtbot
    yield dialog
    shiboken6.delete(dialog)


def test_every_field_round_trips_through_the_dialog_and_the_file(
    qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    first = SettingsDialog(SettingsController(tmp_path / "settings.toml"))
    first.host.setText("http://10.0.0.5:11434")
    first.keep_alive.setText("2h")
    first.probe_idle.setChecked(False)
    first.probe_hosted.setChecked(True)
    first.add_folder(str(folder))
    first.add_mcp_server("clock", "python -m mcp_server_time --local-timezone UTC", True)
    first.add_mcp_server("remote", "http://127.0.0.1:9000/mcp", False)
    first.add_provider("lan", "openai-compatible", "http://box:8080/v1")
    row = first.add_provider("claude", "anthropic", "")
    qtbot.keyClicks(first.api_key_field(row), SECRET)
    first.theme.setCurrentIndex(first.theme.findData("dark"))
    assert first.save(), "valid settings are saved"

    expected = Settings(
        ollama_host="http://10.0.0.5:11434",
        keep_alive="2h",
        probe_idle=False,
        probe_hosted=True,
        workspace=(str(folder),),
        mcp_servers=(
            McpServer(
                "clock", command=("python", "-m", "mcp_server_time", "--local-timezone", "UTC")
            ),
            McpServer("remote", url="http://127.0.0.1:9000/mcp", enabled=False),
        ),
        providers=(
            HostedProvider("lan", "openai-compatible", "http://box:8080/v1"),
            HostedProvider("claude", "anthropic"),
        ),
        theme="dark",
    )
    path = tmp_path / "settings.toml"
    assert load_settings(path) == expected
    assert theme.current_theme() == "dark" and theme.colors() is theme.DARK

    # the key is in the keyring, and nowhere in the file or left in the field
    assert memory_keyring.store == {("vak-desktop", "claude"): SECRET}
    assert SECRET not in path.read_text()
    assert first.api_key_field(1).text() == ""

    second = SettingsDialog(SettingsController(path))  # what the next start shows
    assert second.collect() == (expected, {})
    assert second.api_key_field(1).placeholderText() == "stored in keyring"
    second.providers.removeRow(1)  # removing the provider forgets its key
    assert second.save()
    assert memory_keyring.store == {}
    theme.apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]
    for made in (first, second):
        shiboken6.delete(made)


def test_invalid_fields_are_marked_inline_and_nothing_is_lost(
    dialog: SettingsDialog, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    dialog.host.setText("localhost 11434")
    dialog.keep_alive.setText("ten minutes")
    dialog.add_mcp_server("", "python -m x", True)
    row = dialog.add_provider("claude", "anthropic", "")
    dialog.api_key_field(row).setText(SECRET)
    assert not dialog.save()
    assert dialog.isVisible()
    assert dialog.host_error.isVisible() and "http://" in dialog.host_error.text()
    assert "not a duration" in dialog.keep_alive_error.text()
    assert "needs a name" in dialog.mcp_error.text()
    assert dialog.tabs.currentIndex() == 0
    assert not (tmp_path / "settings.toml").exists()
    assert memory_keyring.store == {}  # no key stored for settings that were not saved
    assert dialog.host.text() == "localhost 11434" and dialog.api_key_field(row).text() == SECRET

    dialog.host.setText("http://127.0.0.1:11434")
    dialog.keep_alive.setText("45m")
    dialog.add_folder(str(tmp_path / "missing"))
    assert not dialog.save()
    assert dialog.tabs.currentIndex() == 1 and "not a folder" in dialog.folder_error.text()
    dialog.folders.takeItem(0)
    assert not dialog.save()
    assert dialog.tabs.currentIndex() == 2
    dialog.mcp.removeRow(0)
    dialog.add_provider("claude", "openai", "")
    assert not dialog.save()
    assert "two providers are called 'claude'" in dialog.provider_error.text()
    dialog.providers.removeRow(1)
    assert dialog.save()
    assert memory_keyring.store == {("vak-desktop", "claude"): SECRET}
    assert load_settings(tmp_path / "settings.toml").keep_alive == "45m"


def test_an_unreadable_file_is_kept_when_the_dialog_saves(
    qtbot: Any, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[general]\ntheme = "purple"\n')
    dialog = SettingsDialog(SettingsController(path))
    dialog.show()
    assert dialog.file_error.isVisible() and "theme must be one of" in dialog.file_error.text()
    assert dialog.save()
    assert (tmp_path / "settings.toml.unreadable").read_text() == '[general]\ntheme = "purple"\n'
    assert load_settings(path) == Settings()
    shiboken6.delete(dialog)


def test_theme_applies_live_and_cancel_puts_it_back(dialog: SettingsDialog, qapp: Any) -> None:
    light_window = qapp.palette().window().color().name()
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    assert theme.current_theme() == "dark"
    assert qapp.palette().window().color().name() == theme.DARK.WINDOW != light_window
    assert theme.TEXT == theme.DARK.TEXT  # what the chat view paints with follows
    dialog.reject()
    assert theme.current_theme() == "light"
    assert qapp.palette().window().color().name() == light_window
    dialog.theme.setCurrentIndex(dialog.theme.findData("system"))
    assert theme.colors() is theme.resolve("system")
    theme.apply_theme(qapp, "light")


@pytest.mark.parametrize("palette", [theme.LIGHT, theme.DARK], ids=lambda p: p.name)
def test_text_colours_are_readable_on_every_surface(palette: theme.Palette) -> None:
    surfaces = ("WINDOW", "BASE", "CANVAS", "SIDEBAR", "ASSISTANT_BACKGROUND", "USER_BACKGROUND")
    for foreground in ("TEXT", "SUBTLE", "DANGER", "WARNING", "SUCCESS", "ACCENT_TEXT"):
        for surface in surfaces:
            ratio = theme.contrast_ratio(getattr(palette, foreground), getattr(palette, surface))
            assert ratio >= 4.5, (foreground, surface, ratio)
    assert theme.contrast_ratio(palette.DANGER, palette.DANGER_BACKGROUND) >= 4.5
    assert theme.contrast_ratio("#ffffff", palette.ACCENT) >= 4.5


def test_screenshots_light_and_dark(dialog: SettingsDialog, qapp: Any, tmp_path: Path) -> None:
    dialog.add_folder(str(tmp_path))
    dialog.add_mcp_server("clock", "python -m mcp_server_time", True)
    dialog.add_provider("claude", "anthropic", "")
    dialog.keep_alive.setText("ten minutes")
    dialog.collect()
    SHOTS.mkdir(exist_ok=True)
    for name in ("light", "dark"):
        theme.apply_theme(qapp, name)
        for index, tab in ((0, "general"), (3, "providers")):
            dialog.tabs.setCurrentIndex(index)
            assert dialog.grab().save(str(SHOTS / f"settings_{tab}_{name}.png"))
    theme.apply_theme(qapp, "light")


def test_every_control_has_an_accessible_name(dialog: SettingsDialog) -> None:
    from tests.ui.test_model_manager import unnamed_controls

    dialog.add_provider("claude", "anthropic", "")
    assert unnamed_controls(dialog) == []


def test_the_general_tab_shows_where_the_log_file_is(
    dialog: SettingsDialog, tmp_path: Path
) -> None:
    # conftest points VAK_LOG_DIR at tmp_path / "log"
    assert dialog.log_file.text() == str(tmp_path / "log" / "vak-desktop.log")


def test_without_a_keyring_the_dialog_says_so_and_saves_with_keys_from_the_environment(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring
    from keyring.backends import fail

    from vak_desktop.runtime.settings import HostedProvider, Settings, save_settings

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-only")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    try:
        path = tmp_path / "settings.toml"
        save_settings(
            Settings(
                providers=(
                    HostedProvider("claude", "anthropic"),
                    HostedProvider("gpt", "openai"),
                )
            ),
            path,
        )
        dialog = SettingsDialog(SettingsController(path))
        qtbot.addWidget(dialog)
        assert "No system keyring" in dialog.keyring_hint.text()
        claude, gpt = dialog.api_key_field(0), dialog.api_key_field(1)
        assert not claude.isEnabled() and "$ANTHROPIC_API_KEY (set)" in claude.placeholderText()
        assert "$OPENAI_API_KEY (not set)" in gpt.placeholderText()
        dialog.tabs.setCurrentIndex(3)
        dialog.show()
        dialog.grab().save(str(shots_dir("dsk") / "settings_no_keyring.png"))
        assert dialog.save()  # nothing to store: Save is not refused
        assert "sk-ant-env-only" not in path.read_text(encoding="utf-8")
    finally:
        keyring.set_keyring(previous)


def test_a_host_from_the_environment_is_shown_as_such_and_never_saved(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With OLLAMA_HOST set, the dialog shows that host, says where it comes from, and a save of
    an unrelated setting writes neither it nor the default host into the file (#25 item 6)."""
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:22434")
    path = tmp_path / "settings.toml"
    dialog = SettingsDialog(SettingsController(path))
    dialog.show()
    try:
        assert dialog.host.text() == "http://127.0.0.1:22434"
        assert dialog.host.isReadOnly()
        assert "From OLLAMA_HOST" in dialog.host_source.text()
        assert not dialog.host_source.isHidden()
        dialog.keep_alive.setText("2h")
        assert dialog.save()
    finally:
        shiboken6.delete(dialog)
    text = path.read_text(encoding="utf-8")
    assert "ollama_host" not in text and "11434" not in text and "22434" not in text
    assert 'keep_alive = "2h"' in text
    assert load_settings(path).ollama_host == Settings().ollama_host


def test_a_first_save_writes_only_what_the_user_changed(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    dialog = SettingsDialog(SettingsController(path, host_override=""))
    dialog.show()
    try:
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        assert dialog.save()
    finally:
        shiboken6.delete(dialog)
        theme.apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]
    text = path.read_text(encoding="utf-8")
    assert 'theme = "dark"' in text
    for untouched in ("ollama_host", "keep_alive", "idle", "hosted", "workspace"):
        assert untouched not in text, f"{untouched} was written though never changed"
