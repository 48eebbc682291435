"""Binding a model to a session: what the provider says about it, and the runner window to ask for.

Binding asks the provider once per model (`/api/show` on Ollama) for the trained window, so an
unknown model or an unreachable server is reported before anything is written.

`num_ctx` is one value per bound profile, kept stable between requests, because a changing
`num_ctx` reloads an Ollama model and empties its prefix cache. A measured profile carries its
own (a ladder size holding horizon + output reserve, never above the trained window) and the
binding adopts it when the profile changes. A metadata-only profile has none: its horizon is the
declared window, a claim rather than a measurement, so the window follows the requests instead
(stepping up only) rather than allocating the whole trained window on a claim. Either way a
single request larger than the window steps it up, never past the trained window.
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

    def adopt(self, profile: CapacityProfile) -> int:
        """Take the runner window of a (newly) measured profile; returns the window in force.
        The same profile twice changes nothing, so requests keep one num_ctx."""
        if profile.num_ctx > 0 and profile.num_ctx != self.profile_num_ctx:
            self.profile_num_ctx = profile.num_ctx
            window = self.declared_window
            self.num_ctx = min(profile.num_ctx, window) if window else profile.num_ctx
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
