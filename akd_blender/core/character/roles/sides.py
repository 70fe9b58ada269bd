"""The sides a rig's bone names state (``thigh.L``, ``calf_r``, ``LeftArm``, ``Bip01 R Foot``, ``L_Hand`` …),
checked against the sides its body shows. Roles never read names; this is only the check that warns
when the names and the body disagree (a rig whose ``_l`` bones are on the body's right, or a body the
roles read facing the other way than its maker meant)."""

from __future__ import annotations

import re

import numpy as np

from ..rig import RigAsset
from .describe import world_direction_name
from .types import LIMB_GROUPS, BoneRoles

__all__ = ["named_side", "side_name_warning"]

_SIDE_WORDS = {"l": "left", "left": "left", "r": "right", "right": "right"}
# a side word standing apart from the rest of the name: "thigh.L", "calf_r", "Bip01 L Foot", "L_Hand", "hand-l"
_SEPARATED = re.compile(r"(?:^|[._\- :])(l|r|left|right)(?=$|[._\- :0-9])", re.IGNORECASE)
# a side word run into the name in CamelCase: "LeftArm", "mixamorig:RightUpLeg", "upperArmLeft"
_CAMEL = re.compile(r"(?:^|(?<=[a-z0-9:_]))(Left|Right)(?=[A-Z0-9_.:]|$)")
MISMATCH_SHARE = 0.75  # the names disagree when this share of the limb bones that name a side name the other


def named_side(name: str) -> str | None:
    """The side ``name`` states, "left" or "right", or None when it states none or both."""
    found = {_SIDE_WORDS[m.lower()] for m in _SEPARATED.findall(name)}
    found |= {_SIDE_WORDS[m.lower()] for m in _CAMEL.findall(name)}
    return found.pop() if len(found) == 1 else None


def side_name_warning(rig: RigAsset, roles: BoneRoles) -> str | None:
    """One line when the sides the limb bones' names state disagree with the sides the body shows: at
    least :data:`MISMATCH_SHARE` of the left and right limb bones that name a side name the other one
    (every limb bone mirrored: the body is read facing the other way from the names). None when they
    agree, or when fewer than two limb bones name a side."""
    named, crossed = 0, []
    for group in LIMB_GROUPS:
        for limb in getattr(roles, group):
            if limb.side not in ("left", "right"):
                continue
            for b in limb.bones:
                side = named_side(rig.bone_names[b])
                if side is None:
                    continue
                named += 1
                if side != limb.side:
                    crossed.append(rig.bone_names[b])
    if named < 2 or len(crossed) < MISMATCH_SHARE * named:
        return None
    facing = world_direction_name(np.asarray(rig.armature_world)[:3, :3] @ roles.frame.forward)
    shown = ", ".join(f"'{n}'" for n in crossed[:3]) + (" …" if len(crossed) > 3 else "")
    return (
        f"armature '{rig.name}': the bone names state the other side from the one the body shows ({shown}); "
        f"the body faces {facing} (its feet, knees and face), so a motion's left and right follow the body, not the names"
    )
