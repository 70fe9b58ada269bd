"""A rig's joint limits against a motion: where a bone's Limit Rotation (``RigAsset.rotation_limits``,
Euler XYZ in the bone's local space, as Blender applies it) holds the bone short of the pose a clip
asks for, Blender plays a smaller motion. :func:`beyond_limits` measures by how much, per bone;
:func:`joint_limit_warnings` says so in one line naming the joints.
"""

from __future__ import annotations

import numpy as np
import torch

from ..character.rig import RigAsset
from ..character.rotations import quat_to_euler
from .clip import MotionClip

__all__ = ["LIMIT_TOLERANCE_DEG", "beyond_limits", "joint_limit_warnings"]

LIMIT_TOLERANCE_DEG: float = 2.0
"""Degrees a clip's Euler angle may pass a limit before the bone counts as held short of the motion."""


def beyond_limits(rig: RigAsset, clip: MotionClip) -> dict[str, tuple[str, float, float, float]]:
    """Per limited bone whose clip rotation passes its limit by more than :data:`LIMIT_TOLERANCE_DEG`:
    ``(axis, wanted, low, high)``, the local axis ("X", "Y", "Z") passed furthest, the clip's angle
    there at that frame and the limit's range (degrees). Bones in the clip's order; bones the rig does
    not name, or without limits, are left out."""
    limited = [b for b in range(rig.num_bones) if np.isfinite(rig.rotation_limits[b]).any()]
    index = {name: j for j, name in enumerate(clip.bone_names)}
    out: dict[str, tuple[str, float, float, float]] = {}
    for b in limited:
        name = rig.bone_names[b]
        if name not in index:
            continue
        quats = torch.as_tensor(clip.rotations[:, index[name]], dtype=torch.float64)
        angles = np.rad2deg(quat_to_euler(quats / quats.norm(dim=-1, keepdim=True), "XYZ").numpy())  # [F,3]
        low, high = np.rad2deg(rig.rotation_limits[b, :, 0]), np.rad2deg(rig.rotation_limits[b, :, 1])
        excess = np.maximum(np.nan_to_num(low - angles, nan=0.0), np.nan_to_num(angles - high, nan=0.0))  # [F,3]
        if excess.max() <= LIMIT_TOLERANCE_DEG:
            continue
        frame, axis = np.unravel_index(int(np.argmax(excess)), excess.shape)
        out[name] = ("XYZ"[axis], float(angles[frame, axis]), float(low[axis]), float(high[axis]))
    return out


def joint_limit_warnings(rig: RigAsset, clip: MotionClip) -> list[str]:
    """One line naming the joints whose limits hold them short of ``clip`` (the first with its axis,
    the angle asked and the limit, up to three more by name), or none."""
    short = beyond_limits(rig, clip)
    if not short:
        return []
    (first, (axis, wanted, low, high)), *rest = short.items()
    more = ", ".join(f"'{bone}'" for bone, _ in rest[:3]) + (", …" if len(rest) > 3 else "")
    return [
        f"the rig's joint limits keep {len(short)} {'bones' if len(short) > 1 else 'bone'} short of the motion, which "
        f"Blender plays smaller there: '{first}' is asked for {wanted:.0f}° about its local {axis} axis, its Limit "
        f"Rotation allows {low:.0f}° to {high:.0f}°" + (f"; also {more}" if rest else "")
    ]
