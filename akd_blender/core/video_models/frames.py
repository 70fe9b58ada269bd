"""Fitting videos to a model's sizes: frame resampling, multiples of the latent grid, the decode crop."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = ["decode_crop", "resample_frames", "round_to", "fit_video"]


def decode_crop(
    region: tuple[int, int, int, int],
    size: tuple[int, int],
    prepared: tuple[int, int],
    latent: tuple[int, int],
    spatial: int,
    pad: int,
    margin: int,
    max_fraction: float = 0.8,
):
    """Where to decode a pixel target so that it covers ``region`` (top, left, bottom, right) of a
    video of ``size`` (H, W) that the prior resized to ``prepared`` (H', W') and encoded to a
    ``latent`` (h, w) grid of ``spatial`` pixels per cell.

    Returns None when the crop would cover more than ``max_fraction`` of the latent grid (decode it
    all), else ``(decode, inner, box)``: ``decode`` the latent cells to decode (top, left, bottom,
    right; ``pad`` + ``margin`` cells around the region, clamped), ``inner`` the pixel box inside the
    decoded crop to keep (``pad`` cells around the region), ``box`` the same area in the input video's
    pixels (where the loss is taken).
    """
    (height, width), (ph, pw), (h, w) = size, prepared, latent
    sy, sx = ph / height, pw / width
    top, left, bottom, right = region
    keep = (
        max(int(top * sy // spatial) - pad, 0),
        max(int(left * sx // spatial) - pad, 0),
        min(-int(-bottom * sy // spatial) + pad, h),
        min(-int(-right * sx // spatial) + pad, w),
    )
    dec = (max(keep[0] - margin, 0), max(keep[1] - margin, 0), min(keep[2] + margin, h), min(keep[3] + margin, w))
    if (dec[2] - dec[0]) * (dec[3] - dec[1]) > max_fraction * h * w:
        return None
    inner = tuple((k - dec[i % 2]) * spatial for i, k in enumerate(keep))
    box = (
        round(keep[0] * spatial / sy),
        round(keep[1] * spatial / sx),
        min(round(keep[2] * spatial / sy), height),
        min(round(keep[3] * spatial / sx), width),
    )
    return dec, inner, box


def resample_frames(video: torch.Tensor, frames: int) -> torch.Tensor:
    """[F,...] → [frames,...] (a video [F,3,H,W], skinned vertices [F,V,3]), linear interpolation in time
    at ``frames`` evenly spaced times from the first frame to the last (differentiable; unchanged when
    F = frames)."""
    f = video.shape[0]
    if f == frames:
        return video
    pos = torch.linspace(0, f - 1, frames, device=video.device)
    lo = pos.floor().long().clamp(max=f - 1)
    hi = (lo + 1).clamp(max=f - 1)
    a = (pos - lo.to(pos.dtype)).view(-1, *([1] * (video.ndim - 1))).to(video.dtype)
    return video[lo] * (1 - a) + video[hi] * a


def round_to(value: int, multiple: int) -> int:
    """The nearest positive multiple of ``multiple``."""
    return max(multiple, int(math.floor(value / multiple + 0.5)) * multiple)


def fit_video(video: torch.Tensor, frame_stride: int, spatial: int) -> torch.Tensor:
    """Adapt video [F,3,H,W] to a model: frames padded (last frame repeated) to ``k·frame_stride + 1``;
    H and W resized (bilinear, differentiable) to the nearest multiples of ``spatial``."""
    f, _, h, w = video.shape
    need = ((f - 1 + frame_stride - 1) // frame_stride) * frame_stride + 1
    if need > f:
        video = torch.cat([video, video[-1:].expand(need - f, -1, -1, -1)], dim=0)
    th, tw = round_to(h, spatial), round_to(w, spatial)
    if (th, tw) != (h, w):
        video = F.interpolate(video, size=(th, tw), mode="bilinear", align_corners=False)
    return video
