"""The VideoPrior protocol and the SDS step shared by every diffusers adapter.

Units and shapes used throughout:
    video: float [F,3,H,W], RGB in [0, 1], differentiable (the renderer's output).
    latents: the model's own latent layout (documented by each adapter), already scaled/normalised
        the way the model's transformer expects them.
    timesteps: ``t`` is a fraction in (0, 1) of the model's noise schedule (0 clean, 1 pure noise);
        each adapter maps it to its own discrete timestep / flow sigma.

The SDS step ("video in, loss dict out", threestudio-style, the CFG combine written once):

1. encode the video to latents ``z`` (with gradient, or without in ``target_space="pixel"``);
2. draw ``t`` (annealed range) and noise ``eps``; ``z_t`` = the model's forward process;
3. predict with classifier-free guidance ``pred = uncond + s (cond - uncond)``;
4. convert to the clean estimate ``x0`` and noise estimate ``eps_hat``;
5. ``grad = w(t) (eps_hat - eps)`` (``mode="score"``, classic SDS) or ``grad = z - x0``
   (``mode="target"``, regression onto the model's predicted clean sample);
6. ``target = (z - grad).detach()`` (nan_to_num, clipped) and ``loss = 0.5 mean((z - target)^2)``,
   whose gradient w.r.t. ``z`` is ``grad / numel``.
   With ``target_space="pixel"`` (target mode only) ``x0`` is decoded and the loss is a multi-scale
   image MSE between the video and the decoded target, so the VAE encoder needs no backward pass.

The same hooks rank videos by a prompt (:meth:`SDSPrior.prompt_scores`, a diffusion classifier): how
much better the prompt's branch predicts the noise of each noised video than the unconditional one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import replace

import torch
import torch.nn.functional as F

from ..render.image_losses import crop_video, multiscale_mse
from ..settings import SDSSettings
from .capabilities import Capabilities
from .frames import decode_crop
from .protocol import TextEmbedding, cfg_combine, sample_timestep, sds_target_loss

__all__ = ["SDSPrior", "PROMPT_SCORE_TIMESTEPS"]

PROMPT_SCORE_TIMESTEPS: tuple[float, ...] = (0.3, 0.5, 0.7, 0.9)
"""Timestep fractions at which :meth:`SDSPrior.prompt_scores` compares the two branches by default
(near 0 the text hardly changes the prediction; the middle and upper range tell motions apart)."""


class SDSPrior(ABC):
    """The SDS step for priors built from a VAE + a denoiser; adapters fill in the model hooks.

    Hooks (adapter-specific, shapes in the adapter's latent layout):
        _encode(video01 [F,3,H,W]) -> latents z      (gradient flows when grad is enabled)
        _decode(z) -> video01 [F,3,H',W']            (no gradient; pixel target space only)
        _noise(z, eps, t) -> (z_t, model_timestep [])
        _predict(z_t [1,...], timestep, text, cfg) -> prediction [1 or 2,...]
        _clean_and_noise(z_t, pred, t) -> (x0, eps_hat)
        _noise_variance(t) -> float   (w(t) for mode "score")
        _prepare_video(video) -> video01 at a size the model accepts
        _predict_pair(z_t [B,...], timestep, text) -> (uncond [B,...], cond [B,...])   (optional: the
            default runs ``_predict`` with CFG on one batch element at a time; an adapter whose model
            takes a batch overrides it)
    """

    name: str = "prior"
    frames: int = 49
    height: int = 480
    width: int = 720
    #: the frame rate of the model's clips (frames per second); None: the model states none
    fps: float | None = None
    #: the default SDS settings (used when a query passes none; the distillation loop always passes its own)
    settings: SDSSettings
    #: latent cells per pixel side (the VAE's spatial factor); with ``crop_context`` set, a pixel-space
    #: target is decoded only around the caller's ``region`` (the decode dominates a query at full size).
    spatial: int = 1
    #: (pad, margin) in latent cells around the region: ``pad`` kept in the loss (limbs of the target
    #: may reach past the render's box), ``margin`` decoded and dropped (the decoder's receptive field
    #: at the crop's edge). None = always decode the whole frame.
    crop_context: tuple[int, int] | None = None
    #: how drawings and redraws step: "dpmsolver++" (the adapter's :meth:`drawing_scheduler`, DPM-Solver++ 2M,
    #: where it has one; DDIM otherwise) or "ddim" (:func:`~.drawing.draw_latents` over the hooks)
    draw_solver: str = "dpmsolver++"

    @abstractmethod
    def _encode(self, video: torch.Tensor) -> torch.Tensor:
        """Adapter hook (see the class docstring)."""

    @abstractmethod
    def _decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Adapter hook (see the class docstring)."""

    @abstractmethod
    def _noise(self, latents: torch.Tensor, noise: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Adapter hook (see the class docstring)."""

    @abstractmethod
    def _predict(self, noisy: torch.Tensor, timestep: torch.Tensor, text: TextEmbedding, cfg: bool) -> torch.Tensor:
        """Adapter hook (see the class docstring)."""

    @abstractmethod
    def _clean_and_noise(self, noisy: torch.Tensor, pred: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Adapter hook (see the class docstring)."""

    @abstractmethod
    def _noise_variance(self, t: float) -> float:
        """Adapter hook (see the class docstring)."""

    @property
    def capabilities(self) -> Capabilities:
        """What every SDS prior can do: redraw (:meth:`redraw`), rank (:meth:`prompt_scores`), take
        per-query settings; its ``frames``, ``fps``, ``height``, ``width`` as they stand. It does not
        draw from noise (adapters that do override this)."""
        return Capabilities(
            redraws=True,
            ranks=True,
            takes_settings=True,
            frames=self.frames,
            fps=self.fps,
            height=self.height,
            width=self.width,
        )

    def _prepare_video(self, video: torch.Tensor) -> torch.Tensor:
        return video

    def drawing_scheduler(self):
        """A fresh diffusers multistep scheduler in the model's own parametrisation and timesteps for
        drawings and redraws (:func:`~.drawing.draw_with_scheduler`), or None: DDIM over the hooks."""
        return None

    def _draw(
        self,
        text: TextEmbedding,
        shape: tuple[int, ...],
        generator: torch.Generator | None,
        guidance: float,
        steps: int,
        progress: Callable[[int, int], None] | None,
        start: torch.Tensor | None = None,
        t_start: float = 1.0,
    ) -> torch.Tensor:
        """Latents of ``shape`` drawn (or ``start`` redrawn from ``t_start``) in ``steps`` model
        evaluations with :attr:`draw_solver`: :func:`~.drawing.draw_with_scheduler` with
        :meth:`drawing_scheduler`, or :func:`~.drawing.draw_latents` (DDIM) where there is none."""
        from .drawing import draw_latents, draw_with_scheduler

        scheduler = None if self.draw_solver == "ddim" else self.drawing_scheduler()
        if scheduler is None:
            return draw_latents(self, text, shape, generator, guidance, steps, progress, start=start, t_start=t_start)
        return draw_with_scheduler(
            self, scheduler, text, shape, generator, guidance, steps, progress, start=start, t_start=t_start
        )

    def _predict_pair(
        self, noisy: torch.Tensor, timestep: torch.Tensor, text: TextEmbedding
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Both branches' predictions for a batch of noised latents ``noisy`` [B,...] (each element in
        the layout of ``_encode``'s [1,...]) → (unconditional [B,...], conditional [B,...])."""
        pairs = [self._predict(noisy[i : i + 1], timestep, text, True).chunk(2) for i in range(noisy.shape[0])]
        return torch.cat([u for u, _ in pairs]), torch.cat([c for _, c in pairs])

    @torch.no_grad()
    def prompt_scores(
        self,
        videos: torch.Tensor,
        text: TextEmbedding,
        first_frame: torch.Tensor | None = None,
        t_values: tuple[float, ...] = PROMPT_SCORE_TIMESTEPS,
        draws: int = 2,
        generator: torch.Generator | None = None,
        batch: int = 32,
    ) -> torch.Tensor:
        """How much the prompt explains each of ``videos`` [S,F,3,H,W] (RGB in [0,1], one size): the
        diffusion-classifier score [S] (float32, on the CPU; higher = explained better).

        Each video is encoded like an SDS query's, noised with ``draws`` noise draws (one per draw,
        shared by all S videos) at each timestep fraction of ``t_values``, and both branches predict
        the noise: ``score = mean over draws and timesteps of (‖ε − ε̂_uncond‖² − ‖ε − ε̂_cond‖²)``,
        the squared errors averaged over the latent's elements. Needs ``text.uncond`` (the negative /
        empty prompt); ``first_frame`` [3,H,W] in [0,1] replaces ``text.first_frame`` for a prior that
        draws a given character. ``generator`` draws the noise (deterministic for a seed: the same
        seed gives the same scores, and videos scored in separate calls with equally seeded
        generators share their noise); ``batch``: videos per model call. No gradient."""
        if videos.ndim != 5 or videos.shape[2] != 3:
            raise ValueError(f"prompt_scores expects videos [S,F,3,H,W], got {tuple(videos.shape)}")
        if text.uncond is None:
            raise ValueError(f"{self.name}: prompt_scores needs the unconditional embedding (text.uncond)")
        if not t_values or draws < 1 or batch < 1:
            raise ValueError("prompt_scores needs at least one timestep, one draw and a batch of at least 1")
        if first_frame is not None:
            text = replace(text, first_frame=first_frame)
        latents = torch.cat([self._encode(self._prepare_video(v)) for v in videos])  # [S,...]
        device = generator.device if generator is not None else "cpu"
        scores = torch.zeros(latents.shape[0], dtype=torch.float64)
        for _ in range(draws):
            noise = torch.randn((1, *latents.shape[1:]), generator=generator, device=device).to(latents.device, latents.dtype)
            for t in t_values:
                for lo in range(0, latents.shape[0], batch):
                    z = latents[lo : lo + batch]
                    eps = noise.expand_as(z)
                    noisy, timestep = self._noise(z, eps, float(t))
                    uncond, cond = self._predict_pair(noisy, timestep, text)
                    errors = []
                    for pred in (uncond, cond):
                        eps_hat = self._clean_and_noise(noisy, pred, float(t))[1]
                        errors.append((eps_hat.float() - eps.float()).pow(2).flatten(1).mean(1))
                    scores[lo : lo + batch] += (errors[0] - errors[1]).double().cpu()
        return (scores / (draws * len(t_values))).float()

    @torch.no_grad()
    def redraw(
        self,
        video: torch.Tensor,
        text: TextEmbedding,
        t: float,
        generator: torch.Generator | None = None,
        guidance: float = 6.0,
        steps: int = 30,
        progress: Callable[[int, int], None] | None = None,
    ) -> torch.Tensor:
        """``video`` [F,3,H,W] in [0,1] redrawn for ``text`` from noise level ``t`` in (0, 1] (SDEdit):
        encoded, noised to ``t`` and denoised over the prior's own hooks (:meth:`_draw`: DPM-Solver++
        where the adapter has a scheduler, else DDIM) in ``max(1, round(steps · t))`` steps with CFG ``guidance``.
        Returns [F,3,H,W] in [0,1] at the input's size and frame count (no gradient). A low ``t``
        keeps the video's pose and place and changes details; near 1 it is a new drawing of the
        same scene. Deterministic for a seeded ``generator``."""
        if video.ndim != 4 or video.shape[1] != 3:
            raise ValueError(f"redraw expects video [F,3,H,W], got {tuple(video.shape)}")
        latents = self._encode(self._prepare_video(video.float()))
        count = max(1, round(steps * t))
        drawn = self._draw(text, tuple(latents.shape), generator, guidance, count, progress, start=latents, t_start=t)
        out = self._decode(drawn.to(latents.dtype)).float().clamp(0, 1)[: video.shape[0]]
        out = torch.nan_to_num(out).to(video.device)
        if out.shape[-2:] != video.shape[-2:]:
            out = F.interpolate(out, size=video.shape[-2:], mode="bilinear", align_corners=False, antialias=True)
        return out

    def configure(self, **changes) -> None:
        """Change the default SDS settings (``cfg_scale``, ``mode``, ...) of queries that pass none."""
        self.settings = replace(self.settings, **changes)

    def sds_loss(
        self,
        video: torch.Tensor,
        text: TextEmbedding,
        step: int,
        total_steps: int,
        generator: torch.Generator | None = None,
        region: tuple[int, int, int, int] | None = None,
        settings: SDSSettings | None = None,
    ) -> dict[str, torch.Tensor]:
        """See :class:`VideoPrior`. Diagnostics: "t" (fraction), "grad_norm" (RMS of the latent gradient);
        in pixel target space also "target_video" [F,3,h,w] (the detached decoded target at the input
        size) and "target_box" [4] (top, left, bottom, right: where ``target_video`` lies in the input;
        the whole frame unless the decode was cropped to ``region``)."""
        if video.ndim != 4 or video.shape[1] != 3:
            raise ValueError(f"sds_loss expects video [F,3,H,W], got {tuple(video.shape)}")
        s = settings if settings is not None else self.settings
        pixel = s.mode == "target" and s.target_space == "pixel"
        original, video = video, self._prepare_video(video)
        # 1. Latents of the rendered video (no encoder graph needed when the loss is in pixel space).
        with torch.set_grad_enabled(torch.is_grad_enabled() and not pixel):
            latents = self._encode(video)
        # 2. Timestep and noise, from the caller's generator (deterministic for a seed).
        t = sample_timestep(s, step, total_steps, generator)
        noise = torch.randn(latents.shape, generator=generator, device=generator.device if generator else "cpu")
        noise = noise.to(latents.device, latents.dtype)
        with torch.no_grad():
            noisy, timestep = self._noise(latents.detach(), noise, t)
            use_cfg = s.cfg_scale != 1.0 and text.uncond is not None
            # 3. Prediction with classifier-free guidance (the combine is written once: cfg_combine).
            pred = cfg_combine(self._predict(noisy, timestep, text, use_cfg), s.cfg_scale)
            # 4. Clean-sample and noise estimates in the model's own parametrisation.
            x0, eps_hat = self._clean_and_noise(noisy, pred, t)
            # 5. The gradient on the latents.
            if s.mode == "score":
                w = self._noise_variance(t) if s.weighting == "sds" else 1.0
                grad = w * (eps_hat.float() - noise.float())
            else:
                grad = latents.detach().float() - x0.float()
        out = {"t": torch.tensor(t), "grad_norm": grad.float().pow(2).mean().sqrt()}
        if pixel:
            crop = None
            if region is not None and self.crop_context is not None:
                crop = decode_crop(region, original.shape[-2:], video.shape[-2:], x0.shape[-2:], self.spatial, *self.crop_context)
            with torch.no_grad():
                if crop is None:
                    box = (0, 0, *original.shape[-2:])
                    target_video = self._decode(x0.to(latents.dtype))
                else:
                    (y0, x0_, y1, x1), inner, box = crop
                    target_video = self._decode(x0[..., y0:y1, x0_:x1].to(latents.dtype))
                    target_video = target_video[..., inner[0] : inner[2], inner[1] : inner[3]]
                target_video = torch.nan_to_num(target_video.float().clamp(0, 1)).to(original.device)[: original.shape[0]]
                size = (box[2] - box[0], box[3] - box[1])
                if target_video.shape[-2:] != size:
                    target_video = F.interpolate(target_video, size=size, mode="bilinear", align_corners=False)
            out["loss"] = multiscale_mse(crop_video(original.float(), box), target_video)
            out["target_video"] = target_video  # [F,3,h,w] detached: reusable for cheap steps (DistillConfig.target_reuse)
            out["target_box"] = torch.tensor(box)
            return out
        # 6. Surrogate loss whose latent gradient is `grad`.
        out["loss"] = sds_target_loss(latents, grad, s.grad_clip)
        return out
