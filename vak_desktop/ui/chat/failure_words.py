"""How a failed turn's error reads in the chat: the user's words first, the transport's after.

The ledger keeps the provider's own message (`connection lost (peer closed connection without
sending complete message body (incomplete chunked read))`); the chat says what happened and
what to do, and keeps the raw message as the tooltip. One place, so a turn shown live and the
same turn read back from the ledger say the same thing.
"""

from __future__ import annotations

# BadResponse from providers/http_common.transport_error: the server had answered, then the
# stream broke — the server stopped, restarted or crashed in the middle of the answer.
CONNECTION_LOST = "connection lost ("

SERVER_DIED = (
    "The model server stopped answering in the middle of the answer (it was stopped, "
    "restarted or crashed). The text so far is kept; start the server again and press "
    "Regenerate."
)


def plain_failure(error: str) -> str:
    """The sentence the chat shows for a failed turn's `error` (itself when it reads well)."""
    if CONNECTION_LOST in error:
        return SERVER_DIED
    return error
