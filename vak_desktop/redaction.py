"""Redaction: every secret the process holds, kept out of the ledger, the logs and error messages.

One mechanism, applied at the sinks rather than at each place text is produced: a provider
adapter given an API key registers it here (`register_secret`), and then
- `Ledger.append` redacts an entry's canonical text before it is hashed and stored,
- `ProviderError` redacts its message (what the turn records and the terminal prints),
- a log-record factory installed with the first secret redacts every record's message,
so a server that echoes the key in a line that is not JSON, a tool result quoting it, or an
exception's text all come out as `[redacted: <name> API key]`.

Top-level (like `shipped.py`) so the ledger and the providers, which may not import each other,
share it. Secrets shorter than 8 characters are not registered: replacing them would mangle
ordinary text.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

MIN_SECRET = 8
_secrets: dict[str, str] = {}  # the secret -> what stands in for it
_lock = threading.Lock()
_factory_installed = False


def register_secret(value: str | None, name: str) -> None:
    """Redact `value` from now on wherever text leaves the process's hands."""
    if not value or len(value.strip()) < MIN_SECRET:
        return
    with _lock:
        _secrets[value.strip()] = f"[redacted: {name}]"
        _install_log_factory()


def redact(text: str) -> str:
    """`text` with every registered secret replaced by its stand-in."""
    if not _secrets:
        return text
    for value, stand_in in list(_secrets.items()):
        if value in text:
            text = text.replace(value, stand_in)
    return text


def _install_log_factory() -> None:
    global _factory_installed
    if _factory_installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    logging.setLogRecordFactory(factory)
    _factory_installed = True
