"""A one-line human summary of a rig's bone roles."""

from __future__ import annotations

import numpy as np

from ..rig import RigAsset
from .types import BoneRoles

__all__ = ["describe_roles", "world_direction_name"]

_AXES = {"+X": (1, 0, 0), "-X": (-1, 0, 0), "+Y": (0, 1, 0), "-Y": (0, -1, 0), "+Z": (0, 0, 1), "-Z": (0, 0, -1)}


def world_direction_name(v: np.ndarray) -> str:
    """A world direction [3] as "-Y" when within 15° of a world axis, else as rounded components."""
    v = np.asarray(v, dtype=np.float64)
    v = v / np.linalg.norm(v)
    for name, axis in _AXES.items():
        if v @ np.array(axis, dtype=np.float64) > np.cos(np.deg2rad(15.0)):
            return name
    return "({:.2f}, {:.2f}, {:.2f})".format(*v)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def describe_roles(roles: BoneRoles, rig: RigAsset) -> str:
    """One line, e.g. "quadruped: 4 legs, tail of 3, head; root 'b_Hip_01'; facing -Y" (facing in world axes)."""
    parts = []
    for group, word in (("legs", "leg"), ("arms", "arm"), ("wings", "wing")):
        limbs = getattr(roles, group)
        if limbs:
            parts.append(_count(len(limbs), word))
    if roles.spine:
        parts.append(f"spine of {len(roles.spine)}")
    if roles.neck:
        parts.append(f"neck of {len(roles.neck)}")
    if roles.tail:
        parts.append(f"tail of {len(roles.tail)}")
    if roles.head is not None:
        parts.append("head")
    body = ", ".join(parts) if parts else "no limbs"
    facing = world_direction_name(np.asarray(rig.armature_world)[:3, :3] @ roles.frame.forward)
    return f"{roles.kind}: {body}; root '{rig.bone_names[roles.root]}'; facing {facing}"
