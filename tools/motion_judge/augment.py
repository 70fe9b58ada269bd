"""Training-time changes to body tracks: "none" examples from real ones, secondary motion, and the
limb-by-limb differences between one artist's motion and another's (:func:`limb_jitter`)."""

from __future__ import annotations

import torch

from akd_blender.core.motion.judge import SLOTS

__all__ = ["ROOT_SWAY", "SLOT_SWAY", "corrupt", "secondary_motion", "limb_jitter"]

ROOT_SWAY = {0: 0.02, 2: 0.06, 3: 0.06, 6: 0.08, 7: 0.1}
"""Root channel → largest added sway (lateral and vertical travel, height in heights; tilt)."""
SLOT_SWAY = {"head": 0.08, "tail": 0.25, "arm": 0.05, "wing": 0.05, "leg": 0.03}
"""Slot group → largest added sway of its keypoint (heights)."""


def corrupt(x: torch.Tensor, reversible: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """ "none" examples from clips [B,F,...]: each is frame-shuffled, frozen on one frame or (where
    ``reversible`` [B] is False) played backwards, chosen at random per clip (``generator`` on x's device)."""
    b, f = x.shape[:2]
    dev = x.device
    kind = torch.randint(0, 3, (b,), generator=generator, device=dev)
    kind = torch.where(reversible & (kind == 2), torch.zeros_like(kind), kind)
    shuffled = torch.rand(b, f, generator=generator, device=dev).argsort(1)
    frozen = torch.randint(0, f, (b, 1), generator=generator, device=dev).expand(b, f)
    backwards = torch.arange(f - 1, -1, -1, device=dev).expand(b, f)
    order = torch.where((kind == 0)[:, None], shuffled, torch.where((kind == 1)[:, None], frozen, backwards))
    return x[torch.arange(b, device=dev)[:, None], order]


def _sway_amplitudes(channels: int) -> torch.Tensor:
    """The largest secondary sway per track channel [C] (0 for flags and yaw)."""
    amp = torch.zeros(channels)
    for c, a in ROOT_SWAY.items():
        amp[c] = a
    for i, name in enumerate(SLOTS):
        amp[8 + 4 * i : 8 + 4 * i + 3] = SLOT_SWAY[name.split(".")[0]]
    return amp


def secondary_motion(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Tracks [B,F,C] with a random smooth sway added to each channel (one sine of 0.5–3 cycles per
    window, amplitude up to :data:`ROOT_SWAY` / :data:`SLOT_SWAY`), a constant pitch of up to ±0.15,
    and the legs' vertical paths scaled by 0.7–2 (higher or lower foot lifts); absent slots stay zero."""
    b, f, c = x.shape
    dev = x.device

    def rand(*shape):
        return torch.rand(*shape, generator=generator, device=dev)

    t = torch.arange(f, device=dev, dtype=x.dtype) / f
    amp = _sway_amplitudes(c).to(dev) * rand(b, 1, c)
    wave = torch.sin(2 * torch.pi * ((0.5 + 2.5 * rand(b, 1, c)) * t[None, :, None] + rand(b, 1, c)))
    present = torch.ones_like(x)
    for i in range(len(SLOTS)):
        present[..., 8 + 4 * i : 8 + 4 * i + 3] = x[..., 8 + 4 * i + 3 : 8 + 4 * i + 4]
    out = x + amp * wave * present
    out[..., 7] += 0.3 * (rand(b, 1) - 0.5)
    lift = 0.7 + 1.3 * rand(b, 1)
    for i, name in enumerate(SLOTS):
        if name.startswith("leg"):
            out[..., 8 + 4 * i + 2] *= lift
    return out


def _shift_in_time(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Tracks [B,F,K] read ``shift`` [B,1,K] frames later (linear between frames, held at the ends)."""
    f = x.shape[1]
    t = (torch.arange(f, device=x.device, dtype=x.dtype)[None, :, None] + shift).clamp(0, f - 1)
    lo = t.floor().long().clamp(max=f - 1)
    hi = (lo + 1).clamp(max=f - 1)
    a = t - lo
    return torch.gather(x, 1, lo) * (1 - a) + torch.gather(x, 1, hi) * a


def limb_jitter(
    x: torch.Tensor, generator: torch.Generator, scale: float = 0.3, shift: float = 0.4, noise: float = 0.03
) -> torch.Tensor:
    """Tracks [B,F,C] with each present slot's path scaled by its own factor in [1 − ``scale``,
    1 + ``scale``], played up to ``shift`` frames earlier or later than the others (its own phase), and
    a smooth random path (4 knots over the window, up to ``noise`` heights) added to every present slot
    channel; root channels and "present" flags stay as they are. So the judge reads how limbs move
    together, not one generator's exact curves."""
    b, f, c = x.shape
    dev = x.device
    n = len(SLOTS)

    def rand(*shape):
        return torch.rand(*shape, generator=generator, device=dev, dtype=x.dtype)

    start = c - 4 * n
    slots = x[..., start:].reshape(b, f, n, 4)
    present = slots[..., 3:4]
    paths = slots[..., :3]
    factor = 1 + scale * (2 * rand(b, 1, n, 1) - 1)
    lag = shift * (2 * rand(b, 1, n, 1) - 1)
    moved = _shift_in_time(paths.reshape(b, f, 3 * n), lag.expand(b, 1, n, 3).reshape(b, 1, 3 * n)).reshape(b, f, n, 3)
    moved = moved - moved[:, :1]  # each path starts at zero, as body_tracks writes it
    knots = noise * (2 * rand(b, 4, n * 3) - 1)
    smooth = torch.nn.functional.interpolate(knots.transpose(1, 2), size=f, mode="linear", align_corners=True).transpose(1, 2)
    smooth = (smooth - smooth[:, :1]).reshape(b, f, n, 3)
    out = x.clone()
    out[..., start:] = torch.cat([(moved * factor + smooth) * present, present], -1).reshape(b, f, 4 * n)
    return out
