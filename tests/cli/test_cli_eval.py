"""`vak eval` (shared/design/cli.md; spec "Verification"): the invariants over every session of
a real ledger, ledger verification, and the model checks against the loopback Ollama double."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import open_ledger, vak
from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, tool_output
from tests.doubles.fixtures import TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from vak_desktop.context.payloads import Activity
from vak_desktop.runtime.evaluation.fixture import FIXTURE_TURNS

OFFLINE = [
    "ledger_verify",
    "no_cut",
    "no_split",
    "plan_within_horizon",
    "uniqueness",
    "no_integrations",
]
MODEL = ["probe_harness", "two_model_replay", "cache_test", "live_efficacy"]
CARD = {"title": "Compiler release", "value": "incremental linking", "source": "example.org"}


def sessions(tmp_path: Path) -> None:
    """A few real sessions: every result shape at several sizes, a stored packet, a reset and
    turns behind it, one small session."""
    ledger = open_ledger(tmp_path)
    shapes = ("search", "json", "text", "command", "line", "error")
    busy = SessionBuilder(ledger)
    for n, shape in enumerate(shapes * 2):
        result, is_error = tool_output(shape, f"s{n}", 2_000 + 9_000 * n)
        busy.turn(
            TurnScript(
                f"Question {n}: what does the {shape} tool say about item {n}?",
                ((Call(shape, {"item": n}, result, is_error),),),
                f"Answer {n}: it says item {n} is fine.",
            )
        )
    busy.compaction(1, 8, "The user asked about eight items; all were fine.")
    reset = SessionBuilder(ledger)
    for n in range(3):
        result, _ = tool_output("json", f"r{n}", 3_000)
        reset.turn(TurnScript(f"Before the reset {n}?", ((Call("j", {}, result),),), "ok"))
    reset.reset("We looked at three JSON documents.")
    reset.turn(TurnScript("After the reset, anything new?", (), "Nothing new."))
    SessionBuilder(ledger).turn(TurnScript("hello there", (), "Hi."))
    ledger.close()


def checks(out: str) -> dict[str, dict[str, Any]]:
    document = json.loads(out)
    return {c["name"]: c for c in document["checks"]}


def test_eval_passes_on_a_real_ledger_and_skips_the_model_checks(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions(tmp_path)
    double.enqueue(Reply(tool_calls=[("emit_metric_card", CARD)]), Reply(text="Shown."))
    code, _, _ = vak(capsys, "chat", TOOL_MODEL, "Show it as a metric card.", "--host", double.url)
    assert code == 0  # a live card turn in the ledger too
    code, out, _ = vak(capsys, "eval", "--json")
    assert code == 0
    found = checks(out)
    assert list(found) == OFFLINE + MODEL
    for name in OFFLINE:
        assert found[name]["ok"] and not found[name]["skipped"], found[name]
    assert "in 4 sessions" in found["ledger_verify"]["detail"]
    assert "18 turns in 4 sessions" in found["no_split"]["detail"]
    for name in MODEL:
        assert found[name] == {
            "name": name,
            "ok": True,
            "detail": "skipped: needs --model",
            "skipped": True,
        }
    code, out, _ = vak(capsys, "eval")
    assert code == 0 and "✓ no_cut:" in out and "– cache_test: skipped" in out
    assert out.rstrip().endswith("6 passed, 0 failed, 4 skipped")


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
def test_a_tampered_ledger_fails_ledger_verify_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions(tmp_path)
    path = tmp_path / "data" / "ledger.sqlite3"
    with sqlite3.connect(path) as conn:
        seq, entry_id = conn.execute(
            "SELECT seq, id FROM entries WHERE kind='directive' ORDER BY seq LIMIT 1"
        ).fetchone()
        conn.execute("DROP TRIGGER entries_no_update")
        conn.execute(
            "UPDATE entries SET payload = replace(payload, 'Question 0', 'Question O') "
            "WHERE seq = ?",
            [seq],
        )
    conn.close()
    code, out, _ = vak(capsys, "eval", "--json")
    assert code == 1
    verify = checks(out)["ledger_verify"]
    assert not verify["ok"] and entry_id in verify["detail"] and f"#{seq}" in verify["detail"]


def stored_probe(tmp_path: Path, horizon: int) -> None:
    """A measured profile of the double's tool model in the profile store (as `vak probe`
    leaves it)."""
    ledger = open_ledger(tmp_path)
    pinned = profile(horizon, output_reserve=512, provider="ollama", model=TOOL_MODEL)
    pinned = dataclasses.replace(
        pinned,
        quantisation="Q4_K_M",
        declared_window=131_072,
        provenance={"source": "probe", "probed_at": "2026-11-30T09:00:00.000000Z"},
    )
    ledger.profiles().record(pinned, Activity(type="capacity_probe", message="probed"))
    ledger.close()


def test_eval_with_a_model_runs_the_model_checks_against_the_double(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions(tmp_path)
    stored_probe(tmp_path, horizon=4_500)
    code, out, _ = vak(capsys, "eval", "--json", "--model", TOOL_MODEL, "--host", double.url)
    found = checks(out)
    assert code == 0, found
    ran = {n: c for n, c in found.items() if n != "live_efficacy"}  # that one needs --live
    assert all(c["ok"] and not c["skipped"] for c in ran.values()), found
    assert found["live_efficacy"]["skipped"]
    harness = found["probe_harness"]
    assert "horizon 4,500 tokens" in harness["detail"] and "probed 2026-11-30" in harness["detail"]
    plan = harness["data"]["plan"]
    assert plan["budget"]["horizon"] == 4_500
    assert len(plan["turns"]) == FIXTURE_TURNS
    # the fixture's turns are large: at 4,500 tokens the turn would reset with a handoff first,
    # and the check shows the plan as the turn would send it (from the reset)
    assert {t["fidelity"] for t in plan["turns"]} == {"behind_reset"}
    assert "20 behind a reset" in harness["detail"]
    assert harness["data"]["profile"]["instruction_horizon"]["tokens"] == 4_500
    assert "1 summariser call(s)" in found["two_model_replay"]["detail"]
    assert "inferred from prefill time" in found["cache_test"]["detail"]
    bodies = double.chat_bodies()
    assert len(bodies) == 3  # one summariser call, two cache-test turns
    assert bodies[0]["messages"][0]["content"].startswith("You write the running summary")
    system = bodies[1]["messages"][0]["content"]
    assert bodies[2]["messages"][0]["content"] == system and "Session check" in system
    assert bodies[1]["options"]["num_ctx"] == bodies[2]["options"]["num_ctx"]
    # nothing was written to the user's ledger: its sessions are the ones it had
    ledger = open_ledger(tmp_path)
    assert len(ledger.sessions(include_archived=True)) == 3
    ledger.close()


def test_the_cache_test_fails_when_the_runner_keeps_nothing_cached(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    """keep_alive 0 unloads the model after every request: the second turn prefills it all."""
    code, out, _ = vak(
        capsys, "eval", "--json", "--model", TOOL_MODEL, "--host", double.url, "--keep-alive", "0"
    )
    assert code == 1
    cache = checks(out)["cache_test"]
    assert not cache["ok"] and "read 0 of" in cache["detail"]


def test_an_unreachable_model_server_is_a_clear_start_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = vak(capsys, "eval", "--model", TOOL_MODEL, "--host", "http://127.0.0.1:9")
    assert code == 2 and out == "" and "127.0.0.1:9" in err


def test_eval_live_replays_the_generated_session_on_the_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`vak eval --live`: a real turn on the generated 40-turn session, on the profile the
    user's ledger holds. The double searches for the last word of a "Search my files for …"
    request — it calls the tool but does not remember the code — so the check runs, sees the
    early fact sent and the file tool called, and fails on correctness."""
    stored_probe(tmp_path, horizon=3_000)
    with OllamaDouble(search_requests=True) as server:
        server.add_model(TOOL_MODEL, trained_window=32_768)
        code, out, _ = vak(
            capsys, "eval", "--json", "--model", TOOL_MODEL, "--host", server.url,
            "--live", "--tries", "2",
        )  # fmt: skip
        bodies = [b for _, p, b in server.requests if p == "/api/chat"]
    live = checks(out)["live_efficacy"]
    assert code == 1 and not live["ok"] and not live["skipped"], live
    assert live["detail"].startswith("0/2 correct, 2/2 called a file tool, the early fact sent 2/2")
    assert "(horizon 3,000)" in live["detail"]
    assert [t["tool_call"] for t in live["data"]["tries"]] == [True, True]
    sent = [b for b in bodies if "ZX-4471-Q" in json.dumps(b["messages"])]
    assert len(sent) == 2  # each try's own request carried turn 3's fact


def test_eval_without_a_model_skips_the_live_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sessions(tmp_path)
    code, out, _ = vak(capsys, "eval", "--json")
    assert code == 0 and checks(out)["live_efficacy"]["skipped"]
