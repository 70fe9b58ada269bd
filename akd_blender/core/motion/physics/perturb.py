"""Move a clip's root and inject the artefacts physics grounding removes (tests, benchmarks, demos).

``translate_root`` shifts the whole character by a world-space offset per frame through the location
channel of the pelvis-like root (:func:`~akd_blender.core.motion.metrics.main_root`, or its nearest
unconnected ancestor) and of the bones beside it; ``inject_artifacts`` uses it to add foot slide (a horizontal sway while the
feet are planted), floating (a raised stretch) and sinking (a lowered stretch).
"""

from __future__ import annotations

import numpy as np
import torch

from ...character.kinematics import Skeleton, ancestors_mask, location_axes
from ...character.rig import RigAsset
from ..clip import MotionClip
from ..metrics import main_root

__all__ = ["translate_root", "inject_artifacts", "loop_clip"]


def translate_root(rig: RigAsset, clip: MotionClip, delta: np.ndarray) -> MotionClip:
    """``clip`` with the character moved by ``delta`` [F,3] (world units, per frame): through the
    location channel of the pelvis-like root (or its nearest unconnected ancestor) and of every bone
    beside it that does not hang from it (another root's tree, a sibling under a bone above it: the IK
    target bones a glTF rig's feet may hang from), so every part of the mesh moves alike."""
    b = main_root(rig)
    while rig.use_connect[b] and rig.parents[b] >= 0:
        b = int(rig.parents[b])
    above = ancestors_mask(rig.parents, b)
    movers = [b] + [
        c
        for c in range(rig.num_bones)
        if c != b and not above[c] and not rig.use_connect[c] and (rig.parents[c] < 0 or above[rig.parents[c]])
    ]
    linear = rig.armature_world[:3, :3]
    delta_arm = np.asarray(delta, dtype=np.float64) @ np.linalg.inv(linear).T  # [F,3] armature space
    pose = None
    locations = clip.locations.copy()
    for c in movers:
        p = int(rig.parents[c])
        if p >= 0 and pose is None:
            with torch.no_grad():
                pose = Skeleton(rig, dtype=torch.float64).pose_matrices(*clip.pose_channels(torch.float64)).numpy()
        axes = np.broadcast_to(location_axes(rig, c, None if p < 0 else pose[:, p, :3, :3]), (clip.num_frames, 3, 3))
        locations[:, c] += np.linalg.solve(axes, delta_arm[..., None])[..., 0]
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations.copy(), locations)


def inject_artifacts(
    rig: RigAsset, clip: MotionClip, slide: float = 0.08, float_height: float = 0.06, sink: float = 0.04, period: float = 1.1
) -> MotionClip:
    """Add foot slide, floating and sinking, in body heights.

    The root sways horizontally by ``slide`` (sine of ``period`` seconds along X, half as much along
    Y), is raised by ``float_height`` over the middle third of the clip and lowered by ``sink`` over
    the last third (smooth ramps), so planted feet slide, float and go through the ground.
    """
    frames = clip.num_frames
    t = np.arange(frames) / clip.fps
    u = np.linspace(0.0, 1.0, frames)
    bump = lambda a, b: np.clip(np.minimum((u - a) / 0.08, (b - u) / 0.08), 0.0, 1.0)
    h = rig.height
    delta = np.zeros((frames, 3))
    delta[:, 0] = slide * h * np.sin(2 * np.pi * t / period)
    delta[:, 1] = 0.5 * slide * h * np.sin(2 * np.pi * t / (0.7 * period))
    delta[:, 2] = h * (float_height * bump(1 / 3, 2 / 3) - sink * bump(2 / 3, 1.2))
    return translate_root(rig, clip, delta)


def loop_clip(clip: MotionClip, seconds: float) -> MotionClip:
    """Repeat a cycle (first frame = last frame, as Blender's cyclic actions) to last ``seconds``."""
    period = max(clip.num_frames - 1, 1)
    frames = max(int(round(seconds * clip.fps)) + 1, 2)
    idx = np.arange(frames) % period
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations[idx], clip.locations[idx]).continuous()
