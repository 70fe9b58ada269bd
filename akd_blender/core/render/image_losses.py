"""Image losses and boxes shared by the SDS loop, the priors' pixel-space target and the pose search.

Videos are float [N,3,H,W] (RGB in [0, 1]); boxes are (top, left, bottom, right) in pixels,
bottom/right exclusive.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = [
    "multiscale_errors",
    "multiscale_mse",
    "crop_video",
    "character_region",
    "standardise",
    "colour_map",
    "apply_colour_map",
    "match_first_frame",
    "calibrate_to_first_frame",
    "gaussian_blur",
]


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


def colour_map(drawn: torch.Tensor, rendered: torch.Tensor, ridge: float = 1e-2) -> torch.Tensor:
    """The affine colour map [4,3] that best turns ``drawn`` colours [P,3] into ``rendered`` ones [P,3]
    (least squares, ridge-pulled toward the identity by ``ridge`` × P); applied by :func:`apply_colour_map`."""
    x = torch.cat([drawn, torch.ones_like(drawn[:, :1])], 1).double()
    identity = torch.eye(4, 3, dtype=x.dtype, device=x.device)
    lam = ridge * max(drawn.shape[0], 1)
    gram = x.T @ x + lam * torch.eye(4, dtype=x.dtype, device=x.device)
    return torch.linalg.solve(gram, x.T @ rendered.double() + lam * identity).to(drawn.dtype)


def apply_colour_map(colours: torch.Tensor, mapping: torch.Tensor) -> torch.Tensor:
    """Colours [P,3] through an affine :func:`colour_map` [4,3], clamped to [0,1]."""
    return (torch.cat([colours, torch.ones_like(colours[:, :1])], 1) @ mapping).clamp(0.0, 1.0)


CALIBRATION_GAIN = 0.75
"""``explained_only``: the map must take the first frame's difference from the render below this share."""
CALIBRATION_RESIDUAL = 0.06
"""``explained_only``: and leave at most this mean absolute difference (RGB in [0,1])."""


def calibrate_to_first_frame(
    video: torch.Tensor,
    render: torch.Tensor,
    first: int = 1,
    ridge: float = 1e-4,
    explained_only: bool = False,
    by: str = "moments",
) -> torch.Tensor:
    """A drawing [N,3,H,W] in [0,1] put through one affine colour map that turns its first ``first``
    images into the render ``render`` [first,4,H,W] (RGB + alpha) of the same pose from the same
    cameras, read on every pixel but the render's outline (character, ground and sky alike): a colour
    cast, a brightness or a contrast change of the whole drawing is undone, its shapes are left as
    they are.

    ``by``: "moments" (default), each channel's gain and offset that give the drawn pixels the
    render's mean and standard deviation (gain within 1/4 to 4); "pairs", the least-squares map from
    each drawn pixel to the render's pixel at the same place (:func:`colour_map`, ``ridge`` as
    there), which a drawing not exactly on the render's pixels pulls toward lower contrast.

    ``explained_only``: ``video`` itself is returned unless the map explains the first images'
    difference from the render: it takes their mean absolute difference down to less than
    :data:`CALIBRATION_GAIN` of what it was and to at most :data:`CALIBRATION_RESIDUAL`. A drawing that
    already matches gains too little; one whose ground or texture was redrawn keeps too much.
    Returns [N,3,H,W] in [0,1]."""
    if render.shape[0] != first or render.shape[1] != 4 or render.shape[-2:] != video.shape[-2:]:
        raise ValueError(f"render must be [{first},4,{video.shape[-2]},{video.shape[-1]}], got {tuple(render.shape)}")
    drawn = video[:first].permute(0, 2, 3, 1).reshape(-1, 3)
    rendered = render[:, :3].permute(0, 2, 3, 1).reshape(-1, 3)
    alpha = render[:, 3].reshape(-1)
    pure = (alpha < 0.02) | (alpha > 0.98)  # outline pixels blend character and ground: no pairs
    if by == "pairs":
        mapping = colour_map(drawn[pure], rendered[pure], ridge=ridge)
    elif by == "moments":
        gain = (rendered[pure].std(0) / drawn[pure].std(0).clamp_min(1e-6)).clamp(0.25, 4.0)
        offset = rendered[pure].mean(0) - gain * drawn[pure].mean(0)
        mapping = torch.cat([torch.diag(gain), offset[None]])
    else:
        raise ValueError(f"by must be 'moments' or 'pairs', not {by!r}")
    mapped = apply_colour_map(video.permute(0, 2, 3, 1).reshape(-1, 3), mapping)
    mapped = mapped.view(video.shape[0], video.shape[2], video.shape[3], 3).permute(0, 3, 1, 2).contiguous()
    if explained_only:
        before = float((video[:first] - render[:, :3]).abs().mean())
        after = float((mapped[:first] - render[:, :3]).abs().mean())
        if after >= CALIBRATION_GAIN * before or after > CALIBRATION_RESIDUAL:
            return video
    return mapped


def match_first_frame(
    video: torch.Tensor,
    render: torch.Tensor,
    first: int = 1,
    temperature: float = 0.08,
    foreign_gap: float = 0.15,
    palette: int = 2048,
    levels: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A drawing recoloured into the render's colours through its first frame, and where it shows a
    ground that the render does not have.

    The drawing's first ``first`` images show what the render ``render`` shows (the start pose, from the
    same cameras), so each of their pixels pairs a drawn colour with the render's colour of the same
    point (character part, ground or sky; pixels of the render's outline, which blend both, make no
    pair). First the drawing's colours go through the affine map that
    best turns its character's first-frame colours into the render's (:func:`colour_map`: a colour cast
    or brightness change). Then every pixel is looked up by colour among the pairs (a softmax over
    squared RGB distances with ``temperature``; colours rounded to ``levels`` steps per channel, so each
    distinct colour is looked up once) and takes the render's colour of the pairs it matches: another
    texture of the drawing maps back onto the render's own colours, part by part. A pair is *foreign*
    where the render shows no character (alpha < 0.5) and the drawing's colour there, mapped and as
    drawn, is further than ``foreign_gap`` (RGB distance) from every ground and sky colour of the render: a ground or sky
    the drawing repainted (a ground drawn a pixel off still matches the render's own colours).

    Args:
        video: [N,3,H,W] the drawing in [0,1]; its first ``first`` images are the start pose.
        render: [first,4,H,W] the render (RGB + alpha) of the start pose at the drawing's size.
        palette: most pairs used (evenly strided over the first images' pixels).
    Returns:
        (recoloured [N,3,H,W] in [0,1], foreign [N,1,H,W] in [0,1]: the share of each pixel's match
        that is a foreign ground).
    """
    if render.shape[0] != first or render.shape[1] != 4 or render.shape[-2:] != video.shape[-2:]:
        raise ValueError(f"render must be [{first},4,{video.shape[-2]},{video.shape[-1]}], got {tuple(render.shape)}")
    drawn = video[:first].permute(0, 2, 3, 1).reshape(-1, 3)
    rendered = render[:, :3].permute(0, 2, 3, 1).reshape(-1, 3)
    alpha = render[:, 3].reshape(-1)
    body = alpha > 0.5
    mapping = (
        colour_map(drawn[body], rendered[body])
        if int(body.sum()) >= 16
        else torch.eye(4, 3, dtype=video.dtype, device=video.device)
    )
    pure = torch.nonzero((alpha < 0.02) | (alpha > 0.98)).flatten()  # outline pixels blend both: no pairs
    keep = pure[torch.linspace(0, pure.shape[0] - 1, min(palette, pure.shape[0]), device=video.device).round().long()]
    drawn, rendered, alpha = drawn[keep], rendered[keep], alpha[keep]
    mapped = apply_colour_map(drawn, mapping)
    ground = rendered[alpha < 0.5]
    if ground.shape[0]:  # far from the render's ground and sky, with the colour map and without it
        far = torch.minimum(torch.cdist(mapped, ground).amin(1), torch.cdist(drawn, ground).amin(1)) > foreign_gap
    else:  # no ground in the render: no pair is foreign
        far = torch.zeros_like(alpha, dtype=torch.bool)
    foreign = ((alpha < 0.5) & far).to(video.dtype)
    values = torch.cat([rendered, foreign[:, None]], 1)  # [P,4]
    pixels = apply_colour_map(video.permute(0, 2, 3, 1).reshape(-1, 3), mapping)
    steps = (pixels * (levels - 1)).round().long()
    codes = (steps[:, 0] * levels + steps[:, 1]) * levels + steps[:, 2]  # no integer matmul: CUDA has none
    unique, where = torch.unique(codes, return_inverse=True)
    colours = torch.stack([unique // (levels * levels), unique // levels % levels, unique % levels], 1).to(video.dtype) / (
        levels - 1
    )
    looked = torch.cat(
        [torch.softmax(-torch.cdist(c, mapped).pow(2) / temperature**2, dim=1) @ values for c in colours.split(1 << 14)]
    )
    out = looked[where].view(video.shape[0], video.shape[2], video.shape[3], 4).permute(0, 3, 1, 2)
    return out[:, :3].clamp(0.0, 1.0).contiguous(), out[:, 3:].contiguous()


def gaussian_blur(video: torch.Tensor, sigma: float) -> torch.Tensor:
    """Separable Gaussian blur of [N,C,H,W] with ``sigma`` pixels (reflect padding)."""
    radius = max(1, math.ceil(3 * sigma))
    x = torch.arange(-radius, radius + 1, dtype=video.dtype, device=video.device)
    kernel = torch.exp(-0.5 * (x / sigma) ** 2)
    kernel = kernel / kernel.sum()
    c = video.shape[1]
    out = F.pad(video, (radius, radius, 0, 0), mode="reflect")
    out = F.conv2d(out, kernel.view(1, 1, 1, -1).expand(c, 1, 1, -1), groups=c)
    out = F.pad(out, (0, 0, radius, radius), mode="reflect")
    return F.conv2d(out, kernel.view(1, 1, -1, 1).expand(c, 1, -1, 1), groups=c)
