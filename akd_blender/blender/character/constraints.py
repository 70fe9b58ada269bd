"""Which pose bones Blender's constraints, IK chains and drivers move, so that keys on their own channels do nothing.

*Constraint-driven* bones: an enabled constraint other than Limit Rotation/Location/Scale/Distance with
influence > 0, a place in an IK chain (the owner and ``chain_count`` ancestors), or a driver on a
location/rotation/scale channel. Reads only; main thread.
"""

from __future__ import annotations

import bpy

__all__ = ["TRANSFORM_CHANNELS", "driving_constraints", "ik_chain", "constraint_driven", "driven_channels"]

TRANSFORM_CHANNELS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
"""A pose bone's transform channels (its properties' names): location, the three rotation modes, scale."""
_NON_DRIVING = {"LIMIT_ROTATION", "LIMIT_LOCATION", "LIMIT_SCALE", "LIMIT_DISTANCE"}


def driving_constraints(pb) -> list:
    """The enabled constraints of pose bone ``pb`` that override its transform (not limits)."""
    return [c for c in pb.constraints if not c.mute and c.influence > 0.0 and c.type not in _NON_DRIVING]


def ik_chain(pb) -> list:
    """The bones an IK constraint on ``pb`` moves: ``pb`` and its ancestors up to ``chain_count``."""
    out = []
    for con in driving_constraints(pb):
        if con.type != "IK":
            continue
        bone, count = pb, con.chain_count or 10**6
        while bone is not None and count > 0:
            out.append(bone.name)
            bone, count = bone.parent, count - 1
    return out


def constraint_driven(armature_obj: bpy.types.Object, names) -> list[str]:
    """Those of bones ``names`` whose keys Blender overrides: a transform constraint, an IK chain, or a
    driver on a pose channel."""
    pose = armature_obj.pose.bones
    in_chain = {n for pb in pose for n in ik_chain(pb)}
    driven = driven_channels(armature_obj)
    return [n for n in names if n in in_chain or n in driven or driving_constraints(pose[n])]


def driven_channels(armature_obj: bpy.types.Object) -> set[str]:
    """Names of the pose bones with a driver on a transform channel (:data:`TRANSFORM_CHANNELS`)."""
    out = set()
    if armature_obj.animation_data is not None:
        for fc in armature_obj.animation_data.drivers:
            path = fc.data_path
            if path.startswith('pose.bones["') and path.rsplit(".", 1)[-1] in TRANSFORM_CHANNELS:
                out.add(path[len('pose.bones["') :].split('"]', 1)[0])
    return out
