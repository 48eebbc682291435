"""What can go wrong talking to a model provider, as a small tree callers can catch narrowly.

    ProviderError
     ├── Unreachable        the server could not be reached (refused, DNS, timeout)
     ├── ModelNotFound      the server does not have the model asked for
     ├── ContextOverflow    the request is longer than the model's window (requested, limit)
     ├── RateLimited        the provider asked us to slow down (retry_after seconds, if given)
     ├── ServerError        the server failed while serving the request (5xx, mid-stream error)
     ├── KeyRefused         the provider refused our API key (401/403); says where to set it
     └── BadResponse        the server answered something we cannot read; says what and where

Every message names the thing that went wrong (the host, the model, the line) so that the CLI
and the window can show it to the user as it is.
"""

from __future__ import annotations

from vak_desktop.redaction import redact


class ProviderError(Exception):
    """Base of every provider failure. Its message is redacted: what a server answered may
    quote a secret back (`vak_desktop.redaction`)."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(redact(message), *args)


class Unreachable(ProviderError):
    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"cannot reach {host}: {reason}")
        self.host = host
        self.reason = reason


class ModelNotFound(ProviderError):
    def __init__(self, model: str, detail: str = "") -> None:
        message = f"model {model!r} is not available on this server"
        super().__init__(f"{message} ({detail})" if detail else message)
        self.model = model


class ContextOverflow(ProviderError):
    def __init__(self, requested: int | None, limit: int | None, detail: str = "") -> None:
        sizes = f"{requested if requested is not None else '?'} tokens requested, "
        sizes += f"limit {limit if limit is not None else '?'}"
        message = f"request is longer than the model's context window ({sizes})"
        super().__init__(f"{message}: {detail}" if detail else message)
        self.requested = requested
        self.limit = limit


class RateLimited(ProviderError):
    def __init__(self, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"rate limited: {detail}")
        self.retry_after = retry_after

    def __str__(self) -> str:
        """With how long the server asked to wait: a Retry-After past the retry policy's
        limit is not waited for, and the user is told so (it failed "at once", issue 24)."""
        if self.retry_after is None or self.retry_after < 1:
            return super().__str__()
        return f"{super().__str__()} (the server asks to wait {wait_words(self.retry_after)})"


def wait_words(seconds: float) -> str:
    """A wait as a person says it: 45 s, 1.5 min, 1 h, 2 d."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= 1.5 * size or (seconds >= size and seconds % size == 0):
            value = seconds / size
            shown = f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:.0f}"
            return f"{shown} {unit}"
    return f"{seconds:.0f} s"


class ServerError(ProviderError):
    def __init__(self, detail: str, status: int | None = None) -> None:
        where = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"the server failed{where}: {detail}")
        self.status = status


class BadResponse(ProviderError):
    def __init__(self, detail: str, line: int | None = None, raw: bytes = b"") -> None:
        where = f" (line {line})" if line is not None else ""
        super().__init__(f"unreadable response{where}: {detail}")
        self.line = line
        self.raw = raw


class KeyRefused(ProviderError):
    """The provider refused the API key (HTTP 401/403). The message names the provider entry
    whose key was refused and where to set it; it never contains the key."""

    def __init__(self, provider: str, host: str, status: int, detail: str, has_key: bool) -> None:
        if has_key:
            what = f"the API key for provider {provider!r} was refused by {host}"
        else:
            what = f"{host} wants an API key and none is stored for provider {provider!r}"
        super().__init__(
            f"{what} (HTTP {status}): {detail}; set the key for {provider!r} in Settings → "
            "Providers (it is kept in the system keyring, never in the settings file)"
        )
        self.provider = provider
        self.status = status
