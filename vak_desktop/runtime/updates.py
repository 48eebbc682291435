"""The update check: is a newer Vak released? Asked only when the user turned it on.

Why it exists: a user who installed a bundle hears of a fix only if something tells them. The
check is opt-in (`[updates] check = true`, off by default: a desktop app that phones home
unasked is not one people trust) and asks one URL the user can see and change
(`[updates] feed`). It runs in the background after the window is up and never delays it; a
feed that cannot be reached or read is logged and otherwise ignored.

The feed is one JSON object (served as a static file anywhere — a release host's "latest"
asset, a web page's folder):

    {
      "version": "0.3.0",                              required: the newest release
      "url": "https://example.org/vak/releases/0.3.0",  required: where to get it (http/https)
      "notes": "Models download from the app itself.",  optional: one line said beside it
      "published": "2026-12-01"                         optional, shown as given
    }

Versions compare as PEP 440 releases with an optional a/b/rc pre-release (`0.3.0rc1` <
`0.3.0` < `0.3.1`); a version this cannot read is an error, never "newer".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from vak_desktop.about import version

CHECK_TIMEOUT = httpx.Timeout(10.0, connect=5.0)
_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-.]?(a|b|rc)(\d*))?(?:[-.+].*)?", re.IGNORECASE)
_PRE = {"a": 0, "b": 1, "rc": 2}


class UpdateFeedError(RuntimeError):
    """The feed could not be reached or is not the documented JSON; the message says which."""


@dataclass(frozen=True)
class Release:
    """What the feed says is the newest release."""

    version: str
    url: str
    notes: str = ""
    published: str = ""

    @property
    def message(self) -> str:
        """ "Vak 0.3.0 is available" — what the window says."""
        return f"Vak {self.version} is available"


def version_key(text: str) -> tuple[tuple[int, ...], int, int]:
    """A sortable key for `text` ("0.3.0", "v1.2", "0.3.0rc1"); ValueError if unreadable."""
    found = _VERSION.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not a version number")
    numbers = tuple(int(part) for part in found.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]  # 1.0 == 1.0.0
    pre = found.group(2)
    stage = _PRE[pre.lower()] if pre else 3  # a release sorts after its pre-releases
    return numbers, stage, int(found.group(3) or 0)


def parse_feed(data: object) -> Release:
    """The release a feed's decoded JSON names; UpdateFeedError saying what is wrong."""
    if not isinstance(data, dict):
        raise UpdateFeedError("the update feed is not a JSON object")
    found, url = data.get("version"), data.get("url")
    if not isinstance(found, str) or not found.strip():
        raise UpdateFeedError('the update feed has no "version"')
    try:
        version_key(found)
    except ValueError as exc:
        raise UpdateFeedError(f"the update feed's version: {exc}") from exc
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise UpdateFeedError('the update feed has no http(s) "url"')
    notes, published = data.get("notes", ""), data.get("published", "")
    return Release(
        found.strip(),
        url,
        notes.strip() if isinstance(notes, str) else "",
        published if isinstance(published, str) else "",
    )


async def latest_release(client: httpx.AsyncClient, feed: str) -> Release:
    """Ask `feed` for the newest release."""
    try:
        response = await client.get(feed, timeout=CHECK_TIMEOUT, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise UpdateFeedError(f"the update feed {feed} did not answer: {exc}") from exc
    if response.status_code != 200:
        raise UpdateFeedError(f"the update feed {feed} answered HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError as exc:
        raise UpdateFeedError(f"the update feed {feed} is not JSON") from exc
    return parse_feed(data)


async def check_for_update(
    client: httpx.AsyncClient, feed: str, current: str | None = None
) -> Release | None:
    """The feed's release when it is newer than `current` (this build's version), else None."""
    release = await latest_release(client, feed)
    mine = current or version()
    try:
        newer = version_key(release.version) > version_key(mine)
    except ValueError:  # a development build's version: never nag it
        return None
    return release if newer else None
