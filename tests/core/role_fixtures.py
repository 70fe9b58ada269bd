"""Characters with their bone roles for the role-based motion library's tests: the two procedural
characters and family members, roles found by :func:`find_roles` (read from the family's own truth
for a member the finder takes for another kind)."""

from __future__ import annotations

import dataclasses

from akd_blender.core.procedural.characters import biped, quadruped
from akd_blender.core.procedural.family import make_member
from akd_blender.core.rig import RigAsset
from akd_blender.core.roles import BoneRoles, Limb, find_roles


def roles_from_truth(rig: RigAsset, truth: dict[int, str], kind: str) -> BoneRoles:
    """BoneRoles of ``kind`` from a family member's truth (bone → role name as ``role_of`` names it),
    with the body frame :func:`find_roles` finds. Chains are in bone order (parents first)."""
    frame = find_roles(rig).frame
    by_role: dict[str, list[int]] = {}
    for bone in sorted(truth):
        by_role.setdefault(truth[bone], []).append(bone)

    def limbs(word: str) -> tuple[Limb, ...]:
        out = []
        for name, bones in by_role.items():
            parts = name.split(".")
            if parts[0] == word:
                out.append(Limb(parts[-1], parts[1] if len(parts) == 3 else "", tuple(bones)))
        return tuple(out)

    return BoneRoles(
        kind=kind,
        frame=frame,
        root=by_role["root"][0],
        spine=tuple(by_role.get("spine", ())),
        neck=tuple(by_role.get("neck", ())),
        head=by_role["head"][0] if "head" in by_role else None,
        tail=tuple(by_role.get("tail", ())),
        legs=limbs("leg"),
        arms=limbs("arm"),
        wings=limbs("wing"),
    )


def family_character(kind: str, seed: int) -> tuple[RigAsset, BoneRoles]:
    """A family member and its roles: found by :func:`find_roles`, or read from the family's truth
    when the finder takes the member for another kind."""
    member = make_member(kind, seed)
    found = find_roles(member.rig)
    if found.kind != kind:
        return member.rig, roles_from_truth(member.rig, member.truth, kind)
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
