"""What the Ollama double answers on each route, given a parsed request body — no sockets.

Why it exists: it is the stateful middle of the double, split out of `ollama_server.py` to keep
modules near the size guideline: the models the server has, which are loaded and until when,
the scripted replies and failures, and one method per /api route. `OllamaDouble`
(ollama_server.py) subclasses `OllamaRoutes` and adds HTTP routing and serving; the pure token,
truncation and reply arithmetic lives in `ollama_model.py`. Behaviour follows the wire fact
sheet (design/product.md, "Ollama facts").
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections import deque
from datetime import UTC, datetime
from typing import Any

from tests.doubles.ollama_model import (
    Answer,
    Load,
    Loaded,
    Model,
    Reject,
    Reply,
    Served,
    chunk,
    default_reply,
    expiry,
    generate,
    json_answer,
    keep_alive_seconds,
    load_reason,
    prompt_tokens,
    rfc3339,
    settle_prompt,
    warm,
)


class OllamaRoutes:
    """Ollama's state and route handlers; `OllamaDouble` routes HTTP requests to them."""

    def __init__(
        self,
        *,
        chars_per_token: float = 4.0,
        default_num_ctx: int = 4096,
        instruction_horizon: int | None = None,
        noise: float = 0.0,
        seed: int = 0,
        prefill_tps: float = 500.0,
        decode_tps: float = 50.0,
        cold_load_ns: int = 2_000_000_000,
        warm_load_ns: int = 15_000_000,
        realtime: bool = False,
        version: str = "0.33.0",
        default_text: str | None = None,
        default_chunk_chars: int = 8,
        default_delay_per_chunk: float = 0.0,
        pull_delay_per_line: float = 0.0,
        search_requests: bool = False,
        memory_horizon: int | None = None,
    ) -> None:
        self.chars_per_token, self.default_num_ctx = chars_per_token, default_num_ctx
        self.instruction_horizon, self.noise = instruction_horizon, noise
        self.prefill_tps, self.decode_tps = prefill_tps, decode_tps
        self.cold_load_ns, self.warm_load_ns = cold_load_ns, warm_load_ns
        self.realtime, self.version = realtime, version
        self.default_text, self.default_chunk_chars = default_text, default_chunk_chars
        self.default_delay_per_chunk = default_delay_per_chunk
        self.pull_delay_per_line = pull_delay_per_line
        self.search_requests = search_requests  # "Search my files for X" → grep (ollama_model)
        # a question about a fact told earlier is answered within this (None: the instruction
        # horizon), and only with `search_requests` (ollama_model.default_reply)
        self.memory_horizon = memory_horizon
        self.requests: list[tuple[str, str, Any]] = []  # (method, path, parsed JSON or None)
        self.models: dict[str, Model] = {}
        self.loads: list[Load] = []  # every model load, with its reason (see `reloads`)
        self.user_agents: list[str] = []  # the User-Agent header of every request
        self.pullable: dict[str, dict[str, Any]] = {}
        self._loaded: dict[str, Loaded] = {}
        self._queue: deque[Reply] = deque()
        self._failures: deque[tuple[int, str, str | None]] = deque()
        self._rng, self._ids = random.Random(seed), random.Random(seed + 1)
        self._lock = threading.RLock()

    # -- configuration ----------------------------------------------------------------------

    def add_model(
        self,
        name: str,
        trained_window: int = 131072,
        capabilities: tuple[str, ...] = ("completion", "tools"),
        family: str = "llama",
        parameter_size: str = "1B",
        quantisation: str = "Q4_K_M",
        num_ctx_param: int | None = None,
        digest: str | None = None,
        size: int = 1_321_098_329,
    ) -> Model:
        """Make `name` (normalised with ":latest") a model the server has."""
        key = normalise(name)
        model = Model(
            key,
            trained_window,
            tuple(capabilities),
            family,
            parameter_size,
            quantisation,
            num_ctx_param,
            digest or hashlib.sha256(key.encode()).hexdigest(),
            size,
        )
        with self._lock:
            self.models[key] = model
        return model

    def add_pullable(self, name: str, total: int = 50_000_000, **model: Any) -> None:
        """Let /api/pull fetch `name` (`total` bytes); then it is a model (`add_model(**model)`)."""
        with self._lock:
            self.pullable[normalise(name)] = {"total": total, **model}

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next /api/chat requests with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def fail_next(self, status: int, error: str, retry_after: str | None = None) -> None:
        """Answer the next /api/chat with HTTP `status` and {"error": error} (and a
        Retry-After header when given)."""
        with self._lock:
            self._failures.append((status, error, retry_after))

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every /api/chat request so far."""
        return [b for _, p, b in self.requests if p == "/api/chat" and isinstance(b, dict)]

    def reloads(self, reason: str = "num_ctx") -> list[Load]:
        """The loads of a model already in memory caused by `reason` ("num_ctx", "shift"), or
        "cold" for loads of a model not in memory."""
        with self._lock:
            return [load for load in self.loads if load.reason == reason]

    def prompt_tokens(self, messages: list[dict[str, Any]], tools: list[Any] | None = None) -> int:
        """The prompt size the double reports for these messages and tools (see ollama_model)."""
        return prompt_tokens(messages, tools, self.chars_per_token)

    # -- routes (`OllamaDouble.dispatch` calls `_NAME` for /api/NAME) -----------------

    def _tags(self, _: dict[str, Any]) -> Answer:
        return json_answer(200, {"models": [_summary(m) for m in self.models.values()]})

    def _version(self, _: dict[str, Any]) -> Answer:
        return json_answer(200, {"version": self.version})

    def _ps(self, _: dict[str, Any]) -> Answer:
        now = datetime.now(UTC)
        live = sorted(
            (
                (self.models[k], v)
                for k, v in self._loaded.items()
                if v.expires_at > now and k in self.models
            ),
            key=lambda mv: mv[1].expires_at,
            reverse=True,
        )
        return json_answer(
            200,
            {
                "models": [
                    {
                        **_summary(m),
                        "expires_at": rfc3339(v.expires_at),
                        "size_vram": m.size,
                        "context_length": v.num_ctx,
                    }
                    for m, v in live
                ]
            },
        )

    def _show(self, body: dict[str, Any]) -> Answer:
        model = self._model(body, normalised_404=True)
        params = [f'{"stop":<30} "<|eot_id|>"']
        if model.num_ctx_param is not None:
            params.insert(0, f"{'num_ctx':<30} {model.num_ctx_param}")
        return json_answer(
            200,
            {
                "modelfile": f'# Modelfile generated by "ollama show"\nFROM {model.name}\n',
                "parameters": "\n".join(params),
                "template": "{{ .Prompt }}",
                "details": _details(model),
                "model_info": {
                    "general.architecture": model.family,
                    "general.parameter_count": 1_235_814_432,
                    f"{model.family}.context_length": model.trained_window,
                },
                "capabilities": list(model.capabilities),
                "modified_at": rfc3339(datetime.now(UTC)),
            },
        )

    def _delete(self, body: dict[str, Any]) -> Answer:
        model = self._model(body)
        del self.models[model.name]
        self._loaded.pop(model.name, None)
        return Answer(200, b"")

    def _pull(self, body: dict[str, Any]) -> Answer:
        name = str(body.get("model") or body.get("name") or "")
        if not name:
            raise Reject(400, "model is required")
        key, streamed = normalise(name), body.get("stream") is not False
        spec = self.pullable.get(key) or (
            {"total": self.models[key].size} if key in self.models else None
        )
        if spec is None:
            error = "pull model manifest: file does not exist"
            if not streamed:
                raise Reject(500, error)
            failed = [{"status": "pulling manifest"}, {"error": error}]
            return _ndjson(failed, self.pull_delay_per_line)
        total, digest = int(spec["total"]), hashlib.sha256(key.encode()).hexdigest()
        lines: list[dict[str, Any]] = [{"status": "pulling manifest"}]
        for layer, size in ((digest, total - 96), (digest[::-1], 96)):
            for step in range(5):  # the first line of a layer has completed 0, so it is omitted
                line: dict[str, Any] = {"status": f"pulling {layer[:12]}"}
                line["digest"] = f"sha256:{layer}"
                line |= {"total": size} | ({"completed": size * step // 4} if step else {})
                lines.append(line)
        lines += [{"status": s} for s in ("verifying sha256 digest", "writing manifest", "success")]
        if key not in self.models:
            self.add_model(
                name, **{"size": total} | {k: v for k, v in spec.items() if k != "total"}
            )
        if not streamed:
            return json_answer(200, {"status": "success"})
        return _ndjson(lines, self.pull_delay_per_line)

    # -- /api/chat --------------------------------------------------------------------------

    def _chat(self, body: dict[str, Any]) -> Answer:
        if self._failures:
            raise Reject(*self._failures.popleft())
        model = self._model(body)
        name = str(body["model"])  # Ollama echoes the name as the client wrote it
        keep = keep_alive_seconds(body.get("keep_alive"))
        messages = body.get("messages") or []
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise Reject(400, "json: cannot unmarshal into Go struct field ChatRequest.messages")
        if not messages:
            return self._load_or_unload(model, name, keep)
        tools = body.get("tools") or []
        if tools and "tools" not in model.capabilities:
            raise Reject(400, f"registry.ollama.ai/library/{model.name} does not support tools")
        think = body.get("think")
        if think not in (None, False) and "thinking" not in model.capabilities:
            raise Reject(400, f'"{name}" does not support thinking')
        thinking_on = bool(think) if think is not None else "thinking" in model.capabilities
        options = body.get("options") or {}
        num_ctx = min(int(options.get("num_ctx") or self.default_num_ctx), model.trained_window)
        truncate, shift = body.get("truncate") is not False, body.get("shift") is not False
        kept, tokens, cut = settle_prompt(
            messages,
            tools,
            num_ctx,
            truncate=truncate,
            shift=shift,
            num_keep=options.get("num_keep", 4),
            chars_per_token=self.chars_per_token,
        )
        held = self._loaded.get(model.name)
        reason = load_reason(held, num_ctx=num_ctx, shift=shift)
        if reason is not None:
            before = held.num_ctx if held is not None and reason != "cold" else 0
            self.loads.append(Load(model.name, num_ctx, reason, before))
        reload, cached, state = warm(
            held,
            kept,
            tools,
            num_ctx=num_ctx,
            shift=shift,
            cut=cut,
            keep=keep,
            chars_per_token=self.chars_per_token,
        )
        if state is None:
            self._loaded.pop(model.name, None)
        else:
            self._loaded[model.name] = state
        load_ns = self.cold_load_ns if reload else self.warm_load_ns
        reply = self._queue.popleft() if self._queue else self._default_reply(kept, tools, tokens)
        predict = options.get("num_predict")
        num_predict = predict if isinstance(predict, int) and predict >= 0 else None
        stream = body.get("stream") is not False
        served = Served(
            name, thinking_on, tokens, cached, load_ns, num_ctx, shift, num_predict, stream
        )
        return generate(
            reply,
            served,
            ids=self._ids,
            chars_per_token=self.chars_per_token,
            prefill_tps=self.prefill_tps,
            decode_tps=self.decode_tps,
            realtime=self.realtime,
        )

    def _load_or_unload(self, model: Model, name: str, keep: float | None) -> Answer:
        if keep == 0:
            self._loaded.pop(model.name, None)
        else:
            state = self._loaded.get(model.name) or Loaded(
                expiry(keep), min(self.default_num_ctx, model.trained_window), True
            )
            state.expires_at = expiry(keep)
            self._loaded[model.name] = state
        done_reason = "unload" if keep == 0 else "load"
        loaded = chunk(name, {"role": "assistant", "content": ""}, done=True)
        return json_answer(200, loaded | {"done_reason": done_reason})

    def _default_reply(self, messages: list[Any], tools: list[Any], tokens: int) -> Reply:
        return default_reply(
            messages,
            tools,
            follows=lambda: self._follows(tokens),
            recalls=lambda: self._follows(tokens, self.memory_horizon),
            text=self.default_text,
            chunk_chars=self.default_chunk_chars,
            delay_per_chunk=self.default_delay_per_chunk,
            search_requests=self.search_requests,
        )

    def _follows(self, tokens: int, horizon: int | None = None) -> bool:
        horizon = self.instruction_horizon if horizon is None else horizon
        if horizon is None:
            return True
        verdict = tokens <= horizon
        if (
            self.noise
            and abs(tokens - horizon) <= 0.1 * horizon
            and self._rng.random() < self.noise
        ):
            verdict = not verdict
        return verdict

    def _model(self, body: dict[str, Any], normalised_404: bool = False) -> Model:
        name = str(body.get("model") or body.get("name") or "")
        if not name:
            raise Reject(400, "model is required")
        model = self.models.get(normalise(name))
        if model is None:
            raise Reject(404, f"model '{normalise(name) if normalised_404 else name}' not found")
        return model


def normalise(name: str) -> str:
    """Ollama's model name with its default tag: "llama3.2" -> "llama3.2:latest"."""
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def _ndjson(objects: list[dict[str, Any]], delay: float) -> Answer:
    return Answer(200, lines=[(o, delay) for o in objects])


def _details(model: Model) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": model.family,
        "families": [model.family],
        "parameter_size": model.parameter_size,
        "quantization_level": model.quantisation,
    }


def _summary(model: Model) -> dict[str, Any]:
    return {
        "name": model.name,
        "model": model.name,
        "modified_at": rfc3339(datetime.now(UTC)),
        "size": model.size,
        "digest": model.digest,
        "details": _details(model),
    }
