"""What every image-to-video adapter shares: the first frame as the condition, the model's own clip
length and size, drawing (``sample``) through the SDS hooks.

An image-to-video prior is shown the character in its start pose (``TextEmbedding.first_frame``
[3,H,W] in [0,1], the project's render of the rig on the checkerboard ground; the distillation sets it)
and draws or scores *that* character moving. Videos are resampled in time to the model's clip length
(``frames`` at ``fps``: a clip of any length at any fps covers the same seconds the model draws) and
resized to its size (``height`` × ``width``); pixel targets are resampled back to the caller's frame
count. The first frame's condition (VAE latents, and for Wan2.1 the CLIP image tokens) is computed
once per first frame and latent shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch
import torch.nn.functional as F

from ..errors import InputError
from .capabilities import Capabilities
from .frames import resample_frames
from .protocol import TextEmbedding

__all__ = ["ImageToVideoPrior"]


class ImageToVideoPrior:
    """Mixin placed before a :class:`~.diffusers_base.DiffusersPrior` adapter in the bases.

    The adapter provides ``_latent_shape(frames, height, width)`` (the latent tensor of a video of
    that size) and ``_image_condition(frame [1,3,H,W] in [-1,1]) -> dict`` (keyword arguments of its
    ``_run_transformer`` for latents of the cached shape, see :meth:`_conditioning`).

    Attributes:
        image_conditioned: True (the distillation renders the first frame and asks the prior for it).
        frames, height, width, fps: the clip the model draws (its published defaults; lower them for a
            smaller memory footprint).
    """

    image_conditioned = True
    #: queries resample a clip of any frame count to ``frames`` in time (:meth:`_prepare_video`)
    resamples_frames = True
    fps: float = 8.0
    #: the drawing's CFG scale and steps (model evaluations, :attr:`~.base.SDSPrior.draw_solver`) when the caller gives none
    draw_guidance: float = 6.0
    draw_steps: int = 20

    @property
    def capabilities(self) -> Capabilities:
        """The adapter's SDS capabilities (redraws, ranks, takes settings) plus: it draws (:meth:`sample`)
        the character it is shown (image-conditioned), in clips of ``frames`` at ``fps``, ``height`` ×
        ``width``; its queries resample a clip of any length to ``frames``. ``encode_text`` accepts the character's kind but does not read it."""
        return replace(super().capabilities, draws=True, image_conditioned=True, resamples_frames=True, fps=self.fps)

    def encode_text(self, prompt: str, negative_prompt: str = "", kind: str | None = None) -> TextEmbedding:
        """See :meth:`~.diffusers_base.DiffusersPrior.encode_text`; ``kind`` (the character's kind) is
        accepted like the embedded teacher's and unused: the first frame shows the character."""
        return super().encode_text(prompt, negative_prompt)

    # First frame -------------------------------------------------------------------------------
    def first_frame_input(self, text: TextEmbedding, first_frame: torch.Tensor | None = None) -> torch.Tensor:
        """The first frame ``first_frame`` (default ``text.first_frame``; [3,H,W] or [4,H,W] in [0,1])
        at the model's size: [3,height,width] float32 on the prior's device. InputError when there is none."""
        frame = first_frame if first_frame is not None else text.first_frame
        if frame is None:
            raise InputError(
                f"{self.name} is an image-to-video model: it needs the first frame (the character's render, text.first_frame)"
            )
        if frame.ndim != 3 or frame.shape[0] not in (3, 4):
            raise InputError(f"{self.name}: the first frame must be [3,H,W] in [0,1], got {tuple(frame.shape)}")
        frame = frame[:3].detach().to(self.device, torch.float32).clamp(0, 1)
        if frame.shape[-2:] != (self.height, self.width):
            frame = F.interpolate(frame[None], size=(self.height, self.width), mode="bilinear", antialias=True)[0]
        return frame

    def _conditioning(self, noisy: torch.Tensor, text: TextEmbedding) -> dict:
        """The first frame's condition for latents shaped like ``noisy`` (cached per frame and shape)."""
        frame = text.first_frame
        cached = getattr(self, "_condition_cache", None)
        if cached is not None and cached[0] is frame and cached[1] == tuple(noisy.shape):
            return cached[2]
        pixels = self.first_frame_input(text) * 2 - 1  # [3,H,W] in [-1,1]
        with torch.no_grad():
            condition = self._image_condition(pixels[None], tuple(noisy.shape))
        self._condition_cache = (frame, tuple(noisy.shape), condition)
        return condition

    # Video in the model's clip ---------------------------------------------------------------
    def _prepare_video(self, video: torch.Tensor) -> torch.Tensor:
        self._input_frames = video.shape[0]
        video = resample_frames(video, self.frames)
        if video.shape[-2:] != (self.height, self.width):
            video = F.interpolate(video, size=(self.height, self.width), mode="bilinear", align_corners=False)
        return super()._prepare_video(video)

    def _decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Latents → video [F_in,3,H,W] in [0,1] at the frame count of the last scored video."""
        video = super()._decode(latents)[: self.frames]
        return resample_frames(video, getattr(self, "_input_frames", self.frames))

    # Drawing ---------------------------------------------------------------------------------
    @torch.no_grad()
    def sample(
        self,
        text: TextEmbedding,
        first_frame: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        guidance: float | None = None,
        steps: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> torch.Tensor:
        """The model draws the character of ``first_frame`` (default ``text.first_frame``) doing what
        ``text`` says: video [frames,3,height,width] in [0,1] (its first frame the given one, up to
        the VAE). Stepped by :attr:`draw_solver` over the adapter's hooks (:meth:`_draw`: DPM-Solver++ 2M
        where the adapter has a scheduler, else DDIM), CFG ``guidance`` (default :attr:`draw_guidance`),
        ``steps`` model evaluations (default :attr:`draw_steps`); ``progress(done, total)``
        after each step; deterministic for a seeded ``generator``. Decoded in tiles with
        ``memory.draw_tiling`` (:class:`~.protocol.MemoryOptions`)."""
        text = replace(text, first_frame=self.first_frame_input(text, first_frame))
        shape = self._latent_shape(self.frames, self.height, self.width)
        guidance = self.draw_guidance if guidance is None else guidance
        latents = self._draw(text, shape, generator, guidance, steps or self.draw_steps, progress)
        tile = self.memory.draw_tiling and not self.memory.vae_tiling
        if tile:
            self.vae.enable_tiling()
        try:
            return super()._decode(latents.to(self.dtype))[: self.frames]
        finally:
            if tile:
                self.vae.disable_tiling()
