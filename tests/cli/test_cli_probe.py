"""`vak probe` and `vak profile` against the loopback Ollama double (contract: shared/design/cli.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.test_cli import vak
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.runtime.capacity.scheduler import DEADLINE_S

MODEL = "gemma4:e2b"
CONTRACT_KEYS = {
    "declared_window",
    "verified_window",
    "instruction_horizon",
    "tokens_per_char",
    "prefill_tps",
    "cache",
    "output_reserve",
    "num_ctx",
    "provenance",
}


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    with OllamaDouble(instruction_horizon=13_000, search_requests=True) as double:
        double.add_model(MODEL, trained_window=131_072)
        yield double


def _probe(capsys: pytest.CaptureFixture[str], double: OllamaDouble, *more: str) -> Any:
    code, out, err = vak(capsys, "probe", MODEL, "--json", "--host", double.url, *more)
    assert code == 0, err
    return json.loads(out), err


def test_probe_prints_the_contract_profile_and_a_line_per_sample(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    profile, err = _probe(capsys, double)
    assert profile.keys() >= CONTRACT_KEYS
    horizon = profile["instruction_horizon"]
    assert 0.85 * 13_000 <= horizon["tokens"] <= 13_000 and horizon["confidence"] >= 0.9
    provenance = profile["provenance"]
    assert {"probed_at", "rungs", "requests"} <= provenance.keys()
    assert {"tokens", "samples", "followed"} == provenance["rungs"][0].keys()
    lines = [line for line in err.splitlines() if line.startswith("rung")]
    assert len(lines) == provenance["requests"] == len(double.chat_bodies())
    assert "sample 1: followed" in lines[0]

    # `vak profile` prints what was stored, without a request to the provider
    requests = len(double.requests)
    code, out, _ = vak(capsys, "profile", MODEL, "--json")
    assert code == 0 and json.loads(out) == profile
    assert len(double.requests) == requests


def test_a_fresh_profile_is_not_probed_again_unless_forced(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    first, _ = _probe(capsys, double)
    chats = len(double.chat_bodies())
    again, err = _probe(capsys, double)
    assert again == first and "--force" in err
    assert len(double.chat_bodies()) == chats
    forced, _ = _probe(capsys, double, "--force")
    assert forced["provenance"]["probed_at"] > first["provenance"]["probed_at"]
    assert len(double.chat_bodies()) > chats


def test_max_tokens_is_the_ladder_ceiling(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    profile, _ = _probe(capsys, double, "--max-tokens", "6000")
    assert all(rung["tokens"] <= 6_000 for rung in profile["provenance"]["rungs"])


def test_human_output_and_unknown_profile(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = vak(capsys, "profile", MODEL)
    assert code == 2 and f"vak probe {MODEL}" in err
    code, out, _ = vak(capsys, "probe", MODEL, "--host", double.url)
    assert code == 0 and "instruction horizon" in out and "prefix_stable" in out
    code, _, err = vak(capsys, "probe", "nope", "--host", double.url)
    assert code == 2 and "nope" in err


def test_the_confidence_and_its_basis_are_shown_by_probe_and_models(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = vak(capsys, "probe", MODEL, "--host", double.url)
    assert code == 0
    assert "sequential test, 2 agreeing or a majority of 5: followed 4/4 at the horizon" in out
    code, out, _ = vak(capsys, "models", "--json", "--host", double.url)
    (row,) = [r for r in json.loads(out) if r["name"] == MODEL]
    assert row["instruction_horizon"]["confidence"] >= 0.9
    code, out, _ = vak(capsys, "models", "--host", double.url)
    assert f"({row['instruction_horizon']['confidence']:.2f})" in out


def test_a_model_that_never_follows_gets_a_notice_not_a_hang(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with OllamaDouble(instruction_horizon=0, search_requests=True) as double:
        double.add_model(MODEL, trained_window=32_768)
        code, out, _ = vak(capsys, "probe", MODEL, "--host", double.url)
    assert code == 0 and "notice: the model followed the instruction at no size tried" in out
    # undecided, never a horizon at confidence 0.00 (issue #22): the largest size tried, at
    # the metadata confidence, and the notice says so
    assert re.search(r"instruction horizon 1,\d{3} tokens \(confidence 0\.30\)", out)
    assert "notice: undecided" in out and "the largest size the tool task was tried at" in out


def test_vak_probe_has_the_background_budget_and_probes_both_tasks_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with OllamaDouble(instruction_horizon=3_000, memory_horizon=9_000, search_requests=True) as d:
        d.add_model(MODEL, trained_window=32_768)
        code, out, err = vak(capsys, "probe", MODEL, "--json", "--host", d.url)
    assert code == 0, err
    profile = json.loads(out)
    assert profile["provenance"]["budget_s"] == DEADLINE_S  # it had no limit by default
    assert 0.85 * 3_000 <= profile["instruction_horizon"]["tokens"] <= 3_000
    memory = profile["memory_horizon"]
    assert memory is not None and 0.85 * 9_000 <= memory["tokens"] <= 9_000
    assert memory["confidence"] >= 0.85
    assert "(memory)" in err  # the memory task's samples have their own progress lines
    with OllamaDouble(instruction_horizon=3_000, search_requests=True) as d:
        d.add_model(MODEL, trained_window=32_768)
        code, _, err = vak(capsys, "probe", MODEL, "--force", "--no-memory", "--host", d.url)
        asks = {str(b["messages"][-1]["content"]) for b in d.chat_bodies() if b.get("tools")}
    assert code == 0 and "(memory)" not in err
    assert asks and not any(ask.startswith("What is") for ask in asks)
