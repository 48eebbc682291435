"""Server-sent events as the WHATWG HTML standard defines them, read from raw bytes.

Why our own reader: the streams are POST responses (nothing here reconnects), the adapters need
each event's data as the bytes that arrived (so invalid UTF-8 is repaired and announced with the
raw bytes, `StreamNotice`), and the line a payload started on (errors name it). The rules kept:

- a line ends at CRLF, LF or CR (a CR at the end of one network chunk waits for the next, in
  case it is the first half of a CRLF); a leading UTF-8 BOM is dropped;
- a line starting with ":" is a comment (OpenRouter's `: OPENROUTER PROCESSING` keep-alives);
- `field: value` with one optional space after the colon; a line without a colon is a field
  with an empty value; unknown fields are ignored;
- every `data` line of one event is joined with LF; an empty line dispatches the event; an
  event with no data line is not dispatched;
- `event` names the event, `id` sets the last event id (ignored when it holds NUL), `retry`
  sets the reconnection time when it is all ASCII digits.

One deliberate difference: at the end of the body an event still being built is dispatched
rather than dropped, so a stream cut short still shows the adapter what arrived (it then
reports the missing end marker itself).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: its data as raw bytes (lines joined with LF), its type ("message"
    unless named), the last event id, and the line of the body its `event` or first `data`
    field was on."""

    data: bytes
    event: str = "message"
    id: str = ""
    line: int = 0


class EventStreamReader:
    """Feed it chunks of the body; it returns the events each chunk completes."""

    def __init__(self) -> None:
        self.retry_ms: int | None = None  # the server's reconnection time, if it sent one
        self.last_event_id = ""
        self.comments = 0  # comment lines seen (keep-alives)
        self._pending: list[bytes] = []  # the pieces of a line still arriving
        self._line = 0
        self._started = False
        self._data: list[bytes] = []
        self._event = ""
        self._first_line = 0

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by `chunk`.

        Linear in the body however it is cut: only `chunk` is scanned, for its line ends, each
        found once; a line still arriving waits as its pieces, joined once when it ends (a 10 MB
        line in 64 KB reads was copied and rescanned whole on every read)."""
        if not self._started:
            chunk = b"".join(self._pending) + chunk
            self._pending = []
            if len(chunk) < len(BOM) and BOM.startswith(chunk):
                self._pending = [chunk]  # too short to tell whether a BOM starts the stream
                return []
            self._started = True
            chunk = chunk.removeprefix(BOM)
        out: list[ServerSentEvent] = []
        start = 0
        if self._pending and self._pending[-1].endswith(b"\r"):  # the CR ended the line
            self._pending[-1] = self._pending[-1][:-1]
            self._line_ended(b"", out)
            start = 1 if chunk.startswith(b"\n") else 0  # ... or was half of a CRLF
        cr, lf = chunk.find(b"\r", start), chunk.find(b"\n", start)
        while cr >= 0 or lf >= 0:
            if cr >= 0 and (lf < 0 or cr < lf):
                if cr + 1 == len(chunk):
                    break  # a CR at the end: maybe half of a CRLF, decided by the next chunk
                end, after = cr, cr + 2 if chunk[cr + 1] == 0x0A else cr + 1
            else:
                end, after = lf, lf + 1
            self._line_ended(chunk[start:end], out)
            start = after
            if 0 <= cr < start:
                cr = chunk.find(b"\r", start)
            if 0 <= lf < start:
                lf = chunk.find(b"\n", start)
        if start < len(chunk):
            self._pending.append(chunk[start:])
        return out

    def _line_ended(self, tail: bytes, out: list[ServerSentEvent]) -> None:
        """The line whose last piece is `tail` (after any pieces still pending) ended."""
        if self._pending:
            tail = b"".join(self._pending) + tail
            self._pending = []
        event = self._line_done(tail)
        if event is not None:
            out.append(event)

    def close(self) -> list[ServerSentEvent]:
        """The body ended: the last line, and any event still being built (see the module)."""
        out: list[ServerSentEvent] = []
        rest, self._pending = b"".join(self._pending), []
        if not self._started:
            rest = rest.removeprefix(BOM)
        if rest:
            rest = rest.removesuffix(b"\r")
            event = self._line_done(rest)
            if event is not None:
                out.append(event)
        event = self._dispatch()
        if event is not None:
            out.append(event)
        return out

    def _line_done(self, line: bytes) -> ServerSentEvent | None:
        self._line += 1
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            self.comments += 1
            return None
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if not self._data and not self._event:
            self._first_line = self._line
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", errors="replace")
        elif name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", errors="replace")
        elif name == b"retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        data, event, line = self._data, self._event, self._first_line
        self._data, self._event = [], ""
        if not data:
            return None
        return ServerSentEvent(b"\n".join(data), event or "message", self.last_event_id, line)


async def server_sent_events(
    chunks: AsyncIterable[bytes], reader: EventStreamReader | None = None
) -> AsyncIterator[ServerSentEvent]:
    """The events of a body arriving as `chunks` (e.g. `response.aiter_bytes()`)."""
    reader = reader or EventStreamReader()
    async for chunk in chunks:
        for event in reader.feed(chunk):
            yield event
    for event in reader.close():
        yield event
