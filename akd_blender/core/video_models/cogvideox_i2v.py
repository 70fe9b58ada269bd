"""CogVideoX image-to-video (CogVideoX-5B-I2V) as a :class:`~.base.VideoPrior` that draws the character
it is shown.

Components of ``diffusers.CogVideoXImageToVideoPipeline``: the transformer takes 2·C latent channels,
the noisy latents [1,F',C,h,w] and, concatenated on the channel axis, the image latents: the first
frame encoded alone by the VAE (one latent frame, × ``scaling_factor``, or ÷ it where the VAE config says
``invert_scale_latents``) followed by zeros for the other F'−1 latent frames — the pipeline's own
``prepare_latents``. Schedule and parametrisation as :mod:`.cogvideox` (v-prediction). CogVideoX-5B-I2V
learns its positional embeddings for 480 × 720, so videos are resized to exactly the model's size;
49 frames at 8 fps.
"""

from __future__ import annotations

import torch

from .cogvideox import CogVideoXPrior
from .image_to_video import ImageToVideoPrior

__all__ = ["CogVideoXImageToVideoPrior"]


class CogVideoXImageToVideoPrior(ImageToVideoPrior, CogVideoXPrior):
    """CogVideoX-I2V through ``CogVideoXTransformer3DModel`` (in_channels 2·C) + ``AutoencoderKLCogVideoX`` + T5.

    Build with :func:`~.registry.load_prior` or from a ``diffusers.CogVideoXImageToVideoPipeline``.
    """

    fps = 8.0

    def __init__(self, pipe, name: str = "cogvideox-i2v", **kwargs) -> None:
        super().__init__(pipe, name, **kwargs)
        cfg = self.transformer.config
        self.frames = int(cfg.sample_frames)
        self.latent_channels = int(cfg.in_channels) // 2
        self.ofs = None if getattr(cfg, "ofs_embed_dim", None) is None else 2.0  # CogVideoX1.5's fixed ofs value

    def _latent_shape(self, frames: int, height: int, width: int) -> tuple[int, ...]:
        latent_frames = (frames - 1) // self.temporal + 1
        p_t = self.transformer.config.patch_size_t
        if p_t and latent_frames % p_t:
            latent_frames += p_t - latent_frames % p_t
        return (1, latent_frames, self.latent_channels, height // self.spatial, width // self.spatial)

    def _image_condition(self, frame: torch.Tensor, shape: tuple[int, ...]) -> dict:
        """frame [1,3,H,W] in [-1,1] → {"image_latents": [1,F',C,h,w]} for latents of ``shape``."""
        x = frame[:, :, None].to(self.device, self.dtype)  # [1,3,1,H,W]
        with self._on_device(self.vae):
            z = self.vae.encode(x).latent_dist.mode()  # [1,C,1,h,w]
        z = z / self.scaling if getattr(self.vae.config, "invert_scale_latents", False) else z * self.scaling
        image_latents = torch.zeros(shape, device=self.device, dtype=self.dtype)
        image_latents[:, :1] = z.permute(0, 2, 1, 3, 4).to(self.dtype)
        return {"image_latents": image_latents}

    def _run_transformer(
        self, latents: torch.Tensor, timesteps: torch.Tensor, embeds: torch.Tensor, image_latents: torch.Tensor | None = None
    ) -> torch.Tensor:
        hidden = torch.cat([latents, image_latents.expand(latents.shape[0], -1, -1, -1, -1).to(latents.dtype)], dim=2)
        ofs = None if self.ofs is None else latents.new_full((1,), self.ofs)
        return self._call_transformer(latents, hidden, timesteps, embeds, ofs=ofs)
