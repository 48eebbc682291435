"""The Ollama double is only useful if it behaves like Ollama: these tests hold it to the fact
sheet (silent truncation, the nested llama.cpp 400, exact error texts, cache timing), talking
to it over plain HTTP rather than through our adapter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.doubles.fixtures import PLAIN_MODEL, TOOL_MODEL, double_fixture  # noqa: F401
from tests.doubles.ollama_server import OVERFLOW_TEXT, OllamaDouble, Reply

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.fixture(name="web")
def web_fixture() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def chat(web: httpx.Client, double: OllamaDouble, **body: Any) -> httpx.Response:
    """One non-streamed /api/chat call (the double answers a single object, as Ollama does)."""
    payload = {"model": TOOL_MODEL, "stream": False} | body
    return web.post(double.url + "/api/chat", json=payload)


def msg(role: str, chars: int, fill: str = "x") -> dict[str, Any]:
    return {"role": role, "content": fill * chars}


# -- truncation -----------------------------------------------------------------------------


def test_silent_truncation_drops_oldest_non_system_keeps_last_and_shows_only_in_the_count(
    web: httpx.Client,
    double: OllamaDouble,
) -> None:
    # 4 chars per token, 4 tokens overhead per message: system 14, history 104 each, last 8.
    messages = [msg("system", 40, "s")]
    messages += [msg("user" if i % 2 == 0 else "assistant", 400, str(i)) for i in range(6)]
    messages.append({"role": "user", "content": "latest question?"})
    assert double.prompt_tokens(messages) == 14 + 6 * 104 + 8

    response = chat(web, double, messages=messages, options={"num_ctx": 300})

    assert response.status_code == 200
    answer = response.json()
    assert answer["prompt_eval_count"] == 14 + 2 * 104 + 8  # system + last 2 turns + last
    assert double.prompt_tokens([messages[0], *messages[-3:]]) == answer["prompt_eval_count"]
    assert answer["message"]["content"] == "You said: latest question?"
    assert set(answer) == {
        "model",
        "created_at",
        "message",
        "done",
        "done_reason",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    }
    assert answer["done_reason"] == "stop"


def test_a_last_message_too_long_on_its_own_is_cut_to_tokens_unless_shift_is_off(
    web: httpx.Client,
    double: OllamaDouble,
) -> None:
    messages = [msg("user", 4000)]  # 1004 tokens

    shifted = chat(web, double, messages=messages, options={"num_ctx": 256})
    refused = chat(web, double, messages=messages, options={"num_ctx": 256}, shift=False)

    assert shifted.status_code == 200 and shifted.json()["prompt_eval_count"] <= 256
    assert refused.status_code == 400
    assert refused.json() == {"error": OVERFLOW_TEXT}


def test_truncate_false_answers_the_nested_llama_cpp_400(
    web: httpx.Client, double: OllamaDouble
) -> None:
    messages = [msg("system", 40), msg("user", 4000)]

    response = chat(web, double, messages=messages, options={"num_ctx": 256}, truncate=False)

    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    inner = json.loads(response.json()["error"])["error"]
    assert inner == {
        "code": 400,
        "message": "request (1018 tokens) exceeds the available context size (256 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 1018,
        "n_ctx": 256,
    }


def test_default_num_ctx_is_4096_capped_at_the_trained_window(
    web: httpx.Client, double: OllamaDouble
) -> None:
    chat(web, double, messages=[msg("user", 8)])
    chat(web, double, model=PLAIN_MODEL, messages=[msg("user", 8)])
    double.add_model("small", trained_window=2048)
    chat(web, double, model="small", messages=[msg("user", 8)])

    loaded = web.get(double.url + "/api/ps").json()["models"]

    windows = {m["name"]: m["context_length"] for m in loaded}
    assert windows == {"llama3.2:latest": 4096, "gemma:2b": 4096, "small:latest": 2048}


# -- streaming ------------------------------------------------------------------------------


def test_stream_is_ndjson_with_a_tool_call_on_a_middle_chunk(
    web: httpx.Client, double: OllamaDouble
) -> None:
    double.enqueue(Reply(text="abcdefghij", chunk_chars=4, tool_calls=[("get_weather", {})]))
    body = {"model": TOOL_MODEL, "messages": [msg("user", 8)], "tools": [WEATHER_TOOL]}

    with web.stream("POST", double.url + "/api/chat", json=body) as response:
        assert response.headers["content-type"] == "application/x-ndjson"
        assert response.headers["transfer-encoding"] == "chunked"
        lines = [json.loads(line) for line in response.iter_lines() if line]

    assert [list(line)[:4] for line in lines] == [["model", "created_at", "message", "done"]] * 5
    assert [line["message"]["content"] for line in lines] == ["abcd", "efgh", "ij", "", ""]
    (call,) = lines[3]["message"]["tool_calls"]
    assert call["function"] == {"index": 0, "name": "get_weather", "arguments": {}}
    assert call["id"].startswith("call_") and len(call["id"]) == 13
    final = lines[-1]
    assert "tool_calls" not in final["message"] and final["done_reason"] == "stop"
    assert list(final)[4:] == [
        "done_reason",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    ]


def test_zero_metrics_are_omitted(web: httpx.Client, double: OllamaDouble) -> None:
    answer = chat(web, double, messages=[msg("user", 8)], options={"num_predict": 0}).json()

    assert answer["done_reason"] == "length" and answer["message"]["content"] == ""
    assert "eval_count" not in answer and "eval_duration" not in answer
    assert answer["prompt_eval_count"] == 6


def test_thinking_streams_only_when_on_and_supported(
    web: httpx.Client, double: OllamaDouble
) -> None:
    double.enqueue(Reply(thinking="hmm", text="hi"), Reply(thinking="hmm", text="hi"))

    default_on = chat(web, double, model="qwen3:0.6b", messages=[msg("user", 8)]).json()
    off = chat(web, double, model="qwen3:0.6b", messages=[msg("user", 8)], think=False).json()
    refused = chat(web, double, model=PLAIN_MODEL, messages=[msg("user", 8)], think=True)

    assert default_on["message"]["thinking"] == "hmm"
    assert "thinking" not in off["message"]
    assert refused.status_code == 400
    assert refused.json() == {"error": '"gemma:2b" does not support thinking'}


# -- instruction horizon --------------------------------------------------------------------


def tool_request(padding_chars: int, wording: str) -> list[dict[str, Any]]:
    return [msg("user", padding_chars), msg("assistant", 8), {"role": "user", "content": wording}]


def ask_for_tool(
    web: httpx.Client, double: OllamaDouble, messages: list[dict[str, Any]]
) -> dict[str, Any]:
    answer: dict[str, Any] = chat(web, double, messages=messages, tools=[WEATHER_TOOL]).json()
    return answer


@pytest.mark.parametrize(
    "wording",
    ["Please call the `get_weather` tool now.", "Now CALL THE TOOL get_weather for Oslo."],
)
def test_tool_instruction_is_followed_only_within_the_instruction_horizon(
    web: httpx.Client, wording: str
) -> None:
    with OllamaDouble(instruction_horizon=300) as double:
        double.add_model(TOOL_MODEL)
        near = ask_for_tool(web, double, tool_request(200, wording))
        far = ask_for_tool(web, double, tool_request(2000, wording))

    assert near["prompt_eval_count"] <= 300 < far["prompt_eval_count"]
    assert near["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert "tool_calls" not in far["message"]
    assert "get_weather" not in far["message"]["content"]


def test_noise_flips_verdicts_near_the_horizon_reproducibly(web: httpx.Client) -> None:
    def verdicts(seed: int, horizon_above_prompt: int) -> list[bool]:
        with OllamaDouble(noise=0.5, seed=seed) as double:
            double.add_model(TOOL_MODEL)
            messages = tool_request(400, "call the `get_weather` tool")
            tokens = double.prompt_tokens(messages, [WEATHER_TOOL])
            double.instruction_horizon = tokens + horizon_above_prompt
            answers = [ask_for_tool(web, double, messages) for _ in range(16)]
        return ["tool_calls" in a["message"] for a in answers]

    near = verdicts(seed=7, horizon_above_prompt=0)
    assert near == verdicts(seed=7, horizon_above_prompt=0)
    assert True in near and False in near
    assert all(verdicts(seed=7, horizon_above_prompt=10_000))  # far inside: no noise


# -- timing: prefix cache and reloads -------------------------------------------------------


def test_a_repeated_prefix_is_prefilled_fast_and_a_num_ctx_change_reloads(
    web: httpx.Client,
    double: OllamaDouble,
) -> None:
    history = [msg("system", 400), msg("user", 4000), msg("assistant", 400)]
    cold = chat(web, double, messages=[*history, msg("user", 40)], options={"num_ctx": 8192}).json()
    longer = [*history, msg("user", 40), msg("assistant", 40), msg("user", 40)]
    warm = chat(web, double, messages=longer, options={"num_ctx": 8192}).json()
    reloaded = chat(
        web, double, messages=[*history, msg("user", 40)], options={"num_ctx": 4096}
    ).json()

    assert cold["load_duration"] == double.cold_load_ns
    assert warm["load_duration"] == double.warm_load_ns
    assert warm["prompt_eval_count"] > cold["prompt_eval_count"]  # counts cached tokens too
    assert warm["prompt_eval_duration"] * 5 <= cold["prompt_eval_duration"]
    assert reloaded["load_duration"] == double.cold_load_ns
    assert reloaded["prompt_eval_duration"] == cold["prompt_eval_duration"]


# -- management endpoints and exact error texts ---------------------------------------------


def test_load_keep_alive_and_unload_with_empty_messages(
    web: httpx.Client, double: OllamaDouble
) -> None:
    loaded = chat(web, double, messages=[], keep_alive=-1).json()
    (entry,) = web.get(double.url + "/api/ps").json()["models"]
    unloaded = chat(web, double, messages=[], keep_alive=0).json()

    assert loaded["done_reason"] == "load" and unloaded["done_reason"] == "unload"
    expires = datetime.fromisoformat(entry["expires_at"])
    assert (expires - datetime.now(UTC)).days > 365 * 200  # negative keep_alive: forever
    assert web.get(double.url + "/api/ps").json() == {"models": []}
    assert chat(web, double, model="nope", messages=[], keep_alive=0).status_code == 404


@pytest.mark.parametrize(
    ("path", "body", "status", "error"),
    [
        (
            "/api/chat",
            {"model": "nope", "messages": [msg("user", 4)]},
            404,
            "model 'nope' not found",
        ),
        ("/api/show", {"model": "nope"}, 404, "model 'nope:latest' not found"),
        ("/api/delete", {"model": "nope"}, 404, "model 'nope' not found"),
        ("/api/chat", {"messages": []}, 400, "model is required"),
        (
            "/api/chat",
            {"model": PLAIN_MODEL, "messages": [msg("user", 4)], "tools": [WEATHER_TOOL]},
            400,
            "registry.ollama.ai/library/gemma:2b does not support tools",
        ),
        (
            "/api/chat",
            {"model": TOOL_MODEL, "keep_alive": "300"},
            400,
            'time: missing unit in duration "300"',
        ),
        ("/api/chat", {"model": TOOL_MODEL, "keep_alive": True}, 400, "Unsupported type: 'bool'"),
    ],
)
def test_error_answers_carry_ollamas_exact_texts(
    web: httpx.Client,
    double: OllamaDouble,
    path: str,
    body: dict[str, Any],
    status: int,
    error: str,
) -> None:
    method = "DELETE" if path == "/api/delete" else "POST"
    response = web.request(method, double.url + path, json=body)
    assert (response.status_code, response.json()) == (status, {"error": error})


def test_malformed_bodies_routes_and_methods(web: httpx.Client, double: OllamaDouble) -> None:
    bad = web.post(double.url + "/api/chat", content=b"{bad json")
    empty = web.post(double.url + "/api/chat", content=b"")

    assert (bad.status_code, bad.json()) == (
        400,
        {"error": "invalid character 'b' looking for beginning of object key string"},
    )
    assert empty.json() == {"error": "missing request body"}
    assert web.get(double.url + "/").text == "Ollama is running"
    assert web.get(double.url + "/api/nothing").text == "404 page not found"
    assert web.get(double.url + "/api/chat").status_code == 405
    assert web.get(double.url + "/api/version").json() == {"version": "0.33.0"}
    assert double.requests[0] == ("POST", "/api/chat", None)


def test_pull_streams_progress_and_an_unknown_name_streams_the_error(
    web: httpx.Client, double: OllamaDouble
) -> None:
    double.add_pullable("phi4-mini", total=1000)

    good = [json.loads(line) for line in post_lines(web, double, {"model": "phi4-mini"})]
    bad = [json.loads(line) for line in post_lines(web, double, {"model": "nope"})]

    assert good[0] == {"status": "pulling manifest"} and good[-1] == {"status": "success"}
    assert {"total": 904, "completed": 904}.items() <= good[5].items()
    assert bad == [
        {"status": "pulling manifest"},
        {"error": "pull model manifest: file does not exist"},
    ]
    tags = web.get(double.url + "/api/tags").json()["models"]
    assert "phi4-mini:latest" in {m["name"] for m in tags}


def post_lines(web: httpx.Client, double: OllamaDouble, body: dict[str, Any]) -> list[str]:
    with web.stream("POST", double.url + "/api/pull", json=body) as response:
        assert response.status_code == 200
        return [line for line in response.iter_lines() if line]


def test_the_reload_counter_counts_a_cold_load_and_each_num_ctx_change(
    web: httpx.Client, double: OllamaDouble
) -> None:
    for num_ctx in (8_192, 8_192, 16_384, 16_384, 8_192):
        chat(web, double, messages=[msg("user", 40)], options={"num_ctx": num_ctx})
    assert [r.reason for r in double.loads] == ["cold", "num_ctx", "num_ctx"]
    assert [(r.previous_num_ctx, r.num_ctx) for r in double.reloads()] == [
        (8_192, 16_384),
        (16_384, 8_192),
    ]
