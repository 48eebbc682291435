"""A complete card turn written into a real ledger: one card of every type, a Markdown answer
and a receipt — for screenshots, demos and tests that need a session with cards.

`write_card_turn(ledger)` appends the entries the runtime would (Directive, Presentation …,
AssistantStep, Receipt, the closing Activity) and returns the session id; open it with
`ChatService.open_session(session)` and the chat view draws it from the ledger.
"""

from __future__ import annotations

from typing import Any

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    Presentation,
    Receipt,
    Timings,
    Usage,
)
from vak_desktop.context.planning.turns import TURN_CLOSED
from vak_desktop.context.presentations.digest import payload_digest
from vak_desktop.ledger import Ledger

SAMPLE_CARDS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "metric",
        "",
        {
            "label": "Median prefill speed",
            "value": 1843.5,
            "unit": "tok/s",
            "delta": 212.4,
            "as_of": "2026-11-30",
            "source": "probe of qwen2.5:0.5b",
        },
    ),
    (
        "table",
        "Models on this machine",
        {
            "columns": ["Model", "Size (GB)", "Window", "Quantisation"],
            "rows": [
                ["qwen2.5:0.5b", 0.4, 32768, "Q4_K_M"],
                ["llama3.2", 2.0, 131072, "Q4_K_M"],
                ["gemma3:4b", 3.3, 131072, "Q4_0"],
                ["mistral-nemo", 7.1, 1024000, "Q4_0"],
            ],
        },
    ),
    (
        "chart",
        "Tokens per second by prompt size",
        {
            "kind": "line",
            "x_label": "prompt tokens (thousands)",
            "y_label": "tokens / s",
            "series": [
                {"name": "prefill", "points": [[1, 1900], [4, 1850], [8, 1720], [16, 1490]]},
                {"name": "generation", "points": [[1, 62], [4, 58], [8, 51], [16, 40]]},
            ],
        },
    ),
    (
        "chart",
        "Answers by outcome",
        {
            "kind": "bar",
            "x_label": "week",
            "y_label": "turns",
            "series": [
                {"name": "completed", "points": [["W45", 41], ["W46", 52], ["W47", 47]]},
                {"name": "failed", "points": [["W45", 3], ["W46", 1], ["W47", 2]]},
            ],
        },
    ),
    (
        "entity",
        "",
        {
            "name": "qwen2.5:0.5b",
            "kind": "language model",
            "summary": "A small instruction-tuned model that fits on any laptop.",
            "attributes": {
                "family": "qwen2",
                "parameters": "494M",
                "trained window": 32768,
                "measured horizon": 6144,
            },
        },
    ),
    (
        "checklist",
        "Before the release",
        {
            "items": [
                {"text": "Probe every installed model", "done": True},
                {"text": "Screenshots in light and dark", "done": True},
                {"text": "Installer for macOS", "done": False},
            ]
        },
    ),
    (
        "timeline",
        "This session",
        {
            "events": [
                {"when": "09:12", "what": "Bound llama3.2 (131,072-token window)"},
                {"when": "09:14", "what": "Background probe measured a 24k horizon"},
                {"when": "09:31", "what": "Turns 1–8 folded into a packet"},
            ]
        },
    ),
    (
        "research.synthesis",
        "",
        {
            "question": "Does Ollama truncate long prompts silently?",
            "takeaways": [
                "By default, yes: the oldest messages go first, without an error.",
                'Sending "truncate": false makes an over-long prompt an HTTP 400 instead.',
                "prompt_eval_count far below the estimate reveals a silent cut.",
            ],
            "sources": [
                {
                    "title": "Ollama API: /api/chat",
                    "url": "https://docs.ollama.com/api",
                },
                {
                    "title": "Ollama FAQ: context window",
                    "url": "https://docs.ollama.com/faq",
                },
            ],
        },
    ),
]

SAMPLE_ANSWER = """Here is what I found about **your models**. The cards below have the details.

| Model | Horizon | Prefill |
|---|---:|---:|
| qwen2.5:0.5b | 6,144 | 1,843 tok/s |
| llama3.2 | 24,576 | 912 tok/s |

To measure a model again:

```sh
vak probe qwen2.5:0.5b --json
```

- the *horizon* is where instructions stop being followed
- see [the Ollama docs](https://docs.ollama.com) for `num_ctx`
"""


def write_card_turn(
    ledger: Ledger,
    session: str | None = None,
    *,
    model: str = "llama3.2",
    cards: list[tuple[str, str, dict[str, Any]]] | None = None,
    question: str = "How do my local models compare? Show me cards.",
) -> str:
    """Append one closed turn with a card per entry of `cards` (default: every type) to
    `session` (a new one when None); returns the session id."""
    if session is None:
        session = ledger.create_session().id
    directive = ledger.append(session, Directive(text=question, model=model, provider="ollama"))
    for semantic_type, title, payload in cards if cards is not None else SAMPLE_CARDS:
        ledger.append(
            session,
            Presentation(
                turn_id=directive.id,
                source={"fence": directive.id},
                semantic_type=semantic_type,
                skill_id="sample",
                skill_version="1",
                schema_version=1,
                payload=payload,
                payload_digest=payload_digest(payload),
                title=title,
            ),
        )
    usage = Usage(input_tokens=1204, output_tokens=310)
    ledger.append(session, AssistantStep(text=SAMPLE_ANSWER, model=model, done_reason="stop"))
    ledger.append(
        session,
        Receipt(
            provider="ollama",
            model=model,
            usage=usage,
            timings=Timings(
                total_ns=9_100_000_000,
                prompt_eval_ns=1_310_000_000,
                eval_ns=7_520_000_000,
                wall_ns=9_200_000_000,
            ),
        ),
    )
    ledger.append(
        session,
        Activity(
            type=TURN_CLOSED,
            detail={"outcome": "completed", "input_tokens": 1204, "output_tokens": 310},
        ),
    )
    return session
