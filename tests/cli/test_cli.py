"""The `vak` command against the loopback Ollama double: the contract of shared/design/cli.md."""

from __future__ import annotations

import io
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.fixtures import TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from vak_desktop.cli import main
from vak_desktop.context.codec import to_json_value
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Directive,
    EvidenceBody,
    Ewma,
    Horizon,
)
from vak_desktop.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]


def vak(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run `vak ARGV` in-process; returns (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def open_ledger(tmp_path: Path) -> Ledger:
    return Ledger.open(tmp_path / "data" / "ledger.sqlite3")


def test_chat_streams_writes_entries_and_sends_ollama_what_it_must(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    double.enqueue(Reply(text="Hello! How can I help you today?", chunk_chars=4))
    code, out, _ = vak(capsys, "chat", TOOL_MODEL, "hi", "--json", "--host", double.url)
    assert code == 0
    events = lines(out)
    texts = [e["text"] for e in events if e["event"] == "text"]
    assert len(texts) > 3 and "".join(texts) == "Hello! How can I help you today?"
    done = events[-1]
    assert done["event"] == "done" and done["outcome"] == "completed"
    assert done["usage"]["input_tokens"] > 0
    body = double.chat_bodies()[-1]
    assert body["keep_alive"] == "30m"
    assert body["options"]["num_ctx"] >= 8192
    assert body["truncate"] is False and body["shift"] is False
    store = open_ledger(tmp_path)
    kinds = [e.kind for e in store.chain_to_root(done["session"])]
    # the Activity after the receipt records the prefix the first request sent (prefix_sent)
    assert kinds == ["directive", "assistant_step", "receipt", "activity", "turn_card", "activity"]
    assert store.verify().ok
    store.close()

    code, out, _ = vak(capsys, "sessions", "--json")
    [row] = json.loads(out)
    assert row["id"] == done["session"] and row["turns"] == 1 and row["model"] == TOOL_MODEL
    code, out, _ = vak(capsys, "show", done["session"], "--json")
    shown = json.loads(out)
    assert shown["turns"][0]["answer"] == "Hello! How can I help you today?"
    assert shown["turns"][0]["outcome"] == "completed"


def test_a_second_turn_continues_the_session_with_its_history(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = vak(capsys, "chat", TOOL_MODEL, "my name is Ada", "--json", "--host", double.url)
    session = lines(out)[-1]["session"]
    code, _, _ = vak(
        capsys, "chat", TOOL_MODEL, "what is my name?", "--session", session, "--host", double.url
    )
    assert code == 0
    contents = [m["content"] for m in double.chat_bodies()[-1]["messages"]]
    assert "my name is Ada" in contents and contents[-1] == "what is my name?"
    assert (
        double.chat_bodies()[0]["options"]["num_ctx"]
        == double.chat_bodies()[1]["options"]["num_ctx"]
    ), "num_ctx must stay stable between requests (a change reloads the model)"


def test_ollama_down_exits_2_with_how_to_start_it(capsys: pytest.CaptureFixture[str]) -> None:
    host = f"http://127.0.0.1:{free_port()}"
    code, out, err = vak(capsys, "chat", TOOL_MODEL, "hi", "--host", host)
    assert code == 2 and out == ""
    assert host in err and "ollama serve" in err
    assert err.count("\n") == 1
    code, _, err = vak(capsys, "models", "--host", host)
    assert code == 2 and "ollama serve" in err


def test_unknown_model_is_named_and_nothing_is_written(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = vak(capsys, "chat", "no-such-model", "hi", "--host", double.url)
    assert code == 2 and "no-such-model" in err
    code, out, _ = vak(capsys, "sessions", "--json")
    assert json.loads(out) == []


def test_unknown_session_exits_2(double: OllamaDouble, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = vak(capsys, "show", "deadbeef")
    assert code == 2 and "deadbeef" in err
    code, _, err = vak(
        capsys, "chat", TOOL_MODEL, "x", "--session", "deadbeef", "--host", double.url
    )
    assert code == 2 and "deadbeef" in err
    code, _, err = vak(capsys, "export", "deadbeef")
    assert code == 2 and "deadbeef" in err


def test_a_malformed_ndjson_line_fails_the_turn_naming_the_line(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    double.enqueue(Reply(text="partial words here", raw_lines=[b"{not json"], raw_after_chunks=2))
    code, out, _ = vak(capsys, "chat", TOOL_MODEL, "hi", "--json", "--host", double.url)
    assert code == 1
    events = lines(out)
    [error] = [e for e in events if e["event"] == "error"]
    assert "line 3" in error["message"]
    assert events[-1]["outcome"] == "failed"
    store = open_ledger(tmp_path)
    chain = store.chain_to_root(events[-1]["session"])
    assert chain[0].payload.text == "hi"  # type: ignore[union-attr]
    partial = [e.payload for e in chain if isinstance(e.payload, AssistantStep)]
    assert partial and partial[0].interrupted and partial[0].text.startswith("partial")
    store.close()


def test_a_non_utf8_byte_is_replaced_visibly_and_kept_raw(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    raw = b'{"model":"llama3.2","created_at":"2026-11-30T00:00:00Z","message":{"role":"assistant","content":"caf\xe9 "},"done":false}'
    double.enqueue(Reply(text="ok then", raw_lines=[raw], raw_after_chunks=0))
    code, out, _ = vak(capsys, "chat", TOOL_MODEL, "hi", "--json", "--host", double.url)
    assert code == 0
    events = lines(out)
    assert any(e["event"] == "notice" and "UTF-8" in e["message"] for e in events)
    assert "caf\ufffd" in "".join(e["text"] for e in events if e["event"] == "text")
    store = open_ledger(tmp_path)
    [notice] = [
        e.payload
        for e in store.chain_to_root(events[-1]["session"])
        if isinstance(e.payload, Activity) and e.payload.type == "stream_repaired"
    ]
    assert b"caf\xe9" in __import__("base64").b64decode(notice.detail["raw_base64"])
    store.close()


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
def test_verify_passes_then_names_a_tampered_entry_and_exits_1(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    vak(capsys, "chat", TOOL_MODEL, "remember the word zebra", "--host", double.url)
    code, out, _ = vak(capsys, "ledger", "verify", "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["entries"] == 6 and report["sessions"] == 1
    path = tmp_path / "data" / "ledger.sqlite3"
    with sqlite3.connect(path) as conn:
        seq, entry_id = conn.execute(
            "SELECT seq, id FROM entries WHERE kind='directive'"
        ).fetchone()
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("UPDATE entries SET payload = '{}' WHERE seq = ?", [seq])
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("DELETE FROM entries WHERE seq = ?", [seq])
    shell = ["sqlite3", str(path)]
    sql = f"DROP TRIGGER entries_no_update; UPDATE entries SET payload = replace(payload, 'zebra', 'zebrA') WHERE seq = {seq};"
    subprocess.run([*shell, sql], check=True)
    code, out, _ = vak(capsys, "ledger", "verify", "--json")
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    assert report["first_broken"]["id"] == entry_id and report["first_broken"]["seq"] == seq


def test_import_then_export_round_trips_an_openai_conversation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    big = "\n".join(f"result line {i}" for i in range(5_000))  # windowed in the request
    document = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "look it up"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q": "x"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": big},
            {"role": "assistant", "content": "Found it."},
            {"role": "user", "content": "thanks"},
            {"role": "assistant", "content": "Any time."},
        ]
    }
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(document))
    code, out, _ = vak(capsys, "import", str(source), "--json")
    report = json.loads(out)
    assert (
        code == 0 and report["turns"] == 2 and report["entries"] == 12
    )  # with the imported origin
    code, out, _ = vak(capsys, "export", report["session"])
    exported = json.loads(out)
    strip = [{k: v for k, v in m.items() if k != "name"} for m in exported["messages"]]
    assert strip == document["messages"]
    assert exported["messages"][3]["content"] == big  # whole, from the evidence


def test_import_refuses_a_bad_document_clearly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = vak(capsys, "import", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err and "missing.json" in err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"messages": [{"role": "wizard", "content": "x"}]}))
    code, _, err = vak(capsys, "import", str(bad))
    assert code == 2 and "messages[0]" in err and "wizard" in err
    bad.write_bytes(b'{"messages": "\xff"}')
    code, _, err = vak(capsys, "import", str(bad))
    assert code == 2 and "not UTF-8" in err


def test_models_lists_windows_capabilities_and_what_is_loaded(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    vak(capsys, "chat", TOOL_MODEL, "warm up", "--host", double.url)
    code, out, _ = vak(capsys, "models", "--json", "--host", double.url)
    rows = {r["name"]: r for r in json.loads(out)}
    row = rows[f"{TOOL_MODEL}:latest"]
    assert code == 0 and row["declared_window"] == 131072 and "tools" in row["capabilities"]
    assert row["loaded"] and row["expires_at"]
    assert set(row) >= {"name", "digest", "size", "declared_window", "capabilities", "loaded"}


@pytest.mark.slow
def test_a_ten_megabyte_tool_result_is_stored_whole_and_verifies(
    double: OllamaDouble, tmp_path: Path
) -> None:
    """A real turn whose tool (recall of a stored 10 MB body) returns 10 MB."""
    import asyncio

    import httpx

    from vak_desktop.providers import open_provider
    from vak_desktop.runtime import TurnRunner, bind_model, default_tools

    store = open_ledger(tmp_path)
    session = store.create_session().id
    huge = "".join(f"{i:09d} a line of a very large file\n" for i in range(300_000))
    body = store.append(session, EvidenceBody("c0", "read", huge, len(huge)))
    double.enqueue(Reply(tool_calls=[("recall", {"id": body.id[3:15]})]), Reply(text="read it"))

    async def turn() -> None:
        async with httpx.AsyncClient() as client:
            provider = open_provider("ollama", client, double.url)
            binding = await bind_model(provider, TOOL_MODEL)
            async for _ in TurnRunner(store, provider, default_tools()).run(session, "go", binding):
                pass

    asyncio.run(turn())
    bodies = [
        e.payload for e in store.chain_to_root(session) if isinstance(e.payload, EvidenceBody)
    ]
    assert len(huge) > 10_000_000 and bodies[-1].content == huge
    sent = [m for m in double.chat_bodies()[-1]["messages"] if m["role"] == "tool"][-1]
    assert len(sent["content"]) <= 30_000  # the result as sent: windowed, not 10 MB
    assert store.verify().ok
    store.close()


@pytest.mark.slow
def test_sigkill_mid_stream_loses_nothing_written_and_shows_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OllamaDouble(default_text="slowly " * 200, default_delay_per_chunk=0.02) as double:
        double.add_model(TOOL_MODEL)
        data = tmp_path / "data"
        command = [sys.executable, "-m", "vak_desktop.cli", "chat", TOOL_MODEL, "tell me a story"]
        command += ["--json", "--host", double.url, "--data-dir", str(data)]
        child = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert child.stdout is not None and child.stderr is not None
        seen = 0
        deadline = time.monotonic() + 30
        while seen < 5 and time.monotonic() < deadline:
            line = child.stdout.readline()
            assert line, child.stderr.read().decode()
            seen += json.loads(line)["event"] == "text"
        child.kill()  # SIGKILL, or TerminateProcess on Windows
        child.wait(timeout=10)
        child.stdout.close()
        child.stderr.close()
        assert child.returncode == (1 if sys.platform == "win32" else -9)  # killed

        store = Ledger.open(data / "ledger.sqlite3")
        assert store.verify().ok
        [session] = store.sessions()
        chain = store.chain_to_root(session.id)
        assert chain[0].payload == Directive(
            text="tell me a story",
            model=TOOL_MODEL,
            provider="ollama",
            system=chain[0].payload.system,  # type: ignore[union-attr]
        )
        store.close()
        code, out, _ = vak(capsys, "show", session.id, "--json", "--data-dir", str(data))
        assert json.loads(out)["turns"][0]["outcome"] == "interrupted"
        code, out, _ = vak(
            capsys, "chat", TOOL_MODEL, "again", "--session", session.id, "--json",
            "--host", double.url, "--data-dir", str(data),
        )  # fmt: skip
        assert code == 0
        store = Ledger.open(data / "ledger.sqlite3")
        marks = [
            e.payload.type
            for e in store.chain_to_root(session.id)
            if isinstance(e.payload, Activity)
        ]
        assert marks[0] == "turn_interrupted"
        store.close()


def _imported_session(capsys: pytest.CaptureFixture[str], tmp_path: Path, turns: int) -> str:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be helpful."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"Question {i} about subject {i % 7}?"})
        if i % 3 == 0:
            call = {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": "search", "arguments": "{}"},
            }
            hits = [
                {"title": f"Hit {k}", "url": f"https://example.org/{i}/{k}", "body": "x " * 300}
                for k in range(6)
            ]
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            messages.append(
                {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"results": hits})}
            )
        messages.append({"role": "assistant", "content": f"Answer {i}. " * 30})
    source = tmp_path / "conversation.json"
    source.write_text(json.dumps({"messages": messages}))
    _, out, _ = vak(capsys, "import", str(source), "--json")
    return str(json.loads(out)["session"])


def test_plan_and_request_on_an_imported_40_turn_conversation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = _imported_session(capsys, tmp_path, 40)
    profile = tmp_path / "small.json"
    profile.write_text(
        json.dumps(
            {
                "declared_window": 32768,
                "instruction_horizon": {"tokens": 6000, "confidence": 0.6},
                "output_reserve": 512,
            }
        )
    )
    code, out, _ = vak(capsys, "plan", session, "--profile", str(profile), "--json")
    plan = json.loads(out)
    assert code == 0
    assert set(plan["budget"]) == {
        "horizon", "prefix_tokens", "tail_tokens", "output_reserve", "current_turn_reserve", "available",
    }  # fmt: skip
    assert plan["budget"]["horizon"] == 6000
    assert len(plan["turns"]) == 40
    assert {t["fidelity"] for t in plan["turns"]} <= {"full", "card", "packet", "behind_reset"}
    assert set(plan["turns"][0]) == {"turn_id", "index", "fidelity", "tokens", "value"}
    assert plan["packet_range"] is None or len(plan["packet_range"]) == 2
    assert plan["request_tokens"] <= 6000 - 512
    code, out, _ = vak(
        capsys, "request", session, "--profile", str(profile), "--directive", "and subject 3?"
    )
    request = json.loads(out)
    assert set(request) >= {
        "system",
        "tools",
        "messages",
        "prefix_digest",
        "cache_breakpoints",
        "num_ctx",
    }
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][-1]["content"].endswith("and subject 3?")
    assert "recall" in [t["name"] for t in request["tools"]]
    assert request["num_ctx"] >= 8192


def test_a_profile_as_the_ledger_stores_it_is_read_by_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A CapacityProfile entry's own JSON (its learned ratios as `{"value", "samples"}`), as
    copied out of a kept ledger, plans as it was measured; it was refused ("must be a number")."""
    session = _imported_session(capsys, tmp_path, 4)
    stored = CapacityProfile(
        provider="ollama",
        model=TOOL_MODEL,
        declared_window=32_768,
        instruction_horizon=Horizon(2_211, 0.3, "2026-12-05T00:00:00Z"),
        output_reserve=512,
        tokens_per_char=Ewma(0.319, 16),
    )
    profile = tmp_path / "stored.json"
    profile.write_text(json.dumps(to_json_value(stored)))
    code, out, err = vak(capsys, "plan", session, "--profile", str(profile), "--json")
    assert code == 0, err
    assert json.loads(out)["budget"]["horizon"] == 2_211
    broken = json.loads(profile.read_text())
    broken["tokens_per_char"] = {"value": "high", "samples": 3}
    profile.write_text(json.dumps(broken))
    code, _, err = vak(capsys, "plan", session, "--profile", str(profile))
    assert code == 2 and "tokens_per_char.value" in err


def test_plan_refuses_a_bad_profile_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = _imported_session(capsys, tmp_path, 2)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"instruction_horizon": {"tokens": "lots"}}))
    code, _, err = vak(capsys, "plan", session, "--profile", str(bad))
    assert code == 2 and "instruction_horizon.tokens" in err
    code, _, err = vak(capsys, "plan", "nope", "--profile", str(bad))
    assert code == 2 and "nope" in err


def test_the_repl_runs_turns_and_compact_on_one_session(
    double: OllamaDouble, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    double.enqueue(Reply(text="First answer."), Reply(text="Second answer."))
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n/compact\nand again\n"))
    # the background probe has its own tests (test_cli_repl_idle.py); on an idle machine it
    # started between the turns here and sent its own requests
    args = ("chat", TOOL_MODEL, "--json", "--no-probe", "--host", double.url)
    code, out, _ = vak(capsys, *args)
    assert code == 0
    events = lines(out)
    kinds = [e["event"] for e in events if e["event"] != "text"]
    assert kinds == ["done", "compact", "done"]
    compact = next(e for e in events if e["event"] == "compact")
    assert compact["packet_range"] is None and "nothing to compact" in compact["message"]
    sessions = {e["session"] for e in events if e["event"] == "done"}
    assert len(sessions) == 1
    assert len(double.chat_bodies()) == 2  # /compact asked the model nothing


def test_import_reads_chatgpt_and_open_webui_exports_and_export_writes_markdown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixtures = Path(__file__).parents[1] / "runtime" / "sessions" / "fixtures"
    code, out, _ = vak(capsys, "import", str(fixtures / "chatgpt_conversations.json"))
    assert code == 0 and "Imported 1 of 2 conversations" in out and "skipped:" in out
    code, out, _ = vak(capsys, "import", str(fixtures / "openwebui_export.json"), "--json")
    report = json.loads(out)
    assert code == 0 and report["format"] == "openwebui" and len(report["sessions"]) == 2
    code, out, _ = vak(capsys, "export", report["sessions"][1], "--format", "markdown")
    assert code == 0 and out.startswith("# Flat list only") and "Bonjour !" in out


@pytest.mark.slow
def test_text_streamed_before_a_kill_is_kept_and_shown_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13 item 6: what was shown more than a second before the kill survives it."""
    with OllamaDouble(default_text="slowly " * 400, default_delay_per_chunk=0.02) as double:
        double.add_model(TOOL_MODEL)
        data = tmp_path / "data"
        command = [sys.executable, "-m", "vak_desktop.cli", "chat", TOOL_MODEL, "a story"]
        command += ["--json", "--host", double.url, "--data-dir", str(data)]
        child = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert child.stdout is not None
        shown: list[tuple[float, str]] = []
        first = None
        while first is None or time.monotonic() - first < 2.0:
            line = child.stdout.readline()
            assert line, "the child ended before streaming"
            event = json.loads(line)
            if event["event"] == "text":
                now = time.monotonic()
                first = first or now
                shown.append((now, event["text"]))
        killed_at = time.monotonic()
        child.kill()  # SIGKILL, or TerminateProcess on Windows
        child.wait(timeout=10)
        child.stdout.close()
        seen = "".join(text for at, text in shown if at <= killed_at - 1.0)
        assert len(seen) > 20

        store = Ledger.open(data / "ledger.sqlite3")
        [session] = store.sessions()
        store.close()
        code, _, _ = vak(
            capsys, "chat", TOOL_MODEL, "again", "--session", session.id, "--json",
            "--host", double.url, "--data-dir", str(data),
        )  # fmt: skip
        assert code == 0
        code, out, _ = vak(capsys, "show", session.id, "--json", "--data-dir", str(data))
        turn = json.loads(out)["turns"][0]
        assert turn["outcome"] == "interrupted"
        assert turn["answer"].startswith(seen)


@pytest.mark.slow
def test_a_second_chat_on_a_busy_session_is_refused_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13 item 5: never two turns at once in one session."""
    with OllamaDouble(default_text="slowly " * 400, default_delay_per_chunk=0.02) as double:
        double.add_model(TOOL_MODEL)
        data = tmp_path / "data"
        store = Ledger.open(data / "ledger.sqlite3")
        session = store.create_session().id
        store.close()
        command = [sys.executable, "-m", "vak_desktop.cli", "chat", TOOL_MODEL, "a story"]
        command += ["--session", session, "--json", "--host", double.url, "--data-dir", str(data)]
        child = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert child.stdout is not None
        try:
            while json.loads(child.stdout.readline() or b'{"event": "eof"}')["event"] != "text":
                pass
            code, out, err = vak(
                capsys, "chat", TOOL_MODEL, "me too", "--session", session, "--json",
                "--host", double.url, "--data-dir", str(data),
            )  # fmt: skip
        finally:
            child.kill()  # SIGKILL, or TerminateProcess on Windows
            child.wait(timeout=10)
            child.stdout.close()
        assert code == 2 and out == ""
        assert f"session {session} is busy" in err and f"process {child.pid}" in err
        store = Ledger.open(data / "ledger.sqlite3")
        texts = [e.payload.text for e in store.entries(session) if isinstance(e.payload, Directive)]
        assert texts == ["a story"]  # the refused turn wrote nothing
        store.close()


def test_vak_import_of_a_chatgpt_zip_keeps_its_image_and_a_second_import_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25 item 5: the export's zip is read whole (conversations.json and its files), and
    the same file or document imported again says where it already is and writes nothing."""
    import zipfile

    fixtures = Path(__file__).parents[1] / "runtime" / "sessions" / "fixtures"
    archive = tmp_path / "export.zip"
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    with zipfile.ZipFile(archive, "w") as out:
        out.write(fixtures / "chatgpt_conversations.json", "conversations.json")
        out.writestr("file-Abc123-starter.png", png)
    code, out, _ = vak(capsys, "import", str(archive), "--json")
    report = json.loads(out)
    assert code == 0 and len(report["sessions"]) == 1 and report["branches"] == 1
    assert not [s for s in report["skipped_items"] if s["kind"] == "image"]
    ledger = Ledger.open(Path(os.environ["VAK_DATA_DIR"]) / "ledger.sqlite3")
    try:
        images = [e.payload.images for e in ledger.entries(report["sessions"][0])
                  if isinstance(e.payload, Directive) and e.payload.images]  # fmt: skip
        before = ledger.count()
    finally:
        ledger.close()
    assert len(images) == 1
    code, out, _ = vak(capsys, "import", str(archive))
    assert code == 0 and "1 conversation already imported" in out
    assert "“Sourdough starter”: already imported as “Sourdough starter”" in out
    single = tmp_path / "one.json"
    single.write_text(json.dumps({"messages": [{"role": "user", "content": "hello once"}]}))
    assert vak(capsys, "import", str(single))[0] == 0
    code, out, _ = vak(capsys, "import", str(single))
    assert code == 0 and out.startswith("already imported as “hello once”")
    ledger = Ledger.open(Path(os.environ["VAK_DATA_DIR"]) / "ledger.sqlite3")
    try:
        assert ledger.count() == before + 4  # the single document once: origin, 3 entries
    finally:
        ledger.close()
