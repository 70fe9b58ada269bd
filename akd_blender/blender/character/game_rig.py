"""A "game rig": a second armature whose bones copy a control rig's bones whole, the character's meshes bound
to it (as Rigify users export to game engines). Its bones have no control of their own; the keys go on the
rig it copies.

Needs: any mode (reads data only); call on Blender's main thread.
"""

from __future__ import annotations

import bpy

__all__ = ["followed_armature", "source_layout", "deform_bone_names"]


def followed_armature(armature_obj: bpy.types.Object, bones) -> tuple[bpy.types.Object, dict[str, str]] | None:
    """The armature whose bones ``bones`` (of ``armature_obj``) copy whole, and which bone each copies, or
    None. Each of ``bones`` must be placed by its enabled constraints exactly where one bone of that one
    other armature is: a Copy Transforms, or a Copy Location with a Copy Rotation (a Copy Scale beside them
    allowed), every one at full influence, world space to world space, on every axis, replacing (no
    offset, inversion or mixing), all on the same target bone (a "game rig" over a Rigify rig). Its bones'
    world matrices are then those bones'."""
    source, copied = None, {}
    for name in bones:
        pose_bone = armature_obj.pose.bones.get(name)
        if pose_bone is None:  # not this armature's bone: the caller names it
            return None
        live = [c for c in pose_bone.constraints if not c.mute and c.influence > 0.0]
        kinds = sorted(c.type for c in live)
        if kinds not in _WHOLE_COPIES or not all(_copies_whole(c) for c in live):
            return None
        targets = {(c.target, c.subtarget) for c in live}
        if len(targets) != 1:
            return None
        ((target, bone),) = targets
        if target is None or target == armature_obj or target.type != "ARMATURE" or bone not in target.data.bones:
            return None
        if source not in (None, target):
            return None
        source, copied[name] = target, bone
    return (source, copied) if source is not None else None


_WHOLE_COPIES = (
    ["COPY_TRANSFORMS"],
    ["COPY_LOCATION", "COPY_ROTATION"],
    ["COPY_LOCATION", "COPY_ROTATION", "COPY_SCALE"],
)


def _copies_whole(con) -> bool:
    """Whether constraint ``con`` copies its target's channel(s) as they are: full influence, world to world,
    every axis, no offset, inversion or mixing."""
    if con.influence < 1.0 - 1e-6 or con.target_space != "WORLD" or con.owner_space != "WORLD":
        return False
    if con.type == "COPY_TRANSFORMS":
        return con.mix_mode == "REPLACE"
    axes = all(getattr(con, f"use_{a}") for a in "xyz")
    if con.type == "COPY_LOCATION":
        return axes and not con.use_offset and not any(getattr(con, f"invert_{a}") for a in "xyz")
    if con.type == "COPY_ROTATION":
        return axes and con.mix_mode == "REPLACE" and not any(getattr(con, f"invert_{a}") for a in "xyz")
    if con.type == "COPY_SCALE":
        return axes and not con.use_offset and not con.use_add and abs(con.power - 1.0) < 1e-9
    return False


def deform_bone_names(armature_obj: bpy.types.Object) -> list[str]:
    """The armature's deform bones (``use_deform``), Blender order."""
    return [b.name for b in armature_obj.data.bones if b.use_deform]


def source_layout(source: bpy.types.Object, copied: list[str], parents) -> tuple[list[int], tuple[str, ...], tuple[int, ...]]:
    """How ``source``'s bones that a game rig's bones copy are probed: ``copied`` (the source bone each game
    bone copies, game order) and the game bones' ``parents`` (index, -1 for none) give (``order``: indices
    into game order putting the bones in ``source``'s own bone order, the source's bone names in that order,
    their parents as indices into it). In ``source``'s own order the control probe
    (:func:`~.controls.probe.find_controls`) fits a shared control to the bone it would on that rig itself
    (Rigify's horse: one spine tweak turning both hip bones); over the game rig's hierarchy, since the source
    deforms no mesh itself and has no deform skeleton of its own then."""
    position = {b.name: i for i, b in enumerate(source.data.bones)}
    order = sorted(range(len(copied)), key=lambda i: position[copied[i]])
    new_index = {old: new for new, old in enumerate(order)}
    reordered = tuple(new_index[int(parents[old])] if int(parents[old]) >= 0 else -1 for old in order)
    return order, tuple(copied[i] for i in order), reordered
