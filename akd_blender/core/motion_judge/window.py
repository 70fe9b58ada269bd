"""The judge's time window: a clip cut to ``seconds`` sampled at ``frames`` frames.

The motion judge reads a fixed window. :func:`judge_window` resamples a clip to that window in
real time (so a 0.7 s artist walk cycle keeps its tempo): rotations are slerped and locations
interpolated between frames, and a cyclic clip (last pose equal to the first) is looped to fill
the window; a clip that is not cyclic and shorter than the window holds its last pose.
"""

from __future__ import annotations

import numpy as np
import torch

from ..motion import MotionClip
from ..rotations import quat_multiply, quat_to_rotvec, rotvec_to_quat

__all__ = ["JUDGE_SECONDS", "is_cyclic", "judge_window"]

JUDGE_SECONDS = 2.0
"""The time window a judge reads (seconds); the distillation's default clip is 48 frames at 24 fps."""


def is_cyclic(clip: MotionClip, angle_tol: float = 0.02, location_tol: float = 1e-3, scale: float = 1.0) -> bool:
    """True when the clip's last pose equals its first: every rotation within ``angle_tol`` radians and
    every location within ``location_tol × scale`` (Blender units; ``scale`` e.g. the rig's height)."""
    if clip.num_frames < 3:
        return False
    q0, q1 = (torch.as_tensor(clip.rotations[i], dtype=torch.float64) for i in (0, -1))
    dot = (q0 * q1).sum(-1).abs().clamp(max=1.0)
    angle = float((2 * torch.acos(dot)).max())
    shift = float(np.abs(clip.locations[-1] - clip.locations[0]).max())
    return angle <= angle_tol and shift <= location_tol * scale


def judge_window(clip: MotionClip, frames: int = 16, seconds: float = JUDGE_SECONDS, cyclic: bool | None = None) -> MotionClip:
    """``clip`` resampled to ``frames`` frames spanning ``seconds`` of its own time (fps = frames / seconds).

    ``cyclic`` None decides with :func:`is_cyclic`. A cyclic clip of F frames has period F − 1 frames
    and wraps; otherwise times past the clip's end hold its last pose.
    """
    fps = frames / seconds
    cyclic = is_cyclic(clip) if cyclic is None else cyclic
    period = clip.num_frames - 1
    t = np.arange(frames) * clip.fps / fps  # source frame positions
    t = np.mod(t, period) if cyclic and period > 0 else np.minimum(t, clip.num_frames - 1)
    lo = np.floor(t).astype(int)
    hi = np.minimum(lo + 1, clip.num_frames - 1)
    a = torch.as_tensor(t - lo, dtype=torch.float64)
    rot = torch.as_tensor(clip.rotations, dtype=torch.float64)
    q0, q1 = rot[lo], rot[hi]
    # slerp per element: q0 · exp(a · log(q0⁻¹ q1)), the relative turn taken the short way
    conj = q0 * torch.tensor([1.0, -1.0, -1.0, -1.0], dtype=torch.float64)
    step = quat_to_rotvec(quat_multiply(conj, q1)) * a[:, None, None]
    rotations = quat_multiply(q0, rotvec_to_quat(step)).numpy()
    w = (t - lo)[:, None, None]
    locations = clip.locations[lo] * (1 - w) + clip.locations[hi] * w
    return MotionClip(clip.bone_names, fps, clip.frame_start, rotations, locations).continuous()
