"""What every HTTP provider adapter shares: timeouts, reading NDJSON/SSE lines without losing a
byte, number fields that may be missing, and one wording for "the server is not there".

Each adapter keeps its own wire module for what is particular to its protocol; this module holds
only what would otherwise be written twice.
"""

from __future__ import annotations

import email.utils
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from vak_desktop.providers.base import StreamNotice
from vak_desktop.providers.deadlines import DEADLINES, Deadlines, Silent, Stalled
from vak_desktop.providers.errors import (
    BadResponse,
    ProviderError,
    RateLimited,
    ServerError,
    Unreachable,
)
from vak_desktop.redaction import redact as redact_held

# Requests that are not streamed (model lists, details): connecting to a local server is
# instant or it is not running. A streamed chat reads under `deadlines.py` instead: a
# first-byte deadline for a cold model load and a much shorter stall deadline mid-answer.
TIMEOUT = httpx.Timeout(300.0, connect=5.0)
DNS_FAILURE = re.compile(r"name or service|nodename|getaddrinfo|no address|name resolution", re.I)


def decode_line(raw: bytes, number: int) -> tuple[str, StreamNotice | None]:
    """A line as text; invalid UTF-8 is replaced with U+FFFD and announced with the raw bytes."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        message = (
            f"line {number}: invalid UTF-8 at byte {exc.start} of the line "
            "was replaced with U+FFFD; the raw line is kept"
        )
        return raw.decode("utf-8", errors="replace"), StreamNotice(message, raw)


def parse_object(text: str, number: int, raw: bytes) -> dict[str, Any]:
    """A line that must be one JSON object, or a BadResponse naming the line."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise BadResponse(
            f"line {number} is not JSON ({exc}): {text[:120]!r}", number, raw
        ) from None
    if not isinstance(value, dict):
        raise BadResponse(f"line {number} is not a JSON object", number, raw)
    return value


def retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` value: a number of seconds or an HTTP date."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def retry_after_of(headers: httpx.Headers) -> float | None:
    """The pause a response asks for: `retry-after-ms` (OpenAI) or `retry-after`."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return retry_after(headers.get("retry-after"))


# What a provider may echo of a key it refused (OpenAI: "Incorrect API key provided: sk-ab***yz"):
# a key prefix, then a run holding a digit or a mask star (so "sk-learn" is left alone).
_KEYLIKE = re.compile(r"\b(?:sk|rk|pk)-(?=[\w.\-]*[0-9*])[\w*.\-]{4,}")


def redact(text: str, secret: str | None) -> str:
    """`text` without `secret`, any secret the process holds (`vak_desktop.redaction`) and
    anything shaped like an API key (what a server says about a key it refused)."""
    if secret:
        text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", redact_held(text))


def opt_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def int_field(mapping: Mapping[str, Any], key: str) -> int:
    return opt_int(mapping.get(key)) or 0


def status_error(response: httpx.Response, text: str, who: str) -> ProviderError:
    """The error for an HTTP status no adapter-specific rule claimed: slow down (429, 503),
    the server failed (5xx), or it refused our request (other 4xx) in its own words."""
    status = response.status_code
    if status in (429, 503):
        return RateLimited(text, retry_after_of(response.headers))
    if status >= 500:
        return ServerError(text, status)
    # A 4xx about our request: the server read us fine, so not a BadResponse; the base class
    # carries its text.
    return ProviderError(f"{who} refused the request (HTTP {status}): {text}")


def not_a_stream(response: httpx.Response, expected: str) -> ProviderError | None:
    """The error for an answer that is not the stream asked for, though its status is not an
    error: a redirect (httpx does not follow one: a POST would be replayed elsewhere) or a web
    page. Both used to end as "stream ended before `data: [DONE]`" (issue 24)."""
    status = response.status_code
    if 300 <= status < 400:
        where = response.headers.get("location", "")
        to = f" to {where}" if where else ""
        return ProviderError(
            f"the server redirected the request (HTTP {status}{to}); Vak does not follow "
            "redirects: set the provider's host to the address it should be"
        )
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml"):
        return ProviderError(
            f"the server answered with a web page ({kind}, HTTP {status}), not {expected}: is "
            "the host the API's address, not a website or a login page in front of it?"
        )
    return None


def transport_error(
    exc: httpx.TransportError,
    *,
    host: str,
    responded: bool,
    line: int,
    server: str,
    start_hint: str,
    stream_end: str,
    deadlines: Deadlines = DEADLINES,
) -> ProviderError:
    """A transport failure as the user should read it. `responded`: the server had answered
    and the stream then broke (a BadResponse), else the server was never reached."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, Stalled):  # the deadlines of `deadlines.py`, the same for every adapter
        return BadResponse(
            f"{server} stopped sending mid-answer: nothing arrived for {exc.seconds:g} s "
            "(the model stalled or the server hung)",
            line or None,
        )
    if isinstance(exc, Silent):
        return Unreachable(
            host,
            f"{server} accepted the connection but sent nothing for {exc.seconds:g} s "
            "(the model did not load in that time, or the server hangs)",
        )
    if responded and isinstance(exc, httpx.ReadTimeout):  # not retried: it may recur
        return BadResponse(
            f"{server} stopped sending mid-answer: nothing arrived for {deadlines.stall:g} s "
            "(the model stalled or the server hung)",
            line or None,
        )
    if responded:
        return BadResponse(
            f"stream ended before {stream_end}: connection lost ({detail})", line or None
        )
    if isinstance(exc, httpx.ConnectTimeout):
        reason = (
            f"{server} is not running at this address, or a firewall drops the connection "
            f"(no answer within {deadlines.connect:g} s)"
        )
    elif isinstance(exc, httpx.ConnectError) and DNS_FAILURE.search(detail):
        reason = f"the host name does not resolve, so {server} is not running there ({detail})"
    elif isinstance(exc, httpx.ConnectError):
        reason = (
            f"{server} is not running at this address ({detail}); {start_hint} "
            "or check the host in settings"
        )
    elif isinstance(exc, httpx.TimeoutException):
        reason = f"{server} accepted the connection but sent nothing for {deadlines.first_byte:g} s"
    else:
        reason = f"the connection to {server} failed ({detail})"
    return Unreachable(host, reason)


async def get_json(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    *,
    on_transport: Callable[[httpx.TransportError], ProviderError],
    on_status: Callable[[httpx.Response], ProviderError],
) -> Any:
    """GET `url` as JSON: a transport failure, a status of 400 or more, or a body that is not
    JSON each become the provider's own error."""
    try:
        response = await client.get(url, headers=dict(headers), timeout=TIMEOUT)
    except httpx.TransportError as exc:
        raise on_transport(exc) from exc
    if response.status_code >= 400:
        raise on_status(response)
    try:
        return response.json()
    except ValueError:
        raise BadResponse(f"{url} did not answer JSON", raw=response.content) from None
