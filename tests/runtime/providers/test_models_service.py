"""The model manager's runtime service against the loopback Ollama double, without Qt."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.ledger import Ledger
from vak_desktop.providers.errors import ModelNotFound
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime.capacity.probe import ProbeProgress
from vak_desktop.runtime.providers.models import ModelService, PullState, check_model_name
from vak_desktop.runtime.settings import (
    Settings,
    SettingsError,
    check_keep_alive,
    load_settings,
    save_settings,
)

PULLABLE = "qwen2.5:0.5b"


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    with OllamaDouble(instruction_horizon=3_000, pull_delay_per_line=0.01) as double:
        double.add_model("llama3.2")
        double.add_model(
            "qwen3:0.6b",
            capabilities=("completion", "tools", "thinking"),
            family="qwen3",
            parameter_size="751.63M",
            quantisation="Q8_0",
            trained_window=40960,
        )
        double.add_pullable(PULLABLE, total=400_000_000, family="qwen2", parameter_size="494M")
        yield double


@pytest.fixture(name="service")
async def service_fixture(double: OllamaDouble, tmp_path: Path) -> AsyncIterator[ModelService]:
    ledger = Ledger.open(tmp_path / "ledger.sqlite3")
    async with httpx.AsyncClient() as client:
        service = ModelService(OllamaProvider(client, double.url), ledger)
        try:
            yield service
        finally:
            await service.aclose()
            ledger.close()


async def test_listing_joins_tags_show_and_ps(double: OllamaDouble, service: ModelService) -> None:
    rows = {r.name: r for r in await service.models()}
    assert set(rows) == {"llama3.2:latest", "qwen3:0.6b"}
    qwen = rows["qwen3:0.6b"]
    assert (qwen.summary.family, qwen.summary.quantisation) == ("qwen3", "Q8_0")
    assert qwen.trained_window == 40960
    assert "thinking" in qwen.capabilities
    assert qwen.loaded is None and qwen.profile is None
    shows = sum(1 for _, path, _ in double.requests if path == "/api/show")
    await service.models()
    assert sum(1 for _, path, _ in double.requests if path == "/api/show") == shows  # cached

    await service.provider.unload("llama3.2")  # keep_alive 0 on an unloaded model: still none
    assert all(r.loaded is None for r in await service.models())


async def test_pull_sums_the_layers_and_ends_at_one(
    double: OllamaDouble, service: ModelService
) -> None:
    states: list[PullState] = [s async for s in service.pull(f"  {PULLABLE} ")]
    fractions = [s.fraction for s in states]
    assert fractions == sorted(fractions), "progress never goes back"
    assert any(0 < f < 1 for f in fractions), "intermediate values are reported"
    assert states[-1].done and states[-1].fraction == 1.0 and states[-1].status == "success"
    assert states[-1].total == 400_000_000 == states[-1].completed
    assert PULLABLE in {r.name for r in await service.models()}


async def test_a_cancelled_pull_stops_reading(double: OllamaDouble, service: ModelService) -> None:
    seen: list[PullState] = []

    async def pull() -> None:
        async for state in service.pull(PULLABLE):
            seen.append(state)

    task = asyncio.get_running_loop().create_task(pull())
    while not any(0 < s.fraction < 1 for s in seen):  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert not seen[-1].done and seen[-1].status != "success"


async def test_pull_refuses_bad_names_and_reports_unknown_ones(service: ModelService) -> None:
    with pytest.raises(ValueError, match="type a model name"):
        [s async for s in service.pull("  ")]
    with pytest.raises(ValueError, match="is not a model name"):
        check_model_name("qwen 2.5")
    assert check_model_name("hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M")
    with pytest.raises(ModelNotFound):
        [s async for s in service.pull("no-such-model:1b")]


async def test_delete_and_unload_call_the_api(double: OllamaDouble, service: ModelService) -> None:
    await service.delete("qwen3:0.6b")
    assert ("DELETE", "/api/delete", {"model": "qwen3:0.6b"}) in double.requests
    assert {r.name for r in await service.models()} == {"llama3.2:latest"}
    await service.unload("llama3.2:latest")
    body = double.chat_bodies()[-1]
    assert (body["model"], body["keep_alive"], body["messages"]) == ("llama3.2:latest", 0, [])


async def test_probe_now_records_a_profile_the_listing_shows(
    double: OllamaDouble, service: ModelService
) -> None:
    samples: list[ProbeProgress] = []
    record = await service.probe("llama3.2:latest", on_sample=samples.append)
    assert samples and samples[0].rung == 1
    assert 0 < record.profile.instruction_horizon.tokens <= 3_000
    row = next(r for r in await service.models() if r.name == "llama3.2:latest")
    assert row.profile is not None
    assert row.profile.horizon == record.profile.instruction_horizon.tokens
    assert row.profile.probed_at and row.profile.prefill_tps > 0
    assert not service.probing("llama3.2:latest")


def test_model_keep_alive_round_trips_and_falls_back_to_the_default(tmp_path: Path) -> None:
    settings = Settings(keep_alive="45m", model_keep_alive={"llama3.2:latest": "-1", "q:1b": "2h"})
    path = save_settings(settings, tmp_path / "settings.toml")
    assert load_settings(path) == settings
    assert settings.keep_alive_for("llama3.2") == "-1"
    assert settings.keep_alive_for("q:1b") == "2h"
    assert settings.keep_alive_for("other") == "45m"
    for good in ("0", "300", "-1", "30m", "1h30m", "1.5h"):
        assert check_keep_alive(good) == good
    with pytest.raises(ValueError, match="not a duration"):
        check_keep_alive("10 minutes")
    path.write_text('[model_keep_alive]\n"x:1b" = "soon"\n')
    with pytest.raises(SettingsError, match="'soon' is not a duration"):
        load_settings(path)
