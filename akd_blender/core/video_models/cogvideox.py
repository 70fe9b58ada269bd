"""CogVideoX (2B / 5B, v-prediction) as a :class:`~.base.VideoPrior`.

Latent layout: [1,F',C,h,w] (the transformer's layout), ``F' = (F-1)/4 + 1``, ``h = H/8``, ``w = W/8``,
multiplied by the VAE's ``scaling_factor``. Videos are padded to ``4k+1`` frames and sizes rounded to
multiples of 16 (VAE ×8, patch ×2). Noise schedule: the pipeline scheduler's ``alphas_cumprod``
(CogVideoX's SNR-shifted DDIM schedule), ``z_t = √ᾱ z + √(1-ᾱ) ε``; the transformer predicts
``v = √ᾱ ε − √(1-ᾱ) z``, so ``x0 = √ᾱ z_t − √(1-ᾱ) v`` and ``ε̂ = √ᾱ v + √(1-ᾱ) z_t``.
"""

from __future__ import annotations

import torch

from .diffusers_base import DiffusersPrior
from .frames import fit_video

__all__ = ["CogVideoXPrior"]


class CogVideoXPrior(DiffusersPrior):
    """CogVideoX through diffusers' ``CogVideoXTransformer3DModel`` + ``AutoencoderKLCogVideoX`` + T5.

    Build with :func:`~.registry.load_prior` (a folder or hub id) or directly from a
    ``diffusers.CogVideoXPipeline`` (``CogVideoXPrior(pipe, name, device, dtype, memory, settings)``).
    """

    max_sequence_length = 226

    def __init__(self, pipe, name: str = "cogvideox", **kwargs) -> None:
        super().__init__(pipe, name, **kwargs)
        cfg = self.transformer.config
        self.spatial = pipe.vae_scale_factor_spatial
        self.temporal = pipe.vae_scale_factor_temporal
        self.frames = 49
        self.height = cfg.sample_height * self.spatial
        self.width = cfg.sample_width * self.spatial
        self.max_sequence_length = int(cfg.max_text_seq_length)
        self.scaling = float(self.vae.config.scaling_factor)
        self.prediction_type = getattr(pipe.scheduler.config, "prediction_type", "v_prediction")
        self.alphas_cumprod = pipe.scheduler.alphas_cumprod.double().cpu()

    def drawing_scheduler(self):
        """diffusers' ``DPMSolverMultistepScheduler`` (DPM-Solver++ 2M) from the pipeline scheduler's
        config (beta schedule, zero terminal SNR, v-prediction, timestep spacing) on the model's own
        ᾱ (:attr:`alphas_cumprod`, CogVideoX's SNR shift included; a zero last ᾱ held at 2⁻²⁴ as that
        scheduler holds it, so that the first step's σ is finite)."""
        import inspect

        from diffusers import DPMSolverMultistepScheduler

        accepted = inspect.signature(DPMSolverMultistepScheduler.__init__).parameters
        config = {k: v for k, v in self.pipe.scheduler.config.items() if k in accepted}
        config |= {"algorithm_type": "dpmsolver++", "solver_order": 2, "prediction_type": self.prediction_type}
        scheduler = DPMSolverMultistepScheduler(**config)
        alphas = self.alphas_cumprod.float().clamp(min=2**-24)
        scheduler.alphas_cumprod = alphas
        scheduler.alpha_t, scheduler.sigma_t = alphas.sqrt(), (1 - alphas).sqrt()
        scheduler.lambda_t = scheduler.alpha_t.log() - scheduler.sigma_t.log()
        scheduler.sigmas = ((1 - alphas) / alphas) ** 0.5
        return scheduler

    def _prepare_video(self, video: torch.Tensor) -> torch.Tensor:
        return fit_video(video, self.temporal, self.spatial * self.transformer.config.patch_size)

    def _encode(self, video: torch.Tensor) -> torch.Tensor:
        x = (video * 2 - 1).permute(1, 0, 2, 3)[None].to(self.device, self.dtype)  # [1,3,F,H,W] in [-1,1]
        with self._on_device(self.vae):
            z = self.vae.encode(x).latent_dist.mode()  # [1,C,F',h,w]
        z = z * self.scaling
        p_t = self.transformer.config.patch_size_t
        if p_t and z.shape[2] % p_t:
            z = torch.cat([z[:, :, :1].expand(-1, -1, p_t - z.shape[2] % p_t, -1, -1), z], dim=2)
        return z.permute(0, 2, 1, 3, 4)

    def _decode(self, latents: torch.Tensor) -> torch.Tensor:
        z = latents.permute(0, 2, 1, 3, 4) / self.scaling
        with self._on_device(self.vae):
            x = self.vae.decode(z.to(self.dtype)).sample  # [1,3,F,H,W]
        return ((x[0].permute(1, 0, 2, 3).float() + 1) / 2).clamp(0, 1)

    def _alpha(self, t: float) -> tuple[int, float]:
        index = int(round(t * (len(self.alphas_cumprod) - 1)))
        return index, float(self.alphas_cumprod[index])

    def _noise(self, latents: torch.Tensor, noise: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        index, ac = self._alpha(t)
        return ac**0.5 * latents + (1 - ac) ** 0.5 * noise, torch.tensor(index, dtype=torch.long)

    def _clean_and_noise(self, noisy: torch.Tensor, pred: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        _, ac = self._alpha(t)
        a, s = ac**0.5, (1 - ac) ** 0.5
        noisy, pred = noisy.float(), pred.float()
        if self.prediction_type == "v_prediction":
            return a * noisy - s * pred, a * pred + s * noisy
        return (noisy - s * pred) / a, pred  # epsilon prediction

    def _noise_variance(self, t: float) -> float:
        return 1.0 - self._alpha(t)[1]

    def _run_transformer(self, latents: torch.Tensor, timesteps: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
        return self._call_transformer(latents, latents, timesteps, embeds)

    def _call_transformer(
        self, latents: torch.Tensor, hidden: torch.Tensor, timesteps: torch.Tensor, embeds: torch.Tensor, **extra
    ) -> torch.Tensor:
        """The transformer on ``hidden`` (``latents`` [B,F,C,h,w], with any channels concatenated), rotary
        positions from ``latents``' shape where the model uses them; ``extra`` keywords go to the model."""
        rotary = None
        if self.transformer.config.use_rotary_positional_embeddings:
            _, f, _, h, w = latents.shape
            rotary = self.pipe._prepare_rotary_positional_embeddings(h * self.spatial, w * self.spatial, f, self.device)
        return self.transformer(
            hidden_states=hidden,
            encoder_hidden_states=embeds.to(self.dtype),
            timestep=timesteps,
            image_rotary_emb=rotary,
            return_dict=False,
            **extra,
        )[0]
