"""The update check against a real loopback feed: a newer version is named with its link, the
same or an older one is not, a broken feed is one line; versions order as releases; the check
is off in fresh settings."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.doubles.file_server import FileServer
from vak_desktop.runtime.settings import Settings, load_settings, save_settings
from vak_desktop.runtime.updates import (
    Release,
    UpdateFeedError,
    check_for_update,
    version_key,
)

FEED = {
    "version": "0.3.0",
    "url": "https://example.org/vak/releases/0.3.0",
    "notes": "Models download from the app itself.",
    "published": "2026-12-01",
}


def _feed(data: object) -> FileServer:
    return FileServer(json.dumps(data).encode(), name="latest.json")


async def test_a_newer_release_in_the_feed_is_named_with_its_link() -> None:
    with _feed(FEED) as server:
        async with httpx.AsyncClient() as client:
            release = await check_for_update(client, server.url, current="0.2.1")
    assert release == Release("0.3.0", FEED["url"], FEED["notes"], "2026-12-01")
    assert release.message == "Vak 0.3.0 is available"


@pytest.mark.parametrize("current", ["0.3.0", "0.3", "0.4.0", "1.0.0rc1"])
async def test_the_same_or_an_older_release_is_not_news(current: str) -> None:
    with _feed(FEED) as server:
        async with httpx.AsyncClient() as client:
            assert await check_for_update(client, server.url, current=current) is None


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([1, 2], "not a JSON object"),
        ({"url": "https://x"}, 'no "version"'),
        ({"version": "soon", "url": "https://x"}, "is not a version number"),
        ({"version": "1.0"}, 'no http\\(s\\) "url"'),
        ({"version": "1.0", "url": "javascript:alert(1)"}, 'no http\\(s\\) "url"'),
    ],
)
async def test_a_feed_that_is_not_the_documented_shape_is_one_line(
    data: object, words: str
) -> None:
    with _feed(data) as server:
        async with httpx.AsyncClient() as client:
            with pytest.raises(UpdateFeedError, match=words) as caught:
                await check_for_update(client, server.url, current="0.1.0")
    assert "\n" not in str(caught.value)


async def test_a_feed_that_is_not_there_is_one_line() -> None:
    with _feed(FEED) as server:
        async with httpx.AsyncClient() as client:
            with pytest.raises(UpdateFeedError, match="answered HTTP 404"):
                await check_for_update(client, server.url + ".old", current="0.1.0")


def test_versions_order_as_releases() -> None:
    ordered = ["0.1", "0.2.0a1", "0.2.0b2", "0.2.0rc1", "0.2.0", "0.2.1", "v0.10.0", "1.0"]
    assert sorted(ordered, key=version_key) == ordered
    assert version_key("1.0") == version_key("1.0.0")


def test_the_check_is_off_in_fresh_settings_and_round_trips(tmp_path: Path) -> None:
    assert Settings().update_check is False
    path = save_settings(Settings(), tmp_path / "settings.toml")
    assert "[updates]" not in path.read_text(encoding="utf-8")  # off, so nothing is written
    chosen = Settings(update_check=True, update_feed="https://example.org/latest.json")
    assert load_settings(save_settings(chosen, path)) == chosen
