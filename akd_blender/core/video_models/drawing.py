"""Drawing a video with a prior's own SDS hooks: deterministic DDIM (η = 0), written once for every
parametrisation.

At each of ``steps`` timesteps ``t_i = 1 − i/steps`` (fractions of the schedule, 1 = pure noise) the
prior predicts with classifier-free guidance, :meth:`~.base.SDSPrior._clean_and_noise` gives the
clean estimate ``x0`` and noise estimate ``ε̂``, and the forward process of the next timestep
(:meth:`~.base.SDSPrior._noise`) re-noises ``x0`` with ``ε̂``; the last step returns ``x0``. For a
v-prediction DDPM schedule (CogVideoX) this is DDIM; for flow matching (Wan) it is the Euler step of
the flow ``z_t = (1−σ) z + σ ε``.

Given clean latents and a start ``t_0 < 1`` the same steps redraw them (SDEdit): the latents are
noised to ``t_0`` and denoised from there over ``t_i = t_0 (1 − i/steps)``, so the result keeps what
the noise at ``t_0`` did not drown (the character's place and pose at a low ``t_0``, little more than
its colours near 1).

:func:`draw_with_scheduler` runs the same drawing through a diffusers multistep scheduler
(DPM-Solver++ 2M for CogVideoX, :meth:`~.base.SDSPrior.drawing_scheduler`): a second-order solver
whose authors report converged guided samples in 15 to 20 steps where DDIM needs 50 or more (Lu et al.,
"DPM-Solver++", 2022).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .protocol import DenoisingHooks, TextEmbedding, cfg_combine

__all__ = ["draw_latents", "draw_with_scheduler"]


@torch.no_grad()
def draw_latents(
    prior: DenoisingHooks,
    text: TextEmbedding,
    shape: tuple[int, ...],
    generator: torch.Generator | None = None,
    guidance: float = 6.0,
    steps: int = 30,
    progress: Callable[[int, int], None] | None = None,
    start: torch.Tensor | None = None,
    t_start: float = 1.0,
) -> torch.Tensor:
    """Latents of ``shape`` (the prior's layout, float32 on ``prior.device``) drawn for ``text`` in
    ``steps`` DDIM steps with CFG scale ``guidance`` (1 or no negative embedding: no unconditional
    pass). The starting noise comes from ``generator`` (CPU or the prior's device; deterministic for a
    seed). ``progress(done, total)`` after each step; an exception it raises stops the drawing.
    ``start``: clean latents of ``shape`` to redraw from ``t_start`` in (0, 1] (SDEdit; None: pure
    noise, which ``t_start`` 1 is too)."""
    if steps < 1:
        raise ValueError(f"draw_latents: steps must be at least 1 (got {steps})")
    if not 0.0 < t_start <= 1.0:
        raise ValueError(f"draw_latents: t_start must be in (0, 1] (got {t_start})")
    device = generator.device if generator is not None else torch.device("cpu")
    noise = torch.randn(shape, generator=generator, device=device).to(prior.device, torch.float32)
    use_cfg = guidance != 1.0 and text.uncond is not None
    times = [t_start * (1.0 - i / steps) for i in range(steps)]
    clean = torch.zeros_like(noise) if start is None else start.detach().to(prior.device, torch.float32).reshape(shape)
    latents, timestep = prior._noise(clean, noise, times[0])
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


@torch.no_grad()
def draw_with_scheduler(
    prior: DenoisingHooks,
    scheduler,
    text: TextEmbedding,
    shape: tuple[int, ...],
    generator: torch.Generator | None = None,
    guidance: float = 6.0,
    steps: int = 30,
    progress: Callable[[int, int], None] | None = None,
    start: torch.Tensor | None = None,
    t_start: float = 1.0,
) -> torch.Tensor:
    """:func:`draw_latents` stepped by a diffusers multistep ``scheduler`` (e.g.
    ``DPMSolverMultistepScheduler``, DPM-Solver++ 2M, in the model's own parametrisation and
    timesteps) instead of DDIM: ``steps`` model evaluations (CFG ``guidance``), each through the
    prior's ``_predict`` at the scheduler's timestep. ``start`` / ``t_start`` redraw clean latents
    (SDEdit): the scheduler's timesteps are laid out for ``round(steps / t_start)`` steps, the first
    ones skipped so that ``steps`` remain, and ``start`` is noised to the first remaining one
    (``scheduler.add_noise``). Same arguments, noise draw and result (float32 latents of ``shape``)
    as :func:`draw_latents`."""
    if steps < 1:
        raise ValueError(f"draw_with_scheduler: steps must be at least 1 (got {steps})")
    if not 0.0 < t_start <= 1.0:
        raise ValueError(f"draw_with_scheduler: t_start must be in (0, 1] (got {t_start})")
    device = generator.device if generator is not None else torch.device("cpu")
    noise = torch.randn(shape, generator=generator, device=device).to(prior.device, torch.float32)
    use_cfg = guidance != 1.0 and text.uncond is not None
    laid_out = steps if start is None else max(steps, round(steps / t_start))
    scheduler.set_timesteps(laid_out, device=prior.device)
    skip = laid_out - steps
    timesteps = scheduler.timesteps[skip:]
    if start is None:
        latents = noise * float(getattr(scheduler, "init_noise_sigma", 1.0))
    else:
        scheduler.set_begin_index(skip)
        clean = start.detach().to(prior.device, torch.float32).reshape(shape)
        latents = scheduler.add_noise(clean, noise, timesteps[:1]).float()
    for i, timestep in enumerate(timesteps):
        pred = cfg_combine(prior._predict(latents, timestep, text, use_cfg), guidance)
        latents = scheduler.step(pred.float(), timestep, latents, return_dict=False)[0].float()
        if progress is not None:
            progress(i + 1, steps)
    return latents
