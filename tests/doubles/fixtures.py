"""Fixtures for tests that talk to the loopback Ollama double.

They live here rather than in tests/conftest.py so the modules that need them import them
explicitly. Each fixture is registered under a short name (`double`, `http`, `ollama`) and
imported under its function name, so a test's parameter does not shadow the import:

    from tests.doubles.fixtures import double_fixture, http_fixture, ollama_fixture  # noqa: F401
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.providers.base import StreamEvent
from vak_desktop.providers.ollama import OllamaProvider

TOOL_MODEL = "llama3.2"  # completion + tools, 128k trained window
THINKING_MODEL = "qwen3:0.6b"  # completion + tools + thinking
PLAIN_MODEL = "gemma:2b"  # completion only, 8k trained window


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    """A running double with three models: tools, thinking, and neither."""
    with OllamaDouble() as double:
        double.add_model(TOOL_MODEL)
        double.add_model(
            THINKING_MODEL,
            capabilities=("completion", "tools", "thinking"),
            family="qwen3",
            parameter_size="751.63M",
            trained_window=40960,
        )
        double.add_model(
            PLAIN_MODEL, capabilities=("completion",), family="gemma", trained_window=8192
        )
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(name="ollama")
def ollama_fixture(double: OllamaDouble, http: httpx.AsyncClient) -> OllamaProvider:
    return OllamaProvider(http, double.url)


@pytest.fixture(name="double_process")
def double_process_fixture() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The double in its own process (`python -m tests.doubles.ollama_server`), slowly
    streaming a long default reply, so a test can kill it mid-stream. Yields (process, url)."""
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "tests.doubles.ollama_server", "--model", TOOL_MODEL]
    command += ["--delay-per-chunk", "0.05", "--reply", "a long answer " * 40]
    process = subprocess.Popen(
        command,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    try:
        banner = process.stdout.readline().decode()
        assert banner.startswith("listening http://127.0.0.1:"), banner
        yield process, banner.split()[1]
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    """Every event of a stream, in order."""
    return [event async for event in events]
