"""The long-conversation bench's data side: LoCoMo-format conversations, as a chat and as arms.

Why it exists: `bench/longmem.py` measures Vak on a long real conversation (LoCoMo: two people,
dated sessions, questions scored by token F1); this module is everything about that data that
needs no model — so its tests run in milliseconds on a generated conversation of the same shape.

- `load(path)`: the public `locomo10.json` (a list of samples, `{"sample_id", "conversation",
  "qa"}`) or one flat conversation (`{"speaker_a", "speaker_b", "session_N", …, "qa"}`).
- `chatgpt_export(conversation)`: the conversation as a ChatGPT `conversations.json` — the
  import format that keeps each message's time (`create_time`, the session's date) — with the
  speaker's name opening each utterance and each session opening on a dated header line, so
  every arm (and the importer, with or without timestamps) sees the same words and dates.
  Speaker A is the user, speaker B the assistant; consecutive utterances of one speaker are one
  message.
- `stratified(qa, n, seed)`: n questions spread evenly over categories 1–4 (5, adversarial,
  has no answer to score and is left out).
- `f1(prediction, answer, category)`: LoCoMo's token F1 — lowercase, strip punctuation, articles
  and "and"; a multi-hop answer (category 1) is scored item by item over its commas; an
  open-domain one (category 3) against its first ';' alternative. Unlike LoCoMo's script, words
  are not Porter-stemmed (no NLTK here): "hiking" and "hike" differ.
- `generated(sessions, per_session, seed)`: a conversation of the same shape with planted facts.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vak_desktop.context.planning.relative_dates import ADDED

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SESSION_DATE = "%I:%M %p on %d %B, %Y"  # LoCoMo's "1:56 pm on 8 May, 2023"


@dataclass(frozen=True)
class Utterance:
    dia_id: str
    speaker: str
    text: str
    session: int
    date: str  # the session's date as the data writes it

    def line(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    utterances: tuple[Utterance, ...]
    qa: tuple[dict[str, Any], ...]

    def by_id(self) -> dict[str, Utterance]:
        return {u.dia_id: u for u in self.utterances}

    def chars(self) -> int:
        return sum(len(u.line()) for u in self.utterances)


def _text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


def _conversation(sample_id: str, raw: dict[str, Any], qa: Sequence[Any]) -> Conversation:
    numbers = sorted(
        int(m.group(1)) for k in raw if (m := re.fullmatch(r"session_(\d+)", k)) and raw[k]
    )
    utterances = [
        Utterance(str(t["dia_id"]), str(t["speaker"]), _text(t), n, raw.get(f"session_{n}_date_time", ""))
        for n in numbers
        for t in raw[f"session_{n}"]
        if isinstance(t, dict) and t.get("dia_id") and t.get("speaker")
    ]  # fmt: skip
    return Conversation(
        sample_id,
        str(raw.get("speaker_a", "")),
        str(raw.get("speaker_b", "")),
        tuple(utterances),
        tuple(q for q in qa if isinstance(q, dict)),
    )


def load(path: Path) -> list[Conversation]:
    """Every conversation in a LoCoMo-format file. ValueError says what is wrong with it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a LoCoMo JSON file: {exc}") from None
    samples = document if isinstance(document, list) else [document]
    out = []
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict):
            continue
        raw = sample.get("conversation", sample)
        if isinstance(raw, dict) and "speaker_a" in raw:
            out.append(_conversation(str(sample.get("sample_id", i)), raw, sample.get("qa", [])))
    if not out:
        raise ValueError(f"{path}: no LoCoMo conversation in it (speaker_a, session_1, qa)")
    return out


def session_time(date: str, fallback: datetime) -> datetime:
    try:
        return datetime.strptime(date.strip(), SESSION_DATE).replace(tzinfo=UTC)
    except ValueError:
        return fallback


def chat_messages(conversation: Conversation) -> list[dict[str, Any]]:
    """The conversation as user/assistant messages: `{"role", "content", "time", "ids"}`."""
    out: list[dict[str, Any]] = []
    start = datetime(2023, 1, 1, tzinfo=UTC)
    session, clock = 0, start
    for u in conversation.utterances:
        line = u.line()
        if u.session != session:
            session = u.session
            clock = session_time(u.date, clock + timedelta(days=1))
            line = f"[{u.date or f'session {session}'}]\n{line}"
        clock += timedelta(seconds=30)
        role = "user" if u.speaker == conversation.speaker_a else "assistant"
        if out and out[-1]["role"] == role:
            out[-1]["content"] += f"\n{line}"
            out[-1]["ids"].append(u.dia_id)
            continue
        out.append({"role": role, "content": line, "time": clock.timestamp(), "ids": [u.dia_id]})
    return out


def chatgpt_export(conversation: Conversation) -> list[dict[str, Any]]:
    """A ChatGPT `conversations.json` holding the conversation (see the module)."""
    mapping: dict[str, Any] = {
        "root": {"id": "root", "parent": None, "children": [], "message": None}
    }
    parent = "root"
    messages = chat_messages(conversation)
    for i, m in enumerate(messages):
        node = f"m{i}"
        mapping[parent]["children"].append(node)
        mapping[node] = {
            "id": node,
            "parent": parent,
            "children": [],
            "message": {
                "id": node,
                "author": {"role": m["role"]},
                "create_time": m["time"],
                "content": {"content_type": "text", "parts": [m["content"]]},
                "metadata": {},
            },
        }
        parent = node
    title = f"{conversation.speaker_a} and {conversation.speaker_b} ({conversation.sample_id})"
    created = messages[0]["time"] if messages else 0
    return [{"title": title, "create_time": created, "mapping": mapping, "current_node": parent}]


def stratified(qa: Sequence[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """n questions, round-robin over categories 1–4 (each shuffled by `seed`), in that order."""
    rng = random.Random(seed)
    pools: dict[int, list[dict[str, Any]]] = {}
    for q in qa:
        if q.get("category") in CATEGORIES and "answer" in q:
            pools.setdefault(int(q["category"]), []).append(q)
    for pool in pools.values():
        rng.shuffle(pool)
    picked: list[dict[str, Any]] = []
    while len(picked) < n and any(pools.values()):
        for category in sorted(pools):
            if pools[category] and len(picked) < n:
                picked.append(pools[category].pop())
    return picked


def normalise(text: str) -> str:
    text = str(text).replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(re.sub(r"\b(a|an|the|and)\b", " ", text).split())


def token_f1(prediction: str, truth: str) -> float:
    predicted, expected = normalise(prediction).split(), normalise(truth).split()
    same = sum((Counter(predicted) & Counter(expected)).values())
    if not same:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def f1(prediction: str, answer: Any, category: int) -> float:
    """LoCoMo's score of one answer (see the module)."""
    answer = str(answer)
    if category == 3:
        answer = answer.split(";")[0]
    if category != 1:
        return token_f1(prediction, answer)
    items = [p.strip() for p in prediction.split(",")]
    truths = [t.strip() for t in answer.split(",")]
    return sum(max(token_f1(p, t) for p in items) for t in truths) / len(truths)


def evidence_shown(conversation: Conversation, ids: Sequence[str], sent: str) -> float:
    """The share of the evidence utterances whose words the request carried (what Vak adds
    after a relative time, "next month (= February 2024)", read past: decision 0106)."""
    by_id = conversation.by_id()
    lines = [by_id[i] for i in _ids(ids) if i in by_id]
    if not lines:
        return 0.0
    words = ADDED.sub("", sent)
    return sum(u.text[:80] in words for u in lines) / len(lines)


def _ids(ids: Sequence[str]) -> Iterator[str]:
    for item in ids:  # a few LoCoMo entries hold "D1:3; D2:4" in one string
        yield from (p.strip() for p in re.split(r"[;,]", str(item)) if p.strip())


def evidence_messages(conversation: Conversation, ids: Sequence[str]) -> list[dict[str, Any]]:
    """Only the evidence utterances, in the chat's shape, each under its session's date."""
    by_id = conversation.by_id()
    keep = [by_id[i] for i in dict.fromkeys(_ids(ids)) if i in by_id]
    keep.sort(key=lambda u: conversation.utterances.index(u))
    shown = Conversation(
        conversation.sample_id, conversation.speaker_a, conversation.speaker_b, tuple(keep), ()
    )
    return chat_messages(shown)


# ---- a generated conversation of the same shape (the tests', and a dry run's) -------------

_PEOPLE = ("Avery", "Jordan")
_FACTS = (
    ("adopted a cat named {x}", ("Miso", "Pepper", "Juniper", "Biscuit"), "What is the name of {a}'s cat?"),
    ("started learning the {x}", ("cello", "banjo", "oboe", "harp"), "Which instrument is {a} learning?"),
    ("moved to {x} last week", ("Utrecht", "Porto", "Tartu", "Bergen"), "Where did {a} move to?"),
    ("ran a {x} race yesterday", ("10k", "marathon", "relay", "trail"), "What race did {a} run?"),
)  # fmt: skip
_FILLER = (
    "How have you been lately?",
    "That sounds lovely, tell me more about it.",
    "Work has been busy but I am keeping up.",
    "I tried a new recipe for dinner and it turned out well.",
    "The weather was great for a walk in the park.",
    "Thanks for asking, things are calm here.",
)


def generated(sessions: int = 6, per_session: int = 10, seed: int = 7) -> dict[str, Any]:
    """A LoCoMo-shaped sample: dated sessions, one planted fact a session, its questions."""
    rng = random.Random(seed)
    conversation: dict[str, Any] = {"speaker_a": _PEOPLE[0], "speaker_b": _PEOPLE[1]}
    qa: list[dict[str, Any]] = []
    day = datetime(2023, 3, 4, 14, 5)
    for n in range(1, sessions + 1):
        day += timedelta(days=rng.randint(3, 20))
        conversation[f"session_{n}_date_time"] = (
            f"{day.hour % 12 or 12}:{day:%M} {'am' if day.hour < 12 else 'pm'} on {day.day} {day:%B}, {day.year}"
        )
        turns = []
        for i in range(1, per_session + 1):
            speaker = _PEOPLE[(i + 1) % 2]
            text = rng.choice(_FILLER)
            if i == 3:
                template, values, question = _FACTS[(n - 1) % len(_FACTS)]
                value = values[(n - 1) // len(_FACTS) % len(values)]
                text = f"Guess what, I {template.format(x=value)}!"
                qa.append(
                    {
                        "question": question.format(a=speaker),
                        "answer": value,
                        "evidence": [f"D{n}:{i}"],
                        "category": 4,
                    }
                )
                qa.append({"question": f"When did {speaker} say that they {template.format(x=value)}?", "answer": day.strftime("%d %B %Y"), "evidence": [f"D{n}:{i}"], "category": 2})  # fmt: skip
            turns.append({"speaker": speaker, "dia_id": f"D{n}:{i}", "text": text})
        conversation[f"session_{n}"] = turns
    qa.append({"question": "Which names has the cat had?", "answer": "Miso, Pepper", "evidence": ["D1:3", "D5:3"], "category": 1})  # fmt: skip
    qa.append({"question": "Would Avery like a pet?", "answer": "Likely yes", "evidence": ["D1:3"], "category": 3})  # fmt: skip
    qa.append({"question": "What did Avery sell?", "evidence": ["D1:3"], "category": 5, "adversarial_answer": "a car"})  # fmt: skip
    return {"sample_id": "generated", "conversation": conversation, "qa": qa}
