"""What the model picker offers: a `ModelChoice` is (provider entry, model), a `ProviderListing`
is one provider's models or why it has none; and the rules for which model is selected when
the listings change. Plain values and functions: `provider_set.py` fills them, the window
shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vak_desktop.context.payloads import Directive

# what a provider's listing says about it
READY = "ready"  # it answered with its models
UNREACHABLE = "unreachable"  # nothing answered at its address
NEEDS_KEY = "needs key"  # a hosted provider with no key in the keyring (or one refused)
FAILED = "failed"  # it answered, but not with a model list; or the engine did not start
DORMANT = "not started"  # the embedded engine, started when its model is picked
STARTING = "starting"  # the embedded engine is loading its model


@dataclass(frozen=True)
class ModelChoice:
    """One model of one provider entry, as the picker offers it."""

    provider: str  # the entry's name: "Ollama", "claude", "llama.cpp"
    model: str


@dataclass(frozen=True)
class ProviderListing:
    """What one provider entry offers now: its models, or why it offers none."""

    name: str
    kind: str
    host: str
    state: str
    models: tuple[str, ...] = ()
    reason: str = ""

    @property
    def title(self) -> str:
        """ "Ollama", "claude (anthropic)", "llama.cpp (embedded)"."""
        return self.name if self.name.lower() == self.kind else f"{self.name} ({self.kind})"

    @property
    def usable(self) -> bool:
        """Its models can be picked (a dormant engine starts when its model is; picking a
        starting one waits for the same start)."""
        return self.state in (READY, DORMANT, STARTING)

    def choices(self) -> list[ModelChoice]:
        return [ModelChoice(self.name, m) for m in self.models]


def choice_named(
    listings: Sequence[ProviderListing], model: str, fallback: str
) -> ModelChoice | None:
    """The first listed choice of the model called `model`, else that model of the entry
    `fallback` (None for "")."""
    if not model:
        return None
    listed = (c for listing in listings for c in listing.choices())
    return next((c for c in listed if c.model == model), ModelChoice(fallback, model))


def still_offered(listings: Sequence[ProviderListing], choice: ModelChoice | None) -> bool:
    """Whether a selection stands: its provider lists it, or could not be asked (a server that
    is down for a moment keeps its model selected). A removed provider's does not."""
    if choice is None:
        return False
    listing = next((item for item in listings if item.name == choice.provider), None)
    if listing is None:
        return False
    return listing.state != READY or choice.model in listing.models


def preferred_choice(
    listings: Sequence[ProviderListing], last: Directive | None
) -> ModelChoice | None:
    """The model of `last` (the shown session's last directive) if a provider of its kind
    lists it; else the first model listed. Only providers that answered count: an embedded
    engine that is not running is never started for this."""
    ready = [c for item in listings if item.state == READY for c in item.choices()]
    if last is not None:
        kinds = {item.name: item.kind for item in listings}
        for choice in ready:
            if choice.model == last.model and kinds[choice.provider] == last.provider:
                return choice
    return ready[0] if ready else None
