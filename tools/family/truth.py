"""A family member's true bone roles as :class:`~akd_blender.core.character.roles.BoneRoles` (what the generator drew).

The motion library plays ground-truth motions on a member through these roles, so judge and teacher
data do not depend on how well :func:`~akd_blender.core.character.roles.find_roles` reads the member.
"""

from __future__ import annotations

import numpy as np

from akd_blender.core.character.roles import BodyFrame, BoneRoles, Limb
from akd_blender.core.character.roles.frame import unit, world_up
from tools.family.member import FamilyMember

__all__ = ["truth_roles"]


def _chain(truth: dict[int, str], role: str) -> tuple[int, ...]:
    """Bones labelled ``role``, parents first (a RigAsset lists parents before children)."""
    return tuple(sorted(b for b, r in truth.items() if r == role))


def _limbs(truth: dict[int, str], word: str) -> tuple[Limb, ...]:
    """Limbs whose role names start with ``word`` ("leg", "arm", "wing"): side and position from the name."""
    names = sorted({r for r in truth.values() if r.split(".")[0] == word})
    limbs = []
    for name in names:
        parts = name.split(".")
        limbs.append(Limb(side=parts[-1], position=parts[1] if len(parts) == 3 else "", bones=_chain(truth, name)))
    return tuple(limbs)


def truth_roles(member: FamilyMember) -> BoneRoles:
    """The member's drawn roles and body frame (up from ``armature_world``, forward from the drawn facing)."""
    rig, truth = member.rig, member.truth
    up = world_up(rig.armature_world)
    facing = np.linalg.solve(rig.armature_world[:3, :3], np.asarray(member.style.facing, dtype=np.float64))
    forward = unit(facing - (facing @ up) * up)
    skinned = rig.vertices[rig.weights.sum(1) > 0]
    along_up, along_forward = skinned @ up, skinned @ forward
    frame = BodyFrame(
        up=up,
        forward=forward,
        left=np.cross(up, forward),
        height=float(np.ptp(along_up)),
        length=float(np.ptp(along_forward)),
        ground=float(along_up.min()),
    )
    (root,) = _chain(truth, "root")
    head = _chain(truth, "head")
    return BoneRoles(
        kind=member.kind,
        frame=frame,
        root=root,
        spine=_chain(truth, "spine"),
        neck=_chain(truth, "neck"),
        head=head[-1] if head else None,
        tail=_chain(truth, "tail"),
        legs=_limbs(truth, "leg"),
        arms=_limbs(truth, "arm"),
        wings=_limbs(truth, "wing"),
    )
