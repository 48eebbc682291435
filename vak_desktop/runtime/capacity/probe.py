"""The capacity probe ladder, run against a provider (spec §1): the async half of the probe.

Why it exists: `context/capacity/probe.py` decides which rung comes next and what the answers mean; this
module sends the requests, through the `ChatProvider` and `ModelInspector` protocols only, and
times them. It is used in the foreground by `vak probe` and in the background by the
`ProbeScheduler`; it never touches a session: its result is a `ProbeRecord` (the profile and
the one Activity holding every rung, sample, verdict, timing and request count).

One `num_ctx` serves every rung: `probe_window` (the window the ladder's largest rung needs,
never above the trained window), which is also the window an unmeasured model's turns use, so
the probe and the turns between its runs never make Ollama reload the model. It steps up only
when a refusal shows our own estimate chose too small a window.

Never a hang (issue #17 "Bad input"), and slowness is never failure (issue #22): a sample
that gets no answer within `sample_timeout_s` is undecided, not failed — the probe stops there
(`ProbeStop` "sample_timeout") with what it confirmed, and a later run, on an idle machine,
continues from the rungs it decided (`resume`). The user's Pause (`pause`, an event) stops it
the same way ("paused"), the sample in flight cut. A probe with a time budget (`deadline_s`) keeps it as a promise: it sends no
sample whose time, predicted from the prefill and generation speed of the samples so far
(`ProbeBudget`), would end past the deadline, and cuts a sample still running at the deadline
(its verdict undecided). A climb rung the budget cannot afford gives way to the largest size it
can (`HorizonSearch.cap`). It reports the best bracket decided before the deadline, its outcome
`timed_out` and a `ProbeStop` saying how it stopped (`context/capacity/probe_result.py`:
a probe that confirmed no rung stores no horizon of its own).

With `memory=True` the same conversation is also probed with the answer-from-memory task
after the tool task, within what is left of the budget; its samples up to the tool task's
largest size are served from the runner's prefix cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from vak_desktop.context.capacity.probe import (
    SAMPLE_MAX_TOKENS,
    HorizonSearch,
    Rung,
    probe_ceiling,
)
from vak_desktop.context.capacity.probe_history import (
    SYNTHETIC_TASK,
    TOOL,
    ProbeHistory,
    ProbePrefix,
    ProbeTask,
)
from vak_desktop.context.capacity.probe_result import (
    PAUSED,
    SAMPLE_TIMEOUT,
    ProbeResume,
    ProbeStop,
    probe_activity,
    probe_profile,
)
from vak_desktop.context.capacity.probe_verdict import (
    AGREE,
    REPLY_CHARS,
    Sample,
    sequential_verdict,
)
from vak_desktop.context.capacity.profile import choose_num_ctx, metadata_profile
from vak_desktop.context.payloads import Activity, CapacityProfile, ToolCall
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import (
    ChatProvider,
    Done,
    ModelDetails,
    ModelInspector,
    TextDelta,
    ToolCallEvent,
)
from vak_desktop.providers.errors import ContextOverflow, ServerError
from vak_desktop.runtime.capacity.probe_budget import ProbeBudget

# Room above our estimate of a sample when choosing its num_ctx: the estimate uses the ratio
# of the previous rung, and the output tokens need space too.
NUM_CTX_HEADROOM = 1.1
SAMPLE_TIMEOUT_S = 300.0  # a sample unanswered this long is undecided (never a hang)
CAP_MARGIN = 0.9  # the climb's budget ceiling sits this far below the largest affordable size


def probe_window(
    declared_window: int | None,
    max_prompt_tokens: int | None = None,
    sample_max_tokens: int = SAMPLE_MAX_TOKENS,
) -> int:
    """The one num_ctx the ladder runs at: its largest rung with headroom, within the window."""
    if not declared_window:
        return choose_num_ctx(0, None)
    ceiling = probe_ceiling(declared_window, max_prompt_tokens)
    return choose_num_ctx(int(ceiling * NUM_CTX_HEADROOM) + sample_max_tokens, declared_window)


def ladder_within(num_ctx: int, sample_max_tokens: int = SAMPLE_MAX_TOKENS) -> int:
    """The largest rung (in prompt tokens) a probe at `num_ctx` can send without stepping up."""
    return max(1, int((num_ctx - sample_max_tokens) / NUM_CTX_HEADROOM))


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


@dataclass(frozen=True)
class ProbeRecord:
    """What a finished probe measured, and the Activity recording how."""

    profile: CapacityProfile
    activity: Activity

    @property
    def paused(self) -> bool:
        stopped = self.activity.detail.get("stopped")
        return isinstance(stopped, dict) and stopped.get("reason") == PAUSED


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
class _Ladder:
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


async def run_probe(
    provider: ChatProvider,
    model: str,
    *,
    details: ModelDetails | None = None,
    digest: str = "",
    max_prompt_tokens: int | None = None,
    sample_max_tokens: int = SAMPLE_MAX_TOKENS,
    nonce: str | None = None,
    keep_alive: str | int | None = None,
    on_sample: Callable[[ProbeProgress], None] | None = None,
    clock: Callable[[], str] = utc_now,
    num_ctx: int = 0,
    prefix: ProbePrefix | None = None,
    sample_timeout_s: float | None = SAMPLE_TIMEOUT_S,
    deadline_s: float | None = None,
    memory: bool = False,
    keep: CapacityProfile | None = None,
    resume: ProbeResume | None = None,
    pause: asyncio.Event | None = None,
) -> ProbeRecord:
    """Run the whole ladder for `model` and return what it measured, every rung at `num_ctx`
    (0: `probe_window`). `prefix`: the system text and schemas of the model's real requests
    (`TurnRunner.probe_prefix`); without one the synthetic pair is sent. `memory`: probe the
    answer-from-memory task too. `keep`: the profile the model has now (kept when this probe
    confirms no rung). `resume`: an earlier run's decided rungs to continue from. `pause`:
    set it to stop after (cutting) the sample in flight, keeping every decided rung.
    Provider errors other than an over-length refusal, a server failure or a timeout at one
    size propagate; a cancelled probe raises CancelledError and records nothing."""
    budget = ProbeBudget(deadline_s)  # the budget covers the whole probe, its `show` too
    if details is None and isinstance(provider, ModelInspector):
        details = await provider.show(model)
    base = metadata_profile(
        provider.name,
        model,
        details.declared_window if details else None,
        quantisation=details.quantisation if details else "",
        model_digest=digest,
        now=clock(),
    )
    declared = base.declared_window
    thinking = details is not None and "thinking" in details.capabilities
    nonce = resume.nonce if resume is not None else nonce or secrets.token_hex(4)
    history = ProbeHistory(nonce, prefix=prefix, memory=memory)
    ceiling = probe_ceiling(declared, max_prompt_tokens)
    search = HorizonSearch(history, ceiling)
    recall = None
    if history.memory is not None:
        recall = HorizonSearch(history.for_task(history.memory), ceiling, confirm=False)
    if resume is not None:  # continue from the rungs an earlier run decided
        for rung in resume.rungs:
            search.record(rung)
        for rung in resume.memory_rungs:
            if recall is not None:
                recall.record(rung)
    ladder = _Ladder(
        provider,
        model,
        budget,
        declared,
        num_ctx or probe_window(declared, max_prompt_tokens, sample_max_tokens),
        sample_max_tokens,
        sample_timeout_s,
        False if thinking else None,
        keep_alive,
        on_sample,
        pause,
        requests=resume.requests if resume is not None else 0,
    )
    stop = await ladder.run(search)
    if stop is None and recall is not None:
        stop = await ladder.run(recall, offset=len(search.rungs))
    wall_ns = time.perf_counter_ns() - budget.started + (resume.wall_ns if resume else 0)
    profile = probe_profile(
        base,
        search,
        now=clock(),
        requests=ladder.requests,
        wall_ns=wall_ns,
        stop=stop,
        keep=keep,
        memory=recall,
    )
    return ProbeRecord(profile, probe_activity(profile, search, stop, recall))


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
