"""The event-stream reader against the WHATWG rules: line ends, multi-line data, comments,
fields, and the same events however the body is cut into network chunks."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st

from tests.providers.hosted import collect, text_of
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.providers import OpenAICompatibleProvider
from vak_desktop.providers.sse import EventStreamReader, ServerSentEvent


def read(*chunks: bytes) -> tuple[list[ServerSentEvent], EventStreamReader]:
    reader = EventStreamReader()
    events = [e for c in chunks for e in reader.feed(c)]
    return events + reader.close(), reader


def datas(*chunks: bytes) -> list[bytes]:
    return [e.data for e in read(*chunks)[0]]


def test_cr_lf_and_crlf_all_end_lines() -> None:
    for end in (b"\n", b"\r", b"\r\n"):
        body = b"data: one" + end + end + b"data: two" + end + end
        assert datas(body) == [b"one", b"two"], end


def test_a_crlf_split_across_chunks_is_one_line_end() -> None:
    assert datas(b"data: one\r", b"\n\r", b"\ndata: two\r\n\r\n") == [b"one", b"two"]


def test_several_data_lines_make_one_event_joined_by_lf() -> None:
    assert datas(b'data: {"a":\ndata: 1}\n\n') == [b'{"a":\n1}']


def test_comments_fields_retry_and_the_bom() -> None:
    body = (
        b"\xef\xbb\xbf: OPENROUTER PROCESSING\n"
        b"retry: 2500\nid: 7\nevent: message_start\ndata:no space\n\n"
        b"retry: soon\nunknown: x\ndata\n\n"
        b"event: ping\n\n"
    )
    events, reader = read(body)
    assert [(e.event, e.id, e.data) for e in events] == [
        ("message_start", "7", b"no space"),
        ("message", "7", b""),
    ]
    assert reader.retry_ms == 2500 and reader.comments == 1
    assert events[0].line == 4  # the line of its `event:` field (the comment is line 1)


def test_an_event_still_open_at_the_end_is_read_not_dropped() -> None:
    assert datas(b"data: [DONE]") == [b"[DONE]"]


@given(st.data())
def test_chunking_never_changes_the_events(data: st.DataObject) -> None:
    body = b": hi\r\ndata: a\rdata: b\r\n\r\nevent: x\ndata: \xc3\xa9\n\ndata: z\r\r"
    cuts = sorted(data.draw(st.sets(st.integers(1, len(body) - 1), max_size=8)))
    pieces = [body[i:j] for i, j in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert read(*pieces)[0] == read(body)[0]


async def test_the_adapter_reads_a_cr_only_stream_with_split_data() -> None:
    lines = [
        b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}',
        b'data: {"choices":[{"index":0,\rdata: "delta":{"content":"lo"}}]}',
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        b"data: [DONE]",
    ]
    body = b"\r\r".join(lines) + b"\r\r"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        provider = OpenAICompatibleProvider(client, "http://127.0.0.1:8080")
        events = await collect(
            provider.stream(ChatRequest(model="m", messages=(Message("user", "hi"),)))
        )
    assert text_of(events) == "Hello"


@given(
    st.lists(st.sampled_from([b"{}", b"", b"  ", b'{"a":1}\r', b"x" * 70]), max_size=8),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=6),
)
def test_ndjson_lines_are_the_same_however_the_body_is_cut(
    lines: list[bytes], cuts: list[int]
) -> None:
    """Ollama's line reader scans each read once (a long line no longer re-copied per read):
    the lines and their numbers do not depend on where the reads end."""
    import asyncio
    from collections.abc import AsyncIterator

    from vak_desktop.providers.ollama_wire import numbered_lines

    body = b"\n".join(lines)

    async def pieces(size: int) -> AsyncIterator[bytes]:
        for start in range(0, len(body), size):
            yield body[start : start + size]

    async def read(size: int) -> list[tuple[int, bytes]]:
        return [line async for line in numbered_lines(pieces(size))]

    whole = asyncio.run(read(max(1, len(body))))
    ended = [(n, raw.rstrip(b"\r")) for n, raw in enumerate(lines[:-1], 1) if raw.strip()]
    assert whole[: len(ended)] == ended  # blank lines counted, CR dropped, blanks skipped
    for size in cuts:
        assert asyncio.run(read(size)) == whole
