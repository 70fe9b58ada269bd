"""What the distillation asks of a video model: the :class:`VideoPrior` protocol, the text embedding it
is queried with, memory options, and the pieces of the SDS step written once (CFG combine, the
timestep draw, the surrogate loss). Shapes and units as in :mod:`.base`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import torch
import torch.nn.functional as F

from ..settings import SDSSettings

__all__ = [
    "TextEmbedding",
    "MemoryOptions",
    "VideoPrior",
    "DenoisingHooks",
    "cfg_combine",
    "sds_target_loss",
    "sample_timestep",
]


@dataclass
class TextEmbedding:
    """A prompt encoded once by the prior's text encoder.

    Attributes:
        prompt, negative_prompt: the texts.
        cond: [1,L,D] embedding of the prompt (the model's text-encoder output, model dtype).
        uncond: [1,L,D] embedding of the negative / empty prompt, or None (no CFG possible).
        extra: anything else a prior needs (e.g. pooled embeddings), keyed by name.
        first_frame: [3,H,W] in [0,1], the character in its start pose as the distillation renders it,
            for priors that draw a given character (``image_conditioned``); None for text-only priors.
    """

    prompt: str
    negative_prompt: str
    cond: torch.Tensor
    uncond: torch.Tensor | None = None
    extra: dict = field(default_factory=dict)
    first_frame: torch.Tensor | None = None


@dataclass
class MemoryOptions:
    """Memory modes of a diffusers prior (all independent).

    Attributes:
        vae_checkpointing: gradient checkpointing inside the VAE encoder (recomputes activations in
            the backward pass: the encoder backward is what dominates SDS memory at full size).
        vae_slicing: encode/decode batch elements one at a time.
        vae_tiling: encode/decode in spatial tiles (lower peak memory at large sizes, slower).
        cpu_offload: keep components on the CPU and move each to the GPU only while it runs
            (order: text encoder once, VAE, transformer, VAE); slow, smallest GPU footprint.
        free_text_encoder: move the text encoder off the GPU after each ``encode_text``.
        cudnn_benchmark: let cuDNN pick the fastest convolution algorithms (the VAE is conv-heavy).
        draw_tiling: decode a drawing (:meth:`~.image_to_video.ImageToVideoPrior.sample`) in spatial
            tiles even where ``vae_tiling`` is off: CogVideoX's whole 49 × 480 × 720 decode peaks
            16 GB above the weights, tiled 4 GB (H100, docs/benchmarks.md).
        attention: the scaled-dot-product attention kernel the transformer runs on CUDA, tried first
            (the others stay as fallbacks): "default" (torch's own order), "cudnn" (cuDNN's
            fused attention) or "flash" (FlashAttention-2); see
            :func:`~.diffusers_base.attention_kernels`.
    """

    vae_checkpointing: bool = True
    vae_slicing: bool = False
    vae_tiling: bool = False
    cpu_offload: bool = False
    free_text_encoder: bool = True
    cudnn_benchmark: bool = True
    draw_tiling: bool = True
    attention: str = "default"

    @classmethod
    def lowest(cls) -> MemoryOptions:
        """The smallest-footprint combination."""
        return cls(vae_checkpointing=True, vae_slicing=True, vae_tiling=True, cpu_offload=True)


@runtime_checkable
class VideoPrior(Protocol):
    """A text-to-video model that scores rendered videos.

    Attributes:
        name: a short name for reports (e.g. "THUDM/CogVideoX-5b", "tiny").
        frames, height, width: the model's preferred video size; the loop renders at its config
            size and the prior adapts (pads frames, rounds sizes) as needed.
    """

    name: str
    frames: int
    height: int
    width: int

    def encode_text(self, prompt: str, negative_prompt: str = "") -> TextEmbedding:
        """Encode a prompt (and the negative prompt for CFG) once; the result is reused every step."""
        ...

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
        """video [F,3,H,W] in [0,1] (differentiable) → {"loss": scalar whose gradient is the SDS
        gradient, plus detached diagnostics such as "t" and "grad_norm"}. ``region``: optional
        (top, left, bottom, right) pixel box of ``video`` holding the character in every frame
        (bottom/right exclusive); a prior may restrict costly work (the target decode) to it.
        ``settings``: the SDS settings of this query (None: the prior's own ``settings``)."""
        ...

    def free(self) -> None:
        """Release GPU memory held by the model."""
        ...


def cfg_combine(pred: torch.Tensor, scale: float) -> torch.Tensor:
    """Classifier-free guidance: ``pred`` [2,...] (uncond, cond) → uncond + scale·(cond − uncond) [1,...].

    A batch of 1 (no unconditional branch) is returned unchanged.
    """
    if pred.shape[0] == 1:
        return pred
    uncond, cond = pred.chunk(2)
    return uncond + scale * (cond - uncond)


def sample_timestep(settings: SDSSettings, step: int, total_steps: int, generator: torch.Generator | None = None) -> float:
    """A timestep fraction drawn uniformly from the (annealed) range at ``step`` of ``total_steps``."""
    t_max = settings.t_max
    if settings.t_max_end is not None and total_steps > 1:
        t_max = settings.t_max + (settings.t_max_end - settings.t_max) * min(step / (total_steps - 1), 1.0)
        t_max = max(t_max, settings.t_min + 1e-3)
    u = float(torch.rand((), generator=generator))
    return settings.t_min + u * (t_max - settings.t_min)


def sds_target_loss(latents: torch.Tensor, grad: torch.Tensor, clip: float | None) -> torch.Tensor:
    """``loss = 0.5 mean((latents - target)^2)`` with ``target = (latents - grad).detach()``.

    ``grad`` is cleaned with nan_to_num and clipped elementwise to ±clip; d loss / d latents = grad / numel.
    """
    grad = torch.nan_to_num(grad.detach().float(), nan=0.0, posinf=0.0, neginf=0.0)
    if clip is not None:
        grad = grad.clamp(-clip, clip)
    target = (latents.float() - grad).detach()
    return 0.5 * F.mse_loss(latents.float(), target, reduction="mean")


class DenoisingHooks(Protocol):
    """The model hooks a drawing runs on (:class:`~.base.SDSPrior` has them): shapes in the model's latent
    layout; ``device`` where its tensors live."""

    device: torch.device

    def _noise(self, latents: torch.Tensor, noise: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]: ...

    def _predict(self, noisy: torch.Tensor, timestep: torch.Tensor, text: TextEmbedding, cfg: bool) -> torch.Tensor: ...

    def _clean_and_noise(self, noisy: torch.Tensor, pred: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]: ...
