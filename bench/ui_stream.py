"""Streaming into the chat view never stalls the window: the longest gap of a 10 ms timer.

    python bench/ui_stream.py [--tokens 20000] [--rate 1000] [--shape mixed|code]

After a short first turn (so fonts and widgets are warm, as in a window that has shown a
conversation), one Markdown answer of `--tokens` chunks (about four characters each: prose, lists, tables,
code blocks; with `--shape code`, one code block as long as the answer, a file the model
writes) streams from the loopback Ollama double at `--rate` chunks per second through the
real path — `ChatService` (the runtime, the Ollama adapter, the ledger) into the window's chat
view — while a 10 ms `QTimer` ticks on the same (qasync) loop. The double runs in its own
process, as Ollama does, so it does not compete with the window for the GIL. The longest gap
between two ticks is how long the window was frozen at worst. The same stream then goes into a
plain `QTextEdit` (each chunk appended as text) as the baseline, in the same run.

Wall-clock gaps include the time the OS gave the CPU to other processes; on a busy machine that
is most of a gap. So each run also reports the UI thread's own CPU time between ticks (the
work the window did while the timer waited), which other processes cannot inflate.

The first answer of a model the window has not seen write at length is capped at its first
output reserve (num_predict 512, about 2,000 characters), as the double caps it like Ollama;
so the warm-up turn is that first answer, and before the measured turn the session is given
the profile of a model whose reserve the whole answer fits. Every wait is bounded: a turn that
never starts or never ends stops the bench with a line saying which, and exit status 1.

The requirement (issue 15): the chat view's longest gap, with its code blocks coloured by
Pygments, stays within one frame (16 ms). On a machine other processes keep busy the wall-clock
gap mostly measures them (the plain QTextEdit's gap shows how much), so the verdict is also
given on the UI thread's own CPU time in its longest-working gap.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QTextEdit, QWidget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the double lives in tests/

from double_process import DoubleProcess

from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.runtime import ModelBinding
from vak_desktop.runtime.evaluation.fixture import fixture_profile
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.ui import ChatService, MainWindow, apply_theme
from vak_desktop.ui.shell.event_loop import new_event_loop

MODEL = "bench-model"
TICK_MS = 10
LIMIT_MS = 16
WINDOW = 32_768  # the bench model's num_ctx (room for the whole answer)

SECTION = """## Step {n}: measuring the model

The probe sends a *turn-shaped* history at each rung and checks whether the model still calls
the tool it was told to call. Every sample is a prefix of one conversation, so the runner's
prefix cache serves everything but the newest turn, and `num_ctx` only ever steps up.

- rung {n}: 4,096 tokens, three samples, majority verdict
- the bracket's ends are confirmed before the horizon is reported
- a refusal (HTTP 400) sets the verified window

| Rung | Tokens | Verdict | Prefill (tok/s) |
|---|---:|---|---:|
| 1 | 4,096 | followed | 1,843 |
| 2 | 8,192 | followed | 1,790 |
| 3 | 16,384 | ignored | 1,512 |

```python
def horizon(samples: list[bool], sizes: list[int]) -> int:
    best = 0
    for followed, size in zip(samples, sizes):
        if followed:
            best = max(best, size)
    return best  # step {n}
```

"""


CODE_LINE = '    total += horizon(samples[{n}:], sizes[{n}:])  # rung {n}, "majority" verdict\n'


def answer_text(tokens: int, chunk_chars: int, shape: str = "mixed") -> str:
    """`tokens` chunks of Markdown: sections of prose, lists, tables and short code blocks
    ("mixed"), or one code block as long as the answer ("code": a file the model writes)."""
    size = tokens * chunk_chars
    if shape == "code":
        text, n = "Here is the module:\n\n```python\ndef run(samples, sizes):\n", 1
        while len(text) < size - 4:
            text += CODE_LINE.format(n=n)
            n += 1
        return text[: size - 4] + "\n```"
    text, n = "", 1
    while len(text) < size:
        text += SECTION.format(n=n)
        n += 1
    return text[:size]


@dataclass
class Run:
    name: str
    longest_ms: float
    p99_ms: float
    cpu_longest_ms: float  # the UI thread's CPU time in the longest-working gap
    cpu_total_s: float  # the UI thread's CPU time over the whole stream
    gc_ms: float  # the longest garbage collection during the stream
    ticks: int
    seconds: float
    chars: int
    finish_ms: float  # the widget's own handling of the end of the turn


class GapMeter:
    """A 10 ms precise timer and the gaps between its ticks while `measuring`."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self.cpu: list[float] = []
        self.gc_pauses: list[float] = []
        self._gc_started = 0.0
        gc.callbacks.append(self._gc)
        self._last = 0.0
        self._last_cpu = 0.0
        self.measuring = False

    def start(self) -> None:
        self.gaps, self.cpu, self.measuring = [], [], True
        self._last, self._last_cpu = time.perf_counter(), time.thread_time()
        self.timer.start()

    def stop(self) -> None:
        self.measuring = False
        self.timer.stop()

    def _gc(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self.measuring:
            self.gc_pauses.append((time.perf_counter() - self._gc_started) * 1000)

    def close(self) -> None:
        gc.callbacks.remove(self._gc)

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if self.measuring:
            self.gaps.append((now - self._last) * 1000)
            self.cpu.append((cpu - self._last_cpu) * 1000)
        self._last, self._last_cpu = now, cpu


def long_answer_profile(binding: ModelBinding | None, chars: int) -> CapacityProfile:
    """The bound model's profile with an output reserve of `chars` (at four a token) and more."""
    if binding is None:
        raise SystemExit("ui_stream: the model is no longer bound")
    quantisation = binding.details.quantisation if binding.details else ""
    reserve = chars // 4 + 1_024
    return fixture_profile(
        binding.provider, binding.model, quantisation, WINDOW - reserve, output_reserve=reserve
    )


async def until(done: Callable[[], bool], seconds: float, what: str) -> None:
    """Wait (polling the qasync loop) until `done()`, at most `seconds`; say what never came."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"ui_stream: gave up after {seconds:.0f} s waiting for {what}")
        await asyncio.sleep(0.01)


# the loopback Ollama double, answering every chat with `text`
DOUBLE_SCRIPT = (
    "import sys, json, threading\n"
    "from tests.doubles.ollama_server import OllamaDouble\n"
    "cfg = json.loads(sys.stdin.read())\n"
    "double = OllamaDouble(default_text=cfg['text'], default_chunk_chars=cfg['chunk'],"
    " default_delay_per_chunk=cfg['delay'])\n"
    "double.add_model(cfg['model'], num_ctx_param=cfg['window'])\n"
    "with double:\n"
    "    print('listening', double.url, flush=True)\n"
    "    threading.Event().wait()\n"
)


def serve_double(text: str, chunk_chars: int, delay: float) -> DoubleProcess:
    return DoubleProcess(
        DOUBLE_SCRIPT,
        {"text": text, "chunk": chunk_chars, "delay": delay, "model": MODEL, "window": WINDOW},
    )


async def stream_once(
    name: str,
    url: str,
    text: str,
    build: Callable[[ChatService], QWidget],
    shown: Callable[[QWidget], int],
    stream_s: float,
) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Ledger.open(Path(tmp) / "ledger.sqlite3")
        try:
            async with httpx.AsyncClient() as client:
                service = ChatService(ledger, open_provider("ollama", client, url))
                # connected before the widget exists, so it runs before the widget's own slot
                finish_started = [0.0]
                service.turnFinished.connect(
                    lambda _e: finish_started.__setitem__(0, time.perf_counter())
                )
                widget = build(service)
                widget.resize(1100, 750)
                widget.show()
                await service.refresh_models()
                await until(lambda: service.binding is not None, 30, f"{MODEL} to be bound")
                finished: list[TurnFinished] = []
                # a first turn: the window has drawn an answer before (fonts, widgets); it is
                # the same long answer, stopped once a few thousand characters are in
                warm: list[str] = []
                service.textChunk.connect(warm.append)
                service.turnFinished.connect(finished.append)
                if not service.send("Warm up."):
                    raise SystemExit("ui_stream: the window refused the warm-up turn")
                warm_chars = min(4000, len(text) // 2)
                await until(
                    lambda: sum(map(len, warm)) >= warm_chars or bool(finished),
                    60,
                    f"the warm-up turn's first {warm_chars:,} characters",
                )
                service.stop()
                await until(lambda: bool(finished), 30, "the warm-up turn to end once stopped")
                await until(lambda: not service.busy, 30, "the warm-up turn to free the window")
                session = service.session
                if session is None:
                    raise SystemExit("ui_stream: the warm-up turn wrote no session")
                # The window asks for at most the profile's output reserve (num_predict; 512
                # tokens before it has seen a long completion) and the double stops there, as
                # Ollama does. The model is given the profile a model has once it has written
                # long answers: a reserve the whole answer fits.
                ledger.append(session, long_answer_profile(service.binding, len(text)))
                service.textChunk.disconnect(warm.append)
                service.turnFinished.disconnect(finished.append)
                finished.clear()
                meter = GapMeter()
                received = [0]

                def on_chunk(chunk: str) -> None:  # connected after the widget: runs after it
                    if not received[0]:
                        meter.start()  # the stream begins with its first chunk
                    received[0] += len(chunk)
                    if received[0] >= len(text):
                        meter.stop()  # ... and ends with its last

                service.textChunk.connect(on_chunk)
                finish_ms = [0.0]

                def on_finished(event: TurnFinished) -> None:
                    finish_ms[0] = (time.perf_counter() - finish_started[0]) * 1000
                    finished.append(event)

                service.turnFinished.connect(on_finished)
                gc.collect()  # what earlier runs left behind is not this run's to collect
                started = time.perf_counter()
                if not service.send("Explain the probe, with tables and code, at length."):
                    raise SystemExit("ui_stream: the window refused the measured turn")
                # the stream takes len(text) / rate seconds; twice that, plus a minute, is ample
                await until(lambda: bool(finished), 60 + 2 * stream_s, "the turn to end")
                meter.stop()
                seconds = time.perf_counter() - started
                await service.aclose()
                if finished[0].outcome != "completed" or received[0] < len(text):
                    raise SystemExit(
                        f"ui_stream: the measured turn ended {finished[0].outcome!r} after"
                        f" {received[0]:,} of {len(text):,} characters ({finished[0]})"
                    )
                chars = shown(widget)
                widget.close()
                widget.deleteLater()
        finally:
            ledger.close()
    gaps = sorted(meter.gaps)
    p99 = gaps[int(len(gaps) * 0.99)] if gaps else 0.0
    cpu = max(meter.cpu, default=0.0)
    total = sum(meter.cpu) / 1000
    meter.close()
    return Run(
        name,
        max(gaps, default=0.0),
        p99,
        cpu,
        total,
        max(meter.gc_pauses, default=0.0),
        len(gaps),
        seconds,
        chars,
        finish_ms[0],
    )


def _plain(service: ChatService) -> QWidget:
    edit = QTextEdit()
    edit.setReadOnly(True)

    def append(chunk: str) -> None:
        cursor = edit.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(chunk)

    service.textChunk.connect(append)
    return edit


async def main(tokens: int, rate: float, shape: str) -> None:
    chunk_chars = 4
    text = answer_text(tokens, chunk_chars, shape)
    delay = 1.0 / rate
    double = serve_double(text, chunk_chars, delay)
    try:
        view = await stream_once(
            "chat view (Markdown)",
            double.url,
            text,
            MainWindow,
            lambda w: len(w.chat.toPlainText()),  # type: ignore[attr-defined]
            tokens / rate,
        )
        plain = await stream_once(
            "plain QTextEdit",
            double.url,
            text,
            _plain,
            lambda w: len(w.toPlainText()),  # type: ignore[attr-defined]
            tokens / rate,
        )
    finally:
        double.close()
    print(
        f"{tokens:,} chunks of {chunk_chars} chars ({len(text):,} chars, {shape}) at {rate:,.0f}/s"
    )
    print(
        f"{'':22} {'longest gap':>12} {'p99 gap':>9} {'most CPU':>9} {'CPU s':>6}"
        f" {'longest GC':>10} {'ticks':>7}"
        f" {'turn s':>7} {'shown chars':>12} {'end of turn':>12}"
    )
    for run in (view, plain):
        print(
            f"{run.name:22} {run.longest_ms:>9.1f} ms {run.p99_ms:>6.1f} ms"
            f" {run.cpu_longest_ms:>6.1f} ms {run.cpu_total_s:>6.1f} {run.gc_ms:>7.1f} ms"
            f" {run.ticks:>7,} {run.seconds:>7.1f}"
            f" {run.chars:>12,} {run.finish_ms:>9.1f} ms"
        )
    ratio = view.longest_ms / plain.longest_ms if plain.longest_ms else float("inf")
    verdict = "ok" if view.longest_ms <= LIMIT_MS else "OVER"
    cpu_verdict = "ok" if view.cpu_longest_ms <= LIMIT_MS else "OVER"
    print(
        f"chat view ÷ plain (longest gap): {ratio:.2f}; limit {LIMIT_MS} ms: wall {verdict}, "
        f"UI-thread CPU {cpu_verdict} ({view.cpu_longest_ms:.1f} ms)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument(
        "--shape",
        choices=("mixed", "code"),
        default="mixed",
        help="mixed Markdown with short code blocks, or one long code block",
    )
    parser.add_argument("--rate", type=float, default=1000.0, help="chunks per second")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    apply_theme(app)  # type: ignore[arg-type]
    with asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner:  # type: ignore[arg-type]
        runner.run(main(args.tokens, args.rate, args.shape))
