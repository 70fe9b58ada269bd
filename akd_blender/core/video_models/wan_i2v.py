"""Wan image-to-video as a :class:`~.base.VideoPrior` that draws the character it is shown: Wan2.1-I2V
(14B-480P) and Wan2.2-TI2V-5B.

Two conditionings, both the pipelines' own (``diffusers.WanImageToVideoPipeline.prepare_latents``):

- Wan2.1-I2V (transformer ``in_channels`` = 2·C + 4, ``image_dim`` set): the video
  ``[first frame, F−1 grey frames]`` is VAE-encoded and normalised (C channels), preceded by a
  4-channel mask that is 1 on the first latent frame; both are concatenated to the noisy latents on
  the channel axis. The CLIP image encoder's second-to-last hidden states of the first frame are the
  image tokens (``encoder_hidden_states_image``). 81 frames, 480 × 832, 16 fps.
- Wan2.2-TI2V (pipeline config ``expand_timesteps``; VAE ×16 spatial, 48 channels): the first latent
  frame of the noisy latents is replaced by the first frame's latents and its tokens get timestep 0
  (per-token timesteps); the prediction there is set to the velocity whose clean sample is that
  latent frame, so the SDS gradient leaves it alone. 121 frames, 704 × 1280, 24 fps.

Latent layout, schedule and flow parametrisation as :mod:`.wan`.
"""

from __future__ import annotations

import torch

from ..errors import ModelNotAvailable
from .image_to_video import ImageToVideoPrior
from .wan import WanPrior

__all__ = ["WanImageToVideoPrior"]


class WanImageToVideoPrior(ImageToVideoPrior, WanPrior):
    """Wan I2V / TI2V through ``WanTransformer3DModel`` + ``AutoencoderKLWan`` + UMT5 (+ CLIP for Wan2.1-I2V).

    Build with :func:`~.registry.load_prior` or from a ``diffusers.WanImageToVideoPipeline`` (or a
    ``WanPipeline`` whose config has ``expand_timesteps``, as Wan2.2-TI2V-5B ships).
    """

    def __init__(self, pipe, name: str = "wan-i2v", **kwargs) -> None:
        super().__init__(pipe, name, **kwargs)
        self.expand_timesteps = bool(getattr(pipe.config, "expand_timesteps", False))
        if self.expand_timesteps:
            self.frames, self.height, self.width, self.fps = 121, 704, 1280, 24.0
        else:
            self.frames, self.height, self.width, self.fps = 81, 480, 832, 16.0
        self.image_tokens = self.transformer.config.image_dim is not None
        encoder = getattr(pipe, "image_encoder", None)
        if self.image_tokens and (encoder is None or getattr(pipe, "image_processor", None) is None):
            raise ModelNotAvailable(f"{name}: the transformer takes CLIP image tokens but the pipeline has no image encoder")
        if encoder is not None:
            encoder.requires_grad_(False).eval()
        if getattr(pipe, "transformer_2", None) is not None:
            raise ModelNotAvailable(f"{name}: two-expert Wan2.2 models (transformer_2) are not supported; use Wan2.2-TI2V-5B")

    def _encode_prompt(self, prompt: str, negative_prompt: str) -> tuple[torch.Tensor, torch.Tensor]:
        """(cond, uncond) [1,512,D] as ``WanPipeline.encode_prompt`` computes them (the image-to-video
        pipeline's copy of the prompt cleaning needs the optional ``ftfy`` package; the text-to-video
        one uses it only where installed)."""
        from diffusers import WanPipeline

        def embed(text: str) -> torch.Tensor:
            return WanPipeline._get_t5_prompt_embeds(self.pipe, text, 1, self.max_sequence_length, self.device, self.dtype)

        return embed(prompt), embed(negative_prompt or "")

    @property
    def image_encoder(self):
        return getattr(self.pipe, "image_encoder", None)

    def _latent_shape(self, frames: int, height: int, width: int) -> tuple[int, ...]:
        z_dim = self.vae.config.z_dim
        return (1, z_dim, (frames - 1) // self.temporal + 1, height // self.spatial, width // self.spatial)

    def _normalise(self, z: torch.Tensor) -> torch.Tensor:
        mean, std = self.latents_mean.to(z.device, z.dtype), self.latents_std.to(z.device, z.dtype)
        return (z - mean) / std

    def _image_condition(self, frame: torch.Tensor, shape: tuple[int, ...]) -> dict:
        """frame [1,3,H,W] in [-1,1] → keyword arguments of :meth:`_run_transformer` for latents of ``shape``."""
        x = frame[:, :, None].to(self.device, self.dtype)  # [1,3,1,H,W]
        if self.expand_timesteps:
            with self._on_device(self.vae):
                z = self.vae.encode(x).latent_dist.mode()  # [1,C,1,h,w]
            return {"first_latents": self._normalise(z.float()).to(self.dtype)}
        frames = (shape[2] - 1) * self.temporal + 1
        video = torch.cat([x, x.new_zeros(1, 3, frames - 1, *x.shape[-2:])], dim=2)  # the first frame, then grey
        with self._on_device(self.vae):
            z = self.vae.encode(video).latent_dist.mode()  # [1,C,F',h,w]
        mask = torch.zeros(1, self.temporal, *z.shape[2:], device=z.device, dtype=z.dtype)
        mask[:, :, 0] = 1
        condition = {"condition": torch.cat([mask, self._normalise(z.float()).to(z.dtype)], dim=1)}
        if self.image_tokens:
            condition["image_embeds"] = self._clip_tokens((frame[0] + 1) / 2)
        return condition

    def _clip_tokens(self, frame01: torch.Tensor) -> torch.Tensor:
        """frame [3,H,W] in [0,1] → the CLIP image encoder's second-to-last hidden states [1,T,D]."""
        pixels = self.pipe.image_processor(images=frame01.float().cpu(), do_rescale=False, return_tensors="pt").pixel_values
        encoder = self.image_encoder
        encoder.to(self.device)
        try:
            out = encoder(pixel_values=pixels.to(self.device, encoder.dtype), output_hidden_states=True)
        finally:
            if self.memory.free_text_encoder and self.device.type != "cpu":
                encoder.to("cpu")
        return out.hidden_states[-2].to(self.device, self.dtype)

    def _run_transformer(
        self,
        latents: torch.Tensor,
        timesteps: torch.Tensor,
        embeds: torch.Tensor,
        condition: torch.Tensor | None = None,
        image_embeds: torch.Tensor | None = None,
        first_latents: torch.Tensor | None = None,
    ) -> torch.Tensor:
        batch = latents.shape[0]
        if first_latents is not None:  # Wan2.2-TI2V: the first latent frame is given, at timestep 0
            hidden = latents.clone()
            hidden[:, :, :1] = first_latents.to(latents.dtype)
            _, p_h, p_w = self.transformer.config.patch_size
            _, _, f, h, w = latents.shape
            mask = torch.ones(f, h // p_h, w // p_w, device=latents.device)
            mask[0] = 0
            steps = mask.flatten()[None] * timesteps.float().reshape(-1, 1)  # [B, tokens]
            pred = self.transformer(
                hidden_states=hidden, timestep=steps, encoder_hidden_states=embeds.to(self.dtype), return_dict=False
            )[0]
            sigma = (timesteps.float() / self.num_train_timesteps).clamp_min(1e-4).view(-1, 1, 1, 1, 1)
            pred = pred.clone()
            pred[:, :, :1] = ((latents[:, :, :1].float() - first_latents.float()) / sigma).to(pred.dtype)  # x0 = the given frame
            return pred
        hidden = torch.cat([latents, condition.expand(batch, -1, -1, -1, -1).to(latents.dtype)], dim=1)
        tokens = None if image_embeds is None else image_embeds.expand(batch, -1, -1).to(self.dtype)
        return self.transformer(
            hidden_states=hidden,
            timestep=timesteps,
            encoder_hidden_states=embeds.to(self.dtype),
            encoder_hidden_states_image=tokens,
            return_dict=False,
        )[0]
