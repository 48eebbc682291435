"""Redaction: every secret the process holds, kept out of the ledger, the logs and error messages.

One mechanism, applied at the sinks rather than at each place text is produced: a provider
adapter given an API key registers it here (`register_secret`), and then
- `Ledger.append` redacts an entry's canonical text before it is hashed and stored, and
  `Ledger.checkpoint` each piece of a stream journalled while it streams (cut by
  `redactable_prefix`, so that no secret is split across two pieces),
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


def redactable_prefix(text: str) -> int:
    """How much of `text` (a stream's text so far) can be redacted and written now: all but a
    tail that may be the start of a secret still arriving, and never a cut through a secret.

    A stream is journalled in pieces, each redacted on its own (`runtime/turn/step.py`); a
    secret split across two pieces would get through both. Cut here, every piece holds each
    secret whole or not at all. What is held back is at most a secret's length less one, and
    only when the text ends the way a secret begins."""
    with _lock:
        values = list(_secrets)
    cut = len(text)
    for value in values:  # a tail that is a secret's beginning waits for what follows
        for k in range(min(len(value) - 1, len(text)), 0, -1):
            if text.endswith(value[:k]):
                cut = min(cut, len(text) - k)
                break
    moved = True
    while moved:  # a whole secret across the cut moves the cut to its start
        moved = False
        for value in values:
            start = text.find(value, max(0, cut - len(value) + 1), cut + len(value) - 1)
            if start != -1 and start < cut:
                cut, moved = start, True
    return cut


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
