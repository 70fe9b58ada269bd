"""The judge's time window: a clip cut to ``seconds`` sampled at ``frames`` frames.

The motion judge reads a fixed window. :func:`judge_window` resamples a clip to that window in
real time (so a 0.7 s artist walk cycle keeps its tempo): rotations are slerped and locations
interpolated between frames, and a cycle (:func:`cycle_period`) is looped to fill the window, its
locations' net travel per cycle carried on loop after loop (a walk cycle that moves forward keeps
moving forward); a clip that is not a cycle and is shorter than the window holds its last pose.
"""

from __future__ import annotations

import numpy as np
import torch

from ...character.rotations import quat_multiply, quat_to_rotvec, rotvec_to_quat
from ..clip import MotionClip

__all__ = ["JUDGE_SECONDS", "is_cyclic", "cycle_period", "judge_window"]

JUDGE_SECONDS = 2.0
"""The time window a judge reads (seconds); the distillation's default clip is 48 frames at 24 fps."""


def _angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angles (radians) between quaternions ``a`` and ``b`` [...,4] (sign-blind)."""
    dot = np.abs((np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)).sum(-1))
    return 2 * np.arccos(np.clip(dot, 0.0, 1.0))


def is_cyclic(clip: MotionClip, angle_tol: float = 0.02, location_tol: float = 1e-3, scale: float = 1.0) -> bool:
    """True when the clip's last pose equals its first: every rotation within ``angle_tol`` radians and
    every location within ``location_tol × scale`` (Blender units; ``scale`` e.g. the rig's height)."""
    if clip.num_frames < 3:
        return False
    angle = float(_angles(clip.rotations[0], clip.rotations[-1]).max())
    shift = float(np.abs(clip.locations[-1] - clip.locations[0]).max())
    return angle <= angle_tol and shift <= location_tol * scale


def cycle_period(clip: MotionClip, angle_tol: float = 0.02, step_ratio: float = 1.5) -> int | None:
    """The clip's period in frames when it is a cycle of rotations, else None.

    F − 1 when the last frame's rotations equal the first's (within ``angle_tol`` radians); F when the
    last frame is one ordinary step before the first (the closing turn, last frame → first, is at most
    ``step_ratio`` × the 90th percentile of the clip's frame-to-frame turns, the largest bone's in
    each case), as cycles baked without their repeated end frame are. Locations do not decide: a cycle
    may travel (:func:`judge_window` carries its net travel on)."""
    frames = clip.num_frames
    if frames < 3:
        return None
    closing = float(_angles(clip.rotations[0], clip.rotations[-1]).max())
    if closing <= angle_tol:
        return frames - 1
    steps = _angles(clip.rotations[1:], clip.rotations[:-1]).max(-1)  # [F-1]
    if closing <= step_ratio * float(np.quantile(steps, 0.9)):
        return frames
    return None


def _sample(clip: MotionClip, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotations [T,J,4] (slerped) and locations [T,J,3] (linear) at fractional source frames ``t`` [T]
    within [0, F − 1]."""
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
    return rotations, clip.locations[lo] * (1 - w) + clip.locations[hi] * w


def judge_window(clip: MotionClip, frames: int = 16, seconds: float = JUDGE_SECONDS, cyclic: bool | None = None) -> MotionClip:
    """``clip`` resampled to ``frames`` frames spanning ``seconds`` of its own time (fps = frames / seconds).

    ``cyclic`` None loops the clip with the period :func:`cycle_period` finds (none: not looped);
    True loops it with period F − 1 (the last frame taken for the first); False never loops. A looped
    clip's locations go on from where each loop ended: loop k adds k × its net travel (the last
    frame's locations minus the first's, scaled to a whole period). Unlooped, times past the clip's
    end hold its last pose.
    """
    fps = frames / seconds
    n = clip.num_frames
    period = cycle_period(clip) if cyclic is None else (n - 1 if cyclic else None)
    t = np.arange(frames) * clip.fps / fps  # source frame positions
    if period is None or period < 1:
        rotations, locations = _sample(clip, np.minimum(t, n - 1))
        return MotionClip(clip.bone_names, fps, clip.frame_start, rotations, locations).continuous()
    loops, phase = np.divmod(t, period)
    closing = phase > n - 1  # between the last frame and the first (period F): rotations slerp to frame 0
    rotations, locations = _sample(clip, np.minimum(phase, n - 1))
    travel = (clip.locations[-1] - clip.locations[0]) * period / (n - 1)  # net travel per period
    if np.any(closing):
        a = phase[closing] - (n - 1)
        start = clip.locations[0] + travel
        locations[closing] = clip.locations[-1] * (1 - a[:, None, None]) + start * a[:, None, None]
        two = MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations[[-1, 0]], clip.locations[[-1, 0]])
        rotations[closing] = _sample(two, a)[0]
    locations = locations + loops[:, None, None] * travel
    return MotionClip(clip.bone_names, fps, clip.frame_start, rotations, locations).continuous()
