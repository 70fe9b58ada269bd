"""Camera shake taken out of a drawn video before the pose search fits it.

A video model's camera wobbles: each frame of its drawing may sit a pixel or two off the smooth
path the follow camera takes, and the search would read that wobble as the character's root
jumping about. Consecutive frames are registered (the shift that best lays one frame on the next,
found by trying shifts on a grid, coarse then fine), the shifts add up to the camera's path in
pixels, and what the path does beyond its own smoothed course is the shake. Where the shake is
small (a drawing of a steady camera) the video is left as it is.

Videos are float [F,3,H,W] in [0,1]; shifts are (x, y) in pixels, +x to the right, +y down.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..render.image_losses import gaussian_blur

__all__ = ["frame_shifts", "camera_shake", "shifted", "stabilised", "SHAKE_THRESHOLD"]

SHAKE_THRESHOLD = 0.64
"""Root-mean-square shake (pixels) above which :func:`stabilised` takes it out."""


def shifted(video: torch.Tensor, shifts: torch.Tensor) -> torch.Tensor:
    """``video`` [N,C,H,W] with image n moved by ``shifts[n]`` = (x, y) pixels (bilinear; the border
    pixels repeat where the image moves away from an edge)."""
    n, _, h, w = video.shape
    theta = torch.zeros(n, 2, 3, dtype=video.dtype, device=video.device)
    theta[:, 0, 0] = theta[:, 1, 1] = 1.0
    theta[:, 0, 2] = -2.0 * shifts[:, 0].to(video) / w  # sampling grid: a move right reads from the left
    theta[:, 1, 2] = -2.0 * shifts[:, 1].to(video) / h
    grid = F.affine_grid(theta, [n, video.shape[1], h, w], align_corners=False)
    return F.grid_sample(video, grid, mode="bilinear", padding_mode="border", align_corners=False)


def _grid(reach: float, step: float, device) -> torch.Tensor:
    """Candidate (x, y) shifts [S,2] from −reach to reach in ``step`` pixels."""
    values = torch.arange(-reach, reach + step / 2, step, device=device)
    xs, ys = torch.meshgrid(values, values, indexing="xy")
    return torch.stack([xs.flatten(), ys.flatten()], 1)


def _best_shifts(a: torch.Tensor, b: torch.Tensor, centres: torch.Tensor, candidates: torch.Tensor, margin: int) -> torch.Tensor:
    """Per pair n, the shift among ``centres[n] + candidates`` [S,2] that best lays ``a[n]`` on ``b[n]``
    ([P,C,H,W] each): each image is moved half-way (a by +s/2, b by −s/2, so both are interpolated
    alike) and compared by mean squared difference inside ``margin`` pixels of the edges. Returns [P,2]."""
    p, s = a.shape[0], candidates.shape[0]
    trial = (centres[:, None] + candidates[None]).reshape(-1, 2)  # [P·S,2]
    a_moved = shifted(a.repeat_interleave(s, 0), trial / 2)
    b_moved = shifted(b.repeat_interleave(s, 0), -trial / 2)
    diff = (a_moved - b_moved)[..., margin : a.shape[-2] - margin, margin : a.shape[-1] - margin]
    errors = diff.pow(2).flatten(1).mean(1).view(p, s)
    return trial.view(p, s, 2)[torch.arange(p, device=a.device), errors.argmin(1)]


@torch.no_grad()
def frame_shifts(video: torch.Tensor, reach: float = 3.0, blur: float = 1.0) -> torch.Tensor:
    """The shift [F−1,2] (pixels) that lays each frame of ``video`` [F,3,H,W] on the next one, at most
    ``reach`` pixels either way: whole pixels first, then quarter and sixteenth pixels around the best.
    The frames are compared blurred (Gaussian, ``blur`` pixels): pixel noise, which interpolating at
    a fraction of a pixel would smooth away, then favours no shift."""
    frames = gaussian_blur(video.float(), blur) if blur > 0 else video.float()
    a, b = frames[:-1], frames[1:]
    margin = max(1, int(reach) + 1)
    best = torch.zeros(a.shape[0], 2, device=video.device)
    for span, step in ((reach, 1.0), (0.75, 0.25), (0.1875, 0.0625)):
        best = _best_shifts(a, b, best, _grid(span, step, video.device), margin)
    return best


def _smoothed(path: torch.Tensor, sigma: float) -> torch.Tensor:
    """``path`` [F,2] smoothed over frames by a Gaussian of ``sigma`` frames (ends mirrored)."""
    radius = max(1, int(3 * sigma))
    radius = min(radius, path.shape[0] - 1)
    if radius < 1:
        return path
    x = torch.arange(-radius, radius + 1, dtype=path.dtype, device=path.device)
    kernel = torch.exp(-0.5 * (x / sigma) ** 2)
    kernel = (kernel / kernel.sum()).view(1, 1, -1)
    padded = F.pad(path.T[:, None], (radius, radius), mode="reflect")  # [2,1,F+2r]
    return F.conv1d(padded, kernel)[:, 0].T


@torch.no_grad()
def camera_shake(video: torch.Tensor, sigma: float = 1.5) -> torch.Tensor:
    """Each frame's offset [F,2] (pixels) from the camera's smoothed path: the camera's path is the
    running sum of :func:`frame_shifts`, smoothed over ``sigma`` frames. A video of fewer than 3
    frames has no shake to read (zeros)."""
    if video.shape[0] < 3:
        return torch.zeros(video.shape[0], 2, device=video.device)
    steps = frame_shifts(video)
    path = torch.cat([torch.zeros(1, 2, device=video.device), steps.cumsum(0)])  # frame f lies at path[f]
    return path - _smoothed(path, sigma)


@torch.no_grad()
def stabilised(video: torch.Tensor, threshold: float = SHAKE_THRESHOLD) -> tuple[torch.Tensor, float]:
    """``video`` [F,3,H,W] with its camera shake taken out, and the shake's root-mean-square size in
    pixels. Below ``threshold`` pixels the video comes back unchanged (a steady camera's drawing)."""
    shake = camera_shake(video)
    size = float(shake.pow(2).sum(1).mean().sqrt())
    if size <= threshold:
        return video, size
    return shifted(video.float(), -shake).to(video.dtype), size
