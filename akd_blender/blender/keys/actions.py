"""Write a MotionClip as a new action: on the bones themselves (:mod:`.keys.keyframes`), or on a control rig's controls when constraints drive the clip's bones (:mod:`.keys.on_controls`)."""

from __future__ import annotations

import bpy

from ...core.errors import InputError
from ...core.motion.clip import MotionClip
from ..controls.bound import BoundArmature
from .keyframes import INTERPOLATION_CODES, SparseKeys, fcurve_factory, finish_action, key_clip, new_action

__all__ = ["write_action"]


def write_action(
    armature_obj: bpy.types.Object,
    clip: MotionClip,
    name: str,
    sparse: SparseKeys | None = None,
    interpolation: str = "BEZIER",
    bound: BoundArmature | None = None,
) -> bpy.types.Action:
    """Key ``clip`` into a new action called ``name`` (Blender adds .001 … if taken) and assign it.

    Args:
        armature_obj: the armature object whose pose bones are keyed (matched by bone name).
        clip: the motion; frame ``i`` is keyed at ``clip.frame_start + i``.
        name: the new action's name.
        sparse: reduce keys within these bounds (see :class:`SparseKeys`); None keys every frame.
        interpolation: ``"BEZIER"``, ``"LINEAR"`` or ``"CONSTANT"``.
        bound: the job's binding of ``armature_obj`` (:func:`~.controls.bound.bind_armature`): a control rig's
            probe made when the job read the rig, reused while the rig is unchanged; None: probed here.
    Returns:
        The new action, now the armature's active action, its frame range the clip's.

    When some of the clip's bones are moved by constraints or drivers (a control rig: Rigify's
    ``DEF-`` bones, IK chains), keys on them would do nothing: the clip is keyed onto the rig's
    controls instead (:func:`.keys.on_controls.write_to_controls`), and the action's ``"akd_controls"``
    custom property holds the bones keyed and the check in Blender's evaluation
    (:func:`.keys.on_controls.result_of`).
    """
    if armature_obj is None or armature_obj.type != "ARMATURE":
        raise InputError("write_action needs an armature object")
    if armature_obj.pose is None:
        bpy.context.view_layer.update()
    pose_bones = armature_obj.pose.bones
    missing = [b for b in clip.bone_names if b not in pose_bones]
    if missing:
        raise InputError(f"armature '{armature_obj.name}' has no bone named '{missing[0]}' (from the motion)")
    if interpolation not in INTERPOLATION_CODES:
        raise InputError(f"interpolation must be one of {', '.join(INTERPOLATION_CODES)}")
    from ..character.constraints import constraint_driven

    if constraint_driven(armature_obj, clip.bone_names):  # keys on these would do nothing: key the controls
        from .on_controls import write_to_controls

        return write_to_controls(armature_obj, clip, name, sparse, interpolation, bound)
    action = new_action(name)
    key_clip(fcurve_factory(action, armature_obj), armature_obj, clip, sparse, interpolation)
    finish_action(armature_obj, action, clip)
    return action
