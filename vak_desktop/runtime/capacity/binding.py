"""Binding a model to a session: what the provider says about it, and the runner window to ask for.

Binding asks the provider once per model (`/api/show` on Ollama) for the trained window, so an
unknown model or an unreachable server is reported before anything is written.

`num_ctx` is one value per bound model, chosen once from the profile and sent on every request
for it — turns, the summariser, prefix measurement — because a changing `num_ctx` reloads an
Ollama model and empties its prefix cache. A measured profile carries its own (a ladder size
holding horizon + output reserve, never above the trained window). A metadata-only profile has
none: the model then runs at the window its capacity probe will use (`probe_window`), so the
background probe's rungs and the user's turns share one window and a first session reloads the
model at most once, when the measured profile arrives and the binding adopts its window
(docs/decisions/0063-one-num-ctx.md). A Modelfile `num_ctx` stands in for the probe window.
Only a single request larger than the window steps it up, never past the trained window.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vak_desktop.context.capacity.profile import (
    DEFAULT_OUTPUT_RESERVE,
    choose_num_ctx,
    estimate_tokens,
)
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.providers.base import ChatProvider, ModelDetails, ModelInspector


@dataclass
class ModelBinding:
    """A model bound for chatting, with the one piece of mutable state a binding has."""

    provider: str
    model: str
    details: ModelDetails | None
    output_reserve: int = DEFAULT_OUTPUT_RESERVE
    num_ctx: int = field(default=0)
    profile_num_ctx: int = field(default=0)  # the num_ctx of the profile adopted last

    @property
    def declared_window(self) -> int | None:
        return self.details.declared_window if self.details else None

    @property
    def capabilities(self) -> tuple[str, ...]:
        return self.details.capabilities if self.details else ()

    def adopt(self, profile: CapacityProfile, *, unmeasured: int = 0) -> int:
        """Take the runner window of a (newly) measured profile, or `unmeasured` (the probe's
        window) when the profile has none and the binding no window yet; returns the window in
        force. The same profile twice changes nothing, so requests keep one num_ctx."""
        if profile.num_ctx > 0 and profile.num_ctx != self.profile_num_ctx:
            self.profile_num_ctx = profile.num_ctx
            window = self.declared_window
            self.num_ctx = min(profile.num_ctx, window) if window else profile.num_ctx
        elif not self.num_ctx and unmeasured > 0:
            self.num_ctx = choose_num_ctx(unmeasured, self.declared_window)
        self.output_reserve = profile.output_reserve or self.output_reserve
        return self.num_ctx

    def num_ctx_for(self, request_chars: int, tokens_per_char: float | None) -> int:
        """The runner window for a request of `request_chars`, stepping up only when needed."""
        needed = estimate_tokens(request_chars, tokens_per_char) + self.output_reserve
        if self.num_ctx and needed <= self.num_ctx:
            return self.num_ctx
        self.num_ctx = choose_num_ctx(needed, self.declared_window, self.num_ctx)
        return self.num_ctx


async def bind_model(provider: ChatProvider, model: str) -> ModelBinding:
    """Ask the provider about `model`. Raises ModelNotFound / Unreachable as the provider does."""
    details = await provider.show(model) if isinstance(provider, ModelInspector) else None
    binding = ModelBinding(provider=provider.name, model=model, details=details)
    if details and details.configured_num_ctx:
        binding.num_ctx = choose_num_ctx(details.configured_num_ctx, details.declared_window)
    return binding
