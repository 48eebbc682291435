"""Binding a model to a session: what the provider says about it, and the runner window to ask for.

Binding asks the provider once per model (`/api/show` on Ollama) for the trained window, so an
unknown model or an unreachable server is reported before anything is written. The `num_ctx`
picked here only ever steps up during the binding's life: a changing `num_ctx` reloads the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vak_desktop.context.capacity import DEFAULT_OUTPUT_RESERVE, choose_num_ctx, estimate_tokens
from vak_desktop.providers.base import ChatProvider, ModelDetails, ModelInspector


@dataclass
class ModelBinding:
    """A model bound for chatting, with the one piece of mutable state a binding has."""

    provider: str
    model: str
    details: ModelDetails | None
    output_reserve: int = DEFAULT_OUTPUT_RESERVE
    num_ctx: int = field(default=0)

    @property
    def declared_window(self) -> int | None:
        return self.details.declared_window if self.details else None

    @property
    def capabilities(self) -> tuple[str, ...]:
        return self.details.capabilities if self.details else ()

    def num_ctx_for(self, request_chars: int, tokens_per_char: float | None) -> int:
        """The runner window for a request of `request_chars`, stepping up only when needed."""
        needed = estimate_tokens(request_chars, tokens_per_char) + self.output_reserve
        self.num_ctx = choose_num_ctx(needed, self.declared_window, self.num_ctx)
        return self.num_ctx

    def grow_to(self, tokens: int) -> bool:
        """After an over-length rejection: a larger window if the model has one. False if not."""
        before = self.num_ctx
        self.num_ctx = choose_num_ctx(tokens + self.output_reserve, self.declared_window, before)
        return self.num_ctx > before


async def bind_model(provider: ChatProvider, model: str) -> ModelBinding:
    """Ask the provider about `model`. Raises ModelNotFound / Unreachable as the provider does."""
    details = await provider.show(model) if isinstance(provider, ModelInspector) else None
    binding = ModelBinding(provider=provider.name, model=model, details=details)
    if details and details.configured_num_ctx:
        binding.num_ctx = choose_num_ctx(details.configured_num_ctx, details.declared_window)
    return binding
