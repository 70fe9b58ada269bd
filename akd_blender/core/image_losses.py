"""Image losses and boxes shared by the SDS loop, the priors' pixel-space target and the pose search.

Videos are float [N,3,H,W] (RGB in [0, 1]); boxes are (top, left, bottom, right) in pixels,
bottom/right exclusive.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = ["multiscale_errors", "multiscale_mse", "crop_video", "character_region"]


def _pyramid(video: torch.Tensor, target: torch.Tensor, scales: int | None):
    """(video, target) at 1, 1/2, 1/4 … resolution: ``scales`` levels (None: down to 2 pixels)."""
    if scales is None:
        scales = max(1, int(math.log2(max(min(video.shape[-2:]), 2))))
    for s in range(scales):
        if s:
            if min(video.shape[-2:]) < 2:
                break
            video, target = F.avg_pool2d(video, 2), F.avg_pool2d(target, 2)
        yield video, target


def multiscale_errors(video: torch.Tensor, target: torch.Tensor, scales: int | None = None) -> torch.Tensor:
    """Per-image multi-scale MSE [N] between ``video`` and ``target`` [N,3,H,W] (see :func:`multiscale_mse`)."""
    levels = [(v - t).pow(2).flatten(1).mean(1) for v, t in _pyramid(video, target, scales)]
    return torch.stack(levels).mean(0)


def standardise(video: torch.Tensor, floor: float = 0.05) -> torch.Tensor:
    """[N,C,H,W] with each image's channels shifted to mean 0 and divided by their spread (standard
    deviation over the image, at least ``floor``): the same picture under another per-channel gain and
    offset (a colour cast, a brightness or contrast change) comes out the same."""
    mean = video.mean((-2, -1), keepdim=True)
    spread = video.std((-2, -1), keepdim=True).clamp_min(floor)
    return (video - mean) / spread


def multiscale_mse(video: torch.Tensor, target: torch.Tensor, scales: int | None = None) -> torch.Tensor:
    """Mean of MSEs between ``video`` and ``target`` [F,3,H,W] at 1, 1/2, 1/4 … resolution (a scalar).

    ``scales`` levels (None: down to 2 pixels on the smaller side). The coarse levels make the loss
    smooth in the joint angles: at full resolution alone a limb that does not overlap its target
    gets no useful gradient, and small images are dominated by pixel aliasing. (Its own reduction,
    not ``multiscale_errors(...).mean()``: that one's backward is not bitwise repeatable on the CPU.)
    """
    levels = [F.mse_loss(v, t) for v, t in _pyramid(video, target, scales)]
    return torch.stack(levels).mean()


def crop_video(video: torch.Tensor, box) -> torch.Tensor:
    """``video[..., top:bottom, left:right]`` for a (top, left, bottom, right) box."""
    top, left, bottom, right = (int(v) for v in box)
    return video[..., top:bottom, left:right]


def character_region(alpha: torch.Tensor, threshold: float = 0.02) -> tuple[int, int, int, int] | None:
    """The (top, left, bottom, right) pixel box holding every pixel of alpha [F,H,W] above
    ``threshold`` in any frame (bottom/right exclusive); None if the character is not visible."""
    seen = (alpha.detach() > threshold).any(0)
    rows, cols = torch.nonzero(seen.any(1)).flatten(), torch.nonzero(seen.any(0)).flatten()
    if rows.numel() == 0:
        return None
    return int(rows[0]), int(cols[0]), int(rows[-1]) + 1, int(cols[-1]) + 1
