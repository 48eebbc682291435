"""Provider errors name what happened (issue 24 item 8), against the loopback OpenAI-compatible
double: a Retry-After longer than the retry policy waits says how long the server asked for;
a redirect and a web page answered with 200 each get their own message (both used to be
"stream ended before `data: [DONE]`")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.doubles.openai_server import Fail, OpenAIDouble
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.providers import ProviderError, RateLimited, RetryPolicy
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider

MODEL = "qwen2.5-coder-0.5b"
PAGE = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>login</body></html>"


@pytest.fixture(name="server")
def server_fixture() -> Iterator[OpenAIDouble]:
    with OpenAIDouble(models=(MODEL,)) as double:
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def _failure(http: httpx.AsyncClient, server: OpenAIDouble) -> ProviderError:
    provider = OpenAICompatibleProvider(http, server.url, retry=RetryPolicy(attempts=3))
    request = ChatRequest(model=MODEL, messages=(Message("user", "hi"),))
    with pytest.raises(ProviderError) as raised:
        async for _event in provider.stream(request):
            pass
    return raised.value


@pytest.mark.parametrize(("status", "header"), [(503, "3600"), (429, "7200")])
async def test_a_retry_after_past_the_policy_says_how_long_the_server_asked(
    http: httpx.AsyncClient, server: OpenAIDouble, status: int, header: str
) -> None:
    server.script(
        Fail(status, {"error": {"message": "busy", "type": "x"}}, {"Retry-After": header})
    )
    error = await _failure(http, server)
    assert isinstance(error, RateLimited)
    hours = int(header) // 3600
    assert f"the server asks to wait {hours} h" in str(error)
    assert len(server.requests) == 1  # not waited for: it failed at once, saying why


async def test_a_redirect_is_named_with_where_it_points(
    http: httpx.AsyncClient, server: OpenAIDouble
) -> None:
    server.script(Fail(307, b"", {"Location": "https://elsewhere.example/v1/chat/completions"}))
    error = await _failure(http, server)
    assert "redirected the request (HTTP 307 to https://elsewhere.example/v1" in str(error)
    assert "[DONE]" not in str(error)


async def test_a_web_page_answered_with_200_is_named_as_one(
    http: httpx.AsyncClient, server: OpenAIDouble
) -> None:
    server.script(Fail(200, PAGE, content_type="text/html; charset=utf-8"))
    error = await _failure(http, server)
    assert "answered with a web page (text/html, HTTP 200)" in str(error)
    assert "[DONE]" not in str(error)
