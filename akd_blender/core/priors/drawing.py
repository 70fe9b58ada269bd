"""Drawing a video with a prior's own SDS hooks: deterministic DDIM (η = 0), written once for every
parametrisation.

At each of ``steps`` timesteps ``t_i = 1 − i/steps`` (fractions of the schedule, 1 = pure noise) the
prior predicts with classifier-free guidance, :meth:`~.base.SDSPrior._clean_and_noise` gives the
clean estimate ``x0`` and noise estimate ``ε̂``, and the forward process of the next timestep
(:meth:`~.base.SDSPrior._noise`) re-noises ``x0`` with ``ε̂``; the last step returns ``x0``. For a
v-prediction DDPM schedule (CogVideoX) this is DDIM; for flow matching (Wan) it is the Euler step of
the flow ``z_t = (1−σ) z + σ ε``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .base import SDSPrior, TextEmbedding, cfg_combine

__all__ = ["draw_latents"]


@torch.no_grad()
def draw_latents(
    prior: SDSPrior,
    text: TextEmbedding,
    shape: tuple[int, ...],
    generator: torch.Generator | None = None,
    guidance: float = 6.0,
    steps: int = 30,
    progress: Callable[[int, int], None] | None = None,
) -> torch.Tensor:
    """Latents of ``shape`` (the prior's layout, float32 on ``prior.device``) drawn for ``text`` in
    ``steps`` DDIM steps with CFG scale ``guidance`` (1 or no negative embedding: no unconditional
    pass). The starting noise comes from ``generator`` (CPU or the prior's device; deterministic for a
    seed). ``progress(done, total)`` after each step; an exception it raises stops the drawing."""
    if steps < 1:
        raise ValueError(f"draw_latents: steps must be at least 1 (got {steps})")
    device = generator.device if generator is not None else torch.device("cpu")
    noise = torch.randn(shape, generator=generator, device=device).to(prior.device, torch.float32)
    use_cfg = guidance != 1.0 and text.uncond is not None
    times = [1.0 - i / steps for i in range(steps)]
    latents, timestep = prior._noise(torch.zeros_like(noise), noise, times[0])
    for i, t in enumerate(times):
        pred = cfg_combine(prior._predict(latents, timestep, text, use_cfg), guidance)
        clean, eps = prior._clean_and_noise(latents, pred, t)
        if i + 1 < steps:
            latents, timestep = prior._noise(clean.float(), eps.float(), times[i + 1])
        else:
            latents = clean.float()
        if progress is not None:
            progress(i + 1, steps)
    return latents
