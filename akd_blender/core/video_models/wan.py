"""Wan2.1 T2V (1.3B / 14B, flow matching) as a :class:`~.base.VideoPrior`.

Latent layout: [1,C,F',h,w], ``F' = (F-1)/4 + 1``, ``h = H/8``, ``w = W/8``, normalised with the VAE's
``latents_mean`` / ``latents_std``. Videos are padded to ``4k+1`` frames and sizes rounded to
multiples of 16. Flow matching: ``z_t = (1-σ) z + σ ε`` with ``σ`` the timestep fraction after the
scheduler's shift, model timestep ``1000 σ``; the transformer predicts ``v = ε − z``, so
``x0 = z_t − σ v`` and ``ε̂ = z_t + (1-σ) v``.
"""

from __future__ import annotations

import torch

from .diffusers_base import DiffusersPrior
from .frames import fit_video

__all__ = ["WanPrior"]


class WanPrior(DiffusersPrior):
    """Wan2.1 through diffusers' ``WanTransformer3DModel`` + ``AutoencoderKLWan`` + UMT5.

    Build with :func:`~.registry.load_prior` or from a ``diffusers.WanPipeline``.
    """

    max_sequence_length = 512

    def __init__(self, pipe, name: str = "wan", **kwargs) -> None:
        super().__init__(pipe, name, **kwargs)
        self.spatial = pipe.vae_scale_factor_spatial
        self.temporal = pipe.vae_scale_factor_temporal
        self.frames, self.height, self.width = 81, 480, 832
        sched = pipe.scheduler.config
        self.shift = float(getattr(sched, "flow_shift", None) or getattr(sched, "shift", None) or 3.0)
        self.num_train_timesteps = int(getattr(sched, "num_train_timesteps", 1000))
        z_dim = self.vae.config.z_dim
        self.latents_mean = torch.tensor(self.vae.config.latents_mean).view(1, z_dim, 1, 1, 1)
        self.latents_std = torch.tensor(self.vae.config.latents_std).view(1, z_dim, 1, 1, 1)

    def _prepare_video(self, video: torch.Tensor) -> torch.Tensor:
        patch = self.transformer.config.patch_size[-1]
        return fit_video(video, self.temporal, self.spatial * patch)

    def _encode(self, video: torch.Tensor) -> torch.Tensor:
        x = (video * 2 - 1).permute(1, 0, 2, 3)[None].to(self.device, self.dtype)  # [1,3,F,H,W] in [-1,1]
        with self._on_device(self.vae):
            z = self.vae.encode(x).latent_dist.mode()  # [1,C,F',h,w]
        mean, std = self.latents_mean.to(z.device, z.dtype), self.latents_std.to(z.device, z.dtype)
        return (z - mean) / std

    def _decode(self, latents: torch.Tensor) -> torch.Tensor:
        mean, std = self.latents_mean.to(latents.device), self.latents_std.to(latents.device)
        z = latents.float() * std + mean
        with self._on_device(self.vae):
            x = self.vae.decode(z.to(self.dtype)).sample  # [1,3,F,H,W]
        return ((x[0].permute(1, 0, 2, 3).float() + 1) / 2).clamp(0, 1)

    def _sigma(self, t: float) -> float:
        return self.shift * t / (1 + (self.shift - 1) * t)

    def _noise(self, latents: torch.Tensor, noise: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        s = self._sigma(t)
        return (1 - s) * latents + s * noise, torch.tensor(s * self.num_train_timesteps, dtype=torch.float32)

    def _clean_and_noise(self, noisy: torch.Tensor, pred: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        s = self._sigma(t)
        noisy, pred = noisy.float(), pred.float()
        return noisy - s * pred, noisy + (1 - s) * pred

    def _noise_variance(self, t: float) -> float:
        return self._sigma(t) ** 2

    def _run_transformer(self, latents: torch.Tensor, timesteps: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
        return self.transformer(
            hidden_states=latents,
            timestep=timesteps,
            encoder_hidden_states=embeds.to(self.dtype),
            return_dict=False,
        )[0]
