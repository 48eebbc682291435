"""`bench/longmem.py` on a generated LoCoMo-shaped conversation against the loopback OpenAI
double: the data's shape, LoCoMo's scoring rule, the import, and the four arms' requests — no
model, in well under a second or two."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from longmem import ASK, TRUNCATED_TOKENS, import_chat, main
from longmem_data import evidence_shown, f1, generated, load, normalise, stratified

from tests.doubles.openai_server import OpenAIDouble
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.transcripts import session_turns
from vak_desktop.runtime.turn import projection


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([generated()]), encoding="utf-8")
    return path


def test_the_score_is_locomos_token_f1() -> None:
    assert normalise("The Kickboxing, and a Taekwondo!") == "kickboxing taekwondo"
    assert f1("Kickboxing, Taekwondo", "kickboxing, taekwondo", 1) == 1.0
    assert f1("kickboxing", "Kickboxing, Taekwondo", 1) == 0.5  # multi-hop: item by item
    assert f1("May 7, 2023", "7 May 2023", 2) == 1.0  # word order does not count
    assert f1("likely yes", "Likely yes; because she loves cats", 3) == 1.0  # first alternative
    assert f1("Tuesday", "Monday", 4) == 0.0
    assert 0 < f1("she moved to Porto", "Porto", 4) < 1  # extra words cost precision


def test_evidence_counts_through_what_vak_resolves_after_a_relative_time(data: Path) -> None:
    (conversation,) = load(data)
    said = conversation.utterances[0]
    first, rest = said.text.split(" ", 1)
    resolved = f"{first} (= Sat 28 January 2023) {rest}"  # as `relative_dates.annotate` adds
    assert evidence_shown(conversation, [said.dia_id], resolved) == 1.0
    assert evidence_shown(conversation, [said.dia_id], f"{first} and more {rest}") == 0.0


def test_questions_are_stratified_over_categories_one_to_four(data: Path) -> None:
    (conversation,) = load(data)
    picked = stratified(conversation.qa, 4, seed=1)
    assert [q["category"] for q in picked] == [1, 2, 3, 4]  # round-robin, no adversarial (5)
    assert stratified(conversation.qa, 4, seed=1) == picked  # the seed decides
    assert all(q["category"] != 5 for q in stratified(conversation.qa, 99, seed=2))


def test_a_file_that_is_not_locomo_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "other.json"
    bad.write_text('{"messages": []}')
    with pytest.raises(ValueError, match="no LoCoMo conversation"):
        load(bad)


def test_the_import_keeps_every_utterance_its_speaker_and_its_date(
    data: Path, tmp_path: Path
) -> None:
    (conversation,) = load(data)
    path, session = import_chat(conversation, tmp_path / "vak")
    ledger = Ledger.open(path)
    turns = session_turns(ledger, session)
    ledger.close()
    text = "\n".join(f"{t.directive.text}\n{t.answer}" for t in turns)
    for u in conversation.utterances:
        assert f"{u.speaker}: {u.text}" in text
    raw = generated()["conversation"]
    assert f"[{raw['session_2_date_time']}]\nAvery:" in text  # each session opens dated
    assert len(turns) == 30  # 6 sessions of 10 utterances, one turn a user message


def _bodies(double: OpenAIDouble) -> list[dict[str, Any]]:
    """The questions' requests (not the history prefills, one token out)."""
    posted = [b for (_, p, _, b) in double.requests if p.endswith("/chat/completions")]
    return [b for b in posted if b.get("max_tokens") != 1]


async def test_the_four_arms_ask_every_question_on_the_same_server(
    data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "raw.jsonl"
    with OpenAIDouble(models=("m",), default_text="Pepper") as double:
        code = await main(
            [
                str(data),
                "--base-url",
                double.url,
                "--model-name",
                "m",
                "-n",
                "4",
                "--timeout",
                "30",
                "--out",
                str(out),
            ]
        )
        bodies = _bodies(double)
        prefills = [b for (_, p, _, b) in double.requests if b and b.get("max_tokens") == 1]
    assert code == 0
    # the truncated and full histories were sent alone first, each as its questions' prefix
    assert [len(b["messages"]) for b in prefills] == [
        len(bodies[4]["messages"]) - 1,
        len(bodies[8]["messages"]) - 1,
    ]
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["arm"] for r in results] == ["evidence"] * 4 + ["truncated"] * 4 + ["full"] * 4 + [
        "vak"
    ] * 4
    assert len(bodies) == 16  # one request a naive question; a Vak turn answered in one step
    # every arm is answered greedy, so arms differ by what they sent, not by the sampler
    assert [b.get("temperature") for b in bodies] == [0.0] * 16
    for r in results:
        assert r["prediction"] == "Pepper" and not r["undecided"]
        assert r["f1"] == f1("Pepper", r["answer"], r["category"])
    asks = [b["messages"][-1]["content"] for b in bodies]
    questions = [r["question"] for r in results[:4]]
    assert asks[:4] == [ASK.format(question=q) for q in questions]
    evidence, full = bodies[0], bodies[8]
    assert len(evidence["messages"]) <= 4  # system, the evidence line(s), the question
    assert all(r["evidence"] == 1.0 for r in results if r["arm"] in ("evidence", "full"))
    assert sum(len(m["content"]) for m in full["messages"]) > 2_000
    truncated = bodies[4]
    assert sum(len(m["content"]) for m in truncated["messages"]) * 0.3 <= TRUNCATED_TOKENS
    # each Vak question is asked against the imported history alone, never another question
    for body, q in zip(bodies[12:], questions, strict=True):
        sent = json.dumps(body["messages"])
        assert ASK.format(question=q) in body["messages"][-1]["content"]
        assert not any(other in sent for other in questions if other != q)


async def test_a_question_out_of_time_is_undecided_not_wrong(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "raw.jsonl"
    with socket.socket() as silent:  # accepts the connection (its backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        code = await main(
            [
                str(data),
                "--base-url",
                url,
                "--model-name",
                "m",
                "-n",
                "2",
                "--arms",
                "full",
                "--timeout",
                "0.5",
                "--out",
                str(out),
            ]
        )
    assert code == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(results) == 2
    assert all(r["undecided"].startswith("no answer within") for r in results)
    assert all(r["f1"] == 0.0 and r["prediction"] == "" for r in results)


async def test_the_table_is_read_back_from_the_raw_results(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "raw.jsonl"
    with OpenAIDouble(models=("m",), default_text="Miso") as double:
        args = [str(data), "--base-url", double.url, "--model-name", "m", "-n", "4"]
        assert await main([*args, "--arms", "evidence", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()[-2:]
    assert await main([str(out), "--report"]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == printed  # the same table


async def test_an_ab_asks_only_the_listed_questions_and_keeps_the_profile_it_planned_with(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = [q["question"] for q in stratified(load(data)[0].qa, 4, 1)]
    only, profile, out = tmp_path / "only.json", tmp_path / "profile.json", tmp_path / "raw.jsonl"
    only.write_text(json.dumps(asked[1:3]), encoding="utf-8")
    with OpenAIDouble(models=("m",), default_text="Pepper") as double:
        args = [str(data), "--base-url", double.url, "--model-name", "m", "-n", "4"]
        saved = [*args, "--arms", "vak", "--horizon", "3000", "--save-profile", str(profile)]
        assert await main([*saved, "--only", str(only), "--out", str(out)]) == 0
        assert await main([*args, "--arms", "vak", "--profile", str(profile)]) == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["question"] for r in results] == asked[1:3]
    assert json.loads(profile.read_text())["instruction_horizon"]["tokens"] == 3_000
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("horizon")]
    assert printed[1] == f"horizon: 3,000 tokens at confidence 0.90 (from {profile})"


async def test_now_pins_the_date_every_vak_request_reads(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(projection, "datetime", projection.datetime)  # put back after the test
    with OpenAIDouble(models=("m",), default_text="Pepper") as double:
        args = [str(data), "--base-url", double.url, "--model-name", "m", "-n", "2"]
        assert await main([*args, "--arms", "vak", "--now", "2024-02-29T23:59Z"]) == 0
        bodies = _bodies(double)
    assert len(bodies) == 2
    assert all("2024-02-29T23:59Z" in json.dumps(b["messages"]) for b in bodies)
    with pytest.raises(SystemExit, match="give its zone"):
        await main([*args, "--arms", "vak", "--now", "2024-02-29T23:59"])
