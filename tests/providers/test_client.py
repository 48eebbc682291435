"""Every request the app sends says `User-Agent: vak-desktop/<version>`: the clients built by
`providers.client.http_client`, against the loopback doubles of each wire format."""

from __future__ import annotations

from importlib import metadata

from tests.doubles.anthropic_server import AnthropicDouble
from tests.doubles.ollama_server import OllamaDouble
from tests.doubles.openai_server import OpenAIDouble
from tests.providers.hosted import collect
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.providers import (
    USER_AGENT,
    AnthropicProvider,
    OllamaProvider,
    OpenAIProvider,
    http_client,
)

HELLO = (Message("user", "hello"),)


def test_the_user_agent_names_the_app_and_its_installed_version() -> None:
    assert metadata.version("vak-desktop") in USER_AGENT
    assert f"vak-desktop/{metadata.version('vak-desktop')}" == USER_AGENT


async def test_hosted_requests_carry_the_app_user_agent() -> None:
    with (
        OpenAIDouble(api_key="sk-test", models=("gpt-4.1",)) as openai,
        AnthropicDouble(api_key="ak-test", models={"claude-sonnet-4-5": 200_000}) as claude,
    ):
        async with http_client() as client:
            await collect(
                OpenAIProvider(client, openai.url, api_key="sk-test").stream(
                    ChatRequest(model="gpt-4.1", messages=HELLO)
                )
            )
            await collect(
                AnthropicProvider(client, claude.url, api_key="ak-test").stream(
                    ChatRequest(model="claude-sonnet-4-5", messages=HELLO, max_tokens=16)
                )
            )
        agents = [headers.get("user-agent") for _, _, headers, _ in openai.requests]
        agents += [headers.get("user-agent") for _, _, headers, _ in claude.requests]
        assert agents and set(agents) == {USER_AGENT}


async def test_ollama_requests_carry_the_app_user_agent() -> None:
    with OllamaDouble() as double:
        double.add_model("llama3.2")
        async with http_client() as client:
            provider = OllamaProvider(client, double.url)
            await provider.show("llama3.2")
            await collect(provider.stream(ChatRequest(model="llama3.2", messages=HELLO)))
        assert double.user_agents and set(double.user_agents) == {USER_AGENT}
