"""The retry policy's schedule and the parts of a refusal that must never reach the user."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx

from vak_desktop.providers import (
    BadResponse,
    ContextOverflow,
    KeyRefused,
    ProviderError,
    RateLimited,
    RetryPolicy,
    ServerError,
)
from vak_desktop.providers.http_common import redact, retry_after, retry_after_of


def test_backoff_doubles_with_jitter_and_stops_at_the_cap() -> None:
    low = RetryPolicy(attempts=8, base_delay=1.0, max_delay=5.0, jitter=lambda: 0.0)
    high = RetryPolicy(attempts=8, base_delay=1.0, max_delay=5.0, jitter=lambda: 0.999)
    failure = ServerError("boom", 502)
    assert [low.delay(n, failure) for n in range(4)] == [0.5, 1.0, 2.0, 2.5]
    delays = [high.delay(n, failure) for n in range(4)]
    assert all(d is not None and d < c for d, c in zip(delays, [1.0, 2.0, 4.0, 5.0], strict=True))
    assert low.delay(7, failure) is None  # the eighth try was the last


def test_only_rate_limits_and_server_failures_are_retried() -> None:
    policy = RetryPolicy(jitter=lambda: 0.0)
    assert policy.delay(0, RateLimited("slow down", 4.0)) == 4.0
    assert policy.delay(0, ServerError("overloaded")) == 0.5  # an error event in the stream
    for final in (
        ContextOverflow(9000, 8192),
        KeyRefused("openai", "https://api.openai.com", 401, "no", True),
        BadResponse("not JSON"),
        ServerError("bad gateway?", 400),
        ProviderError("refused"),
    ):
        assert policy.delay(0, final) is None


def test_retry_after_in_every_form() -> None:
    assert retry_after("7") == 7.0
    assert retry_after("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    waited = retry_after(later)
    assert waited is not None and 25 < waited <= 30
    assert retry_after(format_datetime(datetime(2000, 1, 1, tzinfo=UTC), usegmt=True)) == 0.0
    assert retry_after_of(httpx.Headers({"retry-after-ms": "250", "retry-after": "1"})) == 0.25


def test_keys_are_taken_out_of_what_servers_echo() -> None:
    key = "sk-proj-abcdefghijklmnop"
    assert "abcdefgh" not in redact(f"Incorrect API key provided: {key}.", key)
    assert redact("Incorrect API key provided: sk-pr***mnop.", None) == (
        "Incorrect API key provided: [redacted]"
    )
    assert redact("an odd-looking key-value pair", "custom-secret-1") == (
        "an odd-looking key-value pair"
    )
    assert redact("uses sk-learn and sk-ant-api03-xyz", None) == "uses sk-learn and [redacted]"
    assert redact("the custom-secret-1 key", "custom-secret-1") == "the [redacted] key"
