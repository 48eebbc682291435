"""The measured prefix: how a count enters the profile, stays calibrated, and shapes the budget."""

from __future__ import annotations

import dataclasses

from vak_desktop.context.capacity.feedback import fold_feedback
from vak_desktop.context.capacity.prefix import (
    PREFIX_MEASURED,
    adopt_measurement,
    calibrate,
    measurement_activity,
    needs_measurement,
    planned_prefix_tokens,
    prefix_chars,
    prefix_request,
)
from vak_desktop.context.capacity.profile import estimate_tokens, metadata_profile
from vak_desktop.context.codec import decode_payload, to_json_value
from vak_desktop.context.payloads import (
    CapacityProfile,
    Directive,
    Ewma,
    Receipt,
    Usage,
)
from vak_desktop.context.planning.assemble import TailContext, plan_request, prefix_digest
from vak_desktop.context.planning.turns import build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.lexicons import lexicons

NOW = "2026-11-30T12:00:00Z"
SYSTEM = "You are a careful assistant. " * 20
TOOLS = (
    ToolSpec(
        "read",
        "Read a file from the workspace.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
)
DIGEST = prefix_digest(SYSTEM, TOOLS)
CHARS = prefix_chars(SYSTEM, TOOLS)


def _profile(ratio: float = 0.25) -> CapacityProfile:
    base = metadata_profile("ollama", "m", 32_768, now=NOW)
    return dataclasses.replace(base, tokens_per_char=Ewma(ratio, 5))


def _measured(tokens: int = 400, ratio: float = 0.25) -> CapacityProfile:
    activity = measurement_activity(_profile(ratio), digest=DIGEST, chars=CHARS, tokens=tokens)
    return adopt_measurement(_profile(ratio), activity.detail)


def _receipt(prompt: int, chars: int, digest: str = DIGEST) -> Receipt:
    return Receipt(
        "ollama", "m", Usage(input_tokens=prompt), prefix_digest=digest, request_chars=chars
    )


def test_profiles_round_trip_with_the_prefix_and_old_rows_decode_without_it() -> None:
    profile = _measured(tokens=412)
    assert profile.prefix_tokens == Ewma(412.0, 1)
    assert decode_payload("capacity_profile", to_json_value(profile)) == profile
    old = to_json_value(_profile())
    for key in ("prefix_tokens", "prefix_chars", "prefix_digest"):
        old.pop(key)
    decoded = decode_payload("capacity_profile", old)
    assert isinstance(decoded, CapacityProfile)
    assert decoded.prefix_tokens.samples == 0 and decoded.prefix_digest == ""
    assert needs_measurement(decoded, DIGEST)


def test_the_usage_only_request_carries_the_prefix_alone_and_one_output_token() -> None:
    request = prefix_request("m", SYSTEM, TOOLS, num_ctx=8192, keep_alive="30m")
    assert [m.role for m in request.messages] == ["system"]
    assert request.tools == TOOLS and request.max_tokens == 1 and request.num_ctx == 8192
    assert request.chars() == CHARS


def test_a_measurement_is_folded_in_and_answers_for_its_digest_only() -> None:
    activity = measurement_activity(_profile(), digest=DIGEST, chars=CHARS, tokens=388)
    assert activity.type == PREFIX_MEASURED
    folded = fold_feedback(_profile(), [activity], now=NOW)
    assert folded.prefix_tokens.value == 388 and folded.prefix_chars == CHARS
    assert not needs_measurement(folded, DIGEST)
    assert needs_measurement(folded, prefix_digest(SYSTEM + " More.", TOOLS))
    other = dataclasses.replace(activity, detail={**activity.detail, "model": "other"})
    assert fold_feedback(_profile(), [other], now=NOW).prefix_tokens.samples == 0
    broken = dataclasses.replace(activity, detail={**activity.detail, "prefix_tokens": "many"})
    assert fold_feedback(_profile(), [broken], now=NOW).prefix_tokens.samples == 0


def test_receipts_with_small_message_parts_calibrate_it_others_do_not() -> None:
    profile = _measured(tokens=400, ratio=0.25)
    # 200 message chars ≈ 50 tokens ≤ 25 % of 400: reported 470 reads the prefix as 420
    nudged = calibrate(profile, _receipt(470, CHARS + 200))
    assert nudged.prefix_tokens.samples == 2
    assert nudged.prefix_tokens.value == 400 + 0.3 * (420 - 400)
    # a long conversation: the estimate of its messages would swamp the reading
    assert calibrate(profile, _receipt(5_400, CHARS + 20_000)) == profile
    # another prefix, or a reading twice off the measurement: not this prefix's size
    assert calibrate(profile, _receipt(470, CHARS + 200, digest="b3:other")) == profile
    assert calibrate(profile, _receipt(2_000, CHARS + 200)) == profile
    # nothing measured yet: nothing to calibrate
    assert calibrate(_profile(), _receipt(470, CHARS + 200)) == _profile()


def test_feedback_folds_calibration_from_receipts_in_order() -> None:
    activity = measurement_activity(_profile(), digest=DIGEST, chars=CHARS, tokens=400)
    records = [activity, _receipt(470, CHARS + 200), _receipt(470, CHARS + 200)]
    folded = fold_feedback(_profile(), records, now=NOW)
    assert folded.prefix_tokens.samples == 3
    assert 400 < folded.prefix_tokens.value < 420


def test_the_planner_budgets_the_measured_prefix_when_it_has_one() -> None:
    ratio = 0.25
    estimate = estimate_tokens(CHARS, ratio)
    assert planned_prefix_tokens(_profile(ratio), CHARS, DIGEST) == estimate
    measured = _measured(tokens=estimate * 2, ratio=ratio)
    assert planned_prefix_tokens(measured, CHARS, DIGEST) == estimate * 2
    # a grown prefix (a tool loaded later) scales the measurement, not the chars estimate
    assert planned_prefix_tokens(measured, CHARS * 2, "b3:grown") == estimate * 4

    index = build_turn_index([_Entry("b3:d1", Directive(text="hello"))])
    context = TailContext(utc=NOW, local="2026-11-30 13:00 (Monday)", timezone="CET (UTC+01:00)")
    plans = [
        plan_request(
            index,
            p,
            index.turns[-1],
            system=SYSTEM,
            tools=TOOLS,
            tail_context=context,
            lexicons=lexicons(),
        )[0]
        for p in (_profile(ratio), measured)
    ]
    assert plans[0].budget.prefix_tokens == estimate
    assert plans[1].budget.prefix_tokens == estimate * 2
    assert plans[1].budget.available == plans[0].budget.available - estimate


@dataclasses.dataclass(frozen=True)
class _Entry:
    id: str
    payload: Directive
