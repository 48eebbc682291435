"""One run of the probe's searches against a provider: each sample sent, timed, raced against
the deadline and the user's Pause, and read (the part of `runtime/capacity/probe.py` that
talks to the runner).

Why its own module: `run_probe` decides what a probe is (its tasks, its budget, what it keeps
and resumes); `Ladder` only walks a `HorizonSearch` rung by rung, so the two stay readable
apart. A sample unanswered within its limit, one still running at the deadline, and one the
Pause cuts are each undecided (`Sample.cancelled`): the ladder stops there and says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from vak_desktop.context.capacity.probe import HorizonSearch, Rung
from vak_desktop.context.capacity.probe_history import SYNTHETIC_TASK, TOOL, ProbeTask
from vak_desktop.context.capacity.probe_result import PAUSED, SAMPLE_TIMEOUT, ProbeStop
from vak_desktop.context.capacity.probe_verdict import (
    AGREE,
    REPLY_CHARS,
    Sample,
    sequential_verdict,
)
from vak_desktop.context.capacity.profile import choose_num_ctx
from vak_desktop.context.payloads import ToolCall
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers.base import ChatProvider, Done, TextDelta, ToolCallEvent
from vak_desktop.providers.errors import ContextOverflow, ServerError
from vak_desktop.runtime.capacity.probe_budget import ProbeBudget

# Room above our estimate of a sample when choosing its num_ctx: the estimate uses the ratio
# of the previous rung, and the output tokens need space too.
NUM_CTX_HEADROOM = 1.1
SAMPLE_TIMEOUT_S = 300.0  # a sample unanswered this long is undecided (never a hang)
CAP_MARGIN = 0.9  # the climb's budget ceiling sits this far below the largest affordable size


@dataclass(frozen=True)
class ProbeProgress:
    """One sample, as the progress line of `vak probe` shows it."""

    rung: int  # 1-based
    phase: str
    turns: int
    tokens: int
    sample: int  # 1-based within the rung
    sample_result: Sample
    num_ctx: int
    task: str = TOOL  # MEMORY: a sample of the answer-from-memory task


async def sample_once(
    provider: ChatProvider,
    request: ChatRequest,
    miss: bool,
    task: ProbeTask = SYNTHETIC_TASK,
    *,
    timeout_s: float | None = SAMPLE_TIMEOUT_S,
) -> Sample:
    """Send one sample and read its verdict: the task's call made natively or written as text
    (`ProbeTask.followed`). No answer within `timeout_s` is an undecided sample (cancelled,
    no verdict either way), never a failure and never a hang."""
    started = time.perf_counter_ns()
    text, calls, done = "", list[ToolCall](), None
    try:
        async with asyncio.timeout(timeout_s):
            async with contextlib.aclosing(provider.stream(request)) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        text += event.text
                    elif isinstance(event, ToolCallEvent):
                        calls.append(event.call)
                    elif isinstance(event, Done):
                        done = event
    except TimeoutError:
        wall = time.perf_counter_ns() - started
        why = f"no answer within {timeout_s:.0f} s"
        return Sample(False, wall_ns=wall, miss=miss, cancelled=True, undecided=why)
    except ContextOverflow as exc:
        wall = time.perf_counter_ns() - started
        rejected = exc.limit or exc.requested or request.num_ctx
        return Sample(
            False,
            prompt_tokens=exc.requested or 0,
            overflow=True,
            rejected=rejected,
            wall_ns=wall,
            error=str(exc),
        )
    except ServerError as exc:  # e.g. the runner could not allocate this window
        return Sample(False, wall_ns=time.perf_counter_ns() - started, error=str(exc))
    followed = task.followed(calls, text, request.tools)
    usage = done.usage if done else None
    timings = done.timings if done else None
    return Sample(
        followed=followed,
        as_text=followed and task.as_text(calls),
        called="" if followed or not calls else calls[0].name,
        reply=text[:REPLY_CHARS] or "; ".join(f"{c.name}({c.arguments})" for c in calls),
        prompt_tokens=usage.prompt_tokens() if usage else 0,
        cached_tokens=usage.cache_read_tokens if usage else 0,
        prompt_eval_ns=timings.prompt_eval_ns if timings else 0,
        eval_ns=timings.eval_ns if timings else 0,
        load_ns=timings.load_ns if timings else 0,
        wall_ns=time.perf_counter_ns() - started,
        miss=miss,
    )


@dataclass
class Ladder:
    """The state one probe run shares across its searches: the runner, the budget, the
    window, the request count, and how to report and pause."""

    provider: ChatProvider
    model: str
    budget: ProbeBudget
    declared: int
    num_ctx: int
    sample_max_tokens: int
    sample_timeout_s: float | None
    think: bool | None
    keep_alive: str | int | None
    on_sample: Callable[[ProbeProgress], None] | None
    pause: asyncio.Event | None
    requests: int = 0
    sent: int = 0  # samples this run sent (its first is a cache miss)

    async def run(self, search: HorizonSearch, offset: int = 0) -> ProbeStop | None:
        """Run `search` until it is done or the probe stops (the stop then says why)."""
        budget, history = self.budget, search.history
        kind = history.task.kind
        while (planned := search.next_rung()) is not None:
            phase, turns, target = planned
            if not budget.affords(search.estimate(turns), AGREE):  # a rung too big to decide
                affordable = budget.largest_affordable(AGREE)
                if phase == "climb" and affordable and search.cap(int(affordable * CAP_MARGIN)):
                    continue  # climb to the largest size the budget affords instead
                predicted = budget.predict_s(search.estimate(turns), AGREE)
                return budget.stop("predicted", predicted_s=predicted)
            estimate = search.estimate(turns) * NUM_CTX_HEADROOM + self.sample_max_tokens
            wanted = choose_num_ctx(int(estimate), self.declared, self.num_ctx)
            reloaded, self.num_ctx = wanted != self.num_ctx, wanted
            request = ChatRequest(
                model=self.model,
                messages=history.messages(turns),
                tools=history.tools,
                num_ctx=self.num_ctx,
                max_tokens=self.sample_max_tokens,
                think=self.think,
                keep_alive=self.keep_alive,
            )
            rung = Rung(phase, turns, target, request.chars(), self.num_ctx)
            number = offset + len(search.rungs) + 1
            while sequential_verdict(rung.samples, rung.votes) is None:
                if self.pause is not None and self.pause.is_set():
                    return budget.stop(PAUSED, rung)
                if rung.samples and not budget.affords(rung.tokens):  # it cannot finish
                    return budget.stop("predicted", rung, predicted_s=budget.predict_s(rung.tokens))
                miss = self.sent == 0 or reloaded
                sample, why = await self._sample(request, miss, history.task)
                self.requests += 1  # it was sent: the runner did the work
                self.sent += 1
                if sample.cancelled:  # no verdict either way: the probe stops undecided
                    _report(self.on_sample, number, rung, sample, len(rung.samples) + 1, kind)
                    return budget.stop(why, rung, cut=sample)
                reloaded = False
                budget.observe(sample)
                grown = _grown_window(sample, request, self.declared, self.sample_max_tokens)
                if grown:  # our estimate chose too small a window: not a fact about the model
                    self.num_ctx = grown
                    request = dataclasses.replace(request, num_ctx=grown)
                    rung = Rung(phase, turns, target, rung.chars, grown, rung.samples)
                    reloaded = True
                    continue
                rung = Rung(phase, turns, target, rung.chars, self.num_ctx, (*rung.samples, sample))
                _report(self.on_sample, number, rung, sample, len(rung.samples), kind)
            search.record(rung)
        return None

    async def _sample(
        self, request: ChatRequest, miss: bool, task: ProbeTask
    ) -> tuple[Sample, str]:
        """One sample, raced against the deadline and the pause: one still running when
        either comes is cut (cancelled, undecided). Returns it and the stop reason it implies."""
        started = time.perf_counter_ns()
        sending = asyncio.ensure_future(
            sample_once(self.provider, request, miss, task, timeout_s=self.sample_timeout_s)
        )
        paused = asyncio.ensure_future(self.pause.wait()) if self.pause is not None else None
        try:
            waiting = {sending} | ({paused} if paused is not None else set())
            await asyncio.wait(
                waiting, timeout=self.budget.remaining_s(), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if paused is not None:
                paused.cancel()
            if not sending.done():
                sending.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sending
        if sending.done() and not sending.cancelled():
            sample = sending.result()
            return sample, (SAMPLE_TIMEOUT if sample.cancelled else "")
        wall = time.perf_counter_ns() - started
        reason = PAUSED if self.pause is not None and self.pause.is_set() else "cancelled"
        why = "paused" if reason == PAUSED else ""
        return Sample(False, wall_ns=wall, miss=miss, cancelled=True, undecided=why), reason


def _report(
    on_sample: Callable[[ProbeProgress], None] | None,
    number: int,
    rung: Rung,
    sample: Sample,
    index: int,
    task: str = TOOL,
) -> None:
    if on_sample is not None:
        on_sample(
            ProbeProgress(
                number, rung.phase, rung.turns, rung.tokens, index, sample, rung.num_ctx, task
            )
        )


def _grown_window(
    sample: Sample, request: ChatRequest, declared: int, sample_max_tokens: int
) -> int:
    """A larger num_ctx to resend with, when the refusal only says our own window was short
    (the limit it names is the num_ctx we asked for and the model's window is larger)."""
    if not sample.overflow or sample.rejected != request.num_ctx or not sample.prompt_tokens:
        return 0
    grown = choose_num_ctx(sample.prompt_tokens + sample_max_tokens, declared, request.num_ctx)
    return grown if grown > request.num_ctx else 0
