"""Characters with their bone roles for the role-based motion library's tests: the two procedural
characters and family members, roles found by :func:`find_roles` (read from the family's own truth
for a member the finder takes for another kind)."""

from __future__ import annotations

import dataclasses

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rig import RigAsset
from akd_blender.core.character.roles import BoneRoles, find_roles
from tools.family import make_member
from tools.family.truth import truth_roles


def family_character(kind: str, seed: int) -> tuple[RigAsset, BoneRoles]:
    """A family member and its roles: found by :func:`find_roles`, or read from the family's truth
    when the finder takes the member for another kind."""
    member = make_member(kind, seed)
    found = find_roles(member.rig)
    if found.kind != kind:
        return member.rig, truth_roles(member)
    return member.rig, found


def with_kind(roles: BoneRoles, kind: str) -> BoneRoles:
    """The same roles labelled as another kind."""
    return dataclasses.replace(roles, kind=kind)


def procedural_characters() -> dict[str, tuple[RigAsset, BoneRoles]]:
    """kind → (rig, roles): the procedural biped and quadruped (found roles), a family bird and a
    family hexapod."""
    b, q = biped(), quadruped()
    return {
        "biped": (b, find_roles(b)),
        "quadruped": (q, find_roles(q)),
        "bird": family_character("bird", 2),
        "hexapod": family_character("hexapod", 3),
    }
