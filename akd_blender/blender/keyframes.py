"""Write a MotionClip into a new Blender Action, on Blender 4.2 → 5.0.

Needs: any mode; main thread. Creates a new action (a unique name, never overwriting one), keys
every bone of the clip in its own ``rotation_mode`` (quaternion keys sign-continuous, Euler keys
unwrapped, axis-angle) plus ``location``, and makes it the armature's active action. The previous
active action keeps existing: it gets a fake user so saving the file keeps it, and NLA tracks are
left alone.

Blender API differences handled here (see shared notes): 4.2/4.3 have ``action.fcurves``; 4.4+
have slotted actions (slot → layer → keyframe strip → channelbag) and 4.5's ``action.fcurves``
proxy must not be used on a slotless action; 5.0 removed ``action.fcurves``.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np
import torch

from ..core.errors import InputError
from ..core.motion import MotionClip
from ..core.rotations import make_quat_continuous, quat_to_euler, quat_to_rotvec

__all__ = ["SparseKeys", "write_action", "read_clip", "current_pose", "channel_values"]

_INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


@dataclass(frozen=True)
class SparseKeys:
    """Tolerance-based key reduction: keep only the keys needed so that Blender's own curve
    evaluation stays within ``rotation`` (quaternion / axis-angle / Euler-radian channel units)
    and ``location`` (Blender units) of the clip at every frame."""

    rotation: float = 1e-3
    location: float = 1e-3


def channel_values(clip: MotionClip, bone: int, rotation_mode: str) -> dict[str, np.ndarray]:
    """Per-frame values of one bone's channels in its rotation mode.

    Returns ``{data property: [F,C] values}``: ``rotation_quaternion`` (w,x,y,z, sign-continuous),
    ``rotation_axis_angle`` (angle, x, y, z) or ``rotation_euler`` (x, y, z radians, unwrapped),
    and ``location`` [F,3].
    """
    quat = torch.as_tensor(clip.rotations[:, bone], dtype=torch.float64)
    quat = quat / quat.norm(dim=-1, keepdim=True)
    if rotation_mode == "QUATERNION":
        rot = {"rotation_quaternion": make_quat_continuous(quat).numpy()}
    elif rotation_mode == "AXIS_ANGLE":
        rotvec = quat_to_rotvec(quat).numpy()
        angle = np.linalg.norm(rotvec, axis=-1, keepdims=True)
        axis = np.where(angle > 1e-12, rotvec / np.maximum(angle, 1e-12), [0.0, 1.0, 0.0])
        rot = {"rotation_axis_angle": np.concatenate([angle, axis], axis=-1)}
    else:
        rot = {"rotation_euler": np.unwrap(quat_to_euler(quat, rotation_mode).numpy(), axis=0)}
    return {**rot, "location": np.asarray(clip.locations[:, bone], dtype=np.float64)}


def write_action(
    armature_obj: bpy.types.Object,
    clip: MotionClip,
    name: str,
    sparse: SparseKeys | None = None,
    interpolation: str = "BEZIER",
) -> bpy.types.Action:
    """Key ``clip`` into a new action called ``name`` (Blender adds .001 … if taken) and assign it.

    Args:
        armature_obj: the armature object whose pose bones are keyed (matched by bone name).
        clip: the motion; frame ``i`` is keyed at ``clip.frame_start + i``.
        name: the new action's name.
        sparse: reduce keys within these tolerances; None keys every frame.
        interpolation: ``"BEZIER"``, ``"LINEAR"`` or ``"CONSTANT"``.
    Returns:
        The new action, now the armature's active action.
    """
    if armature_obj is None or armature_obj.type != "ARMATURE":
        raise InputError("write_action needs an armature object")
    if armature_obj.pose is None:
        bpy.context.view_layer.update()
    pose_bones = armature_obj.pose.bones
    missing = [b for b in clip.bone_names if b not in pose_bones]
    if missing:
        raise InputError(f"armature '{armature_obj.name}' has no bone named '{missing[0]}' (from the motion)")
    if interpolation not in _INTERPOLATION:
        raise InputError(f"interpolation must be one of {', '.join(_INTERPOLATION)}")

    action = bpy.data.actions.new(name)
    if hasattr(action, "id_root"):  # 4.2 / 4.3 legacy actions
        action.id_root = "OBJECT"
    new_fcurve = _fcurve_factory(action, armature_obj)
    frames = clip.frame_start + np.arange(clip.num_frames, dtype=np.float64)
    for bone_index, bone in enumerate(clip.bone_names):
        pb = pose_bones[bone]
        for prop, values in channel_values(clip, bone_index, pb.rotation_mode).items():
            path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
            tol = None if sparse is None else (sparse.location if prop == "location" else sparse.rotation)
            for index in range(values.shape[1]):
                fcurve = new_fcurve(path, index, bone)
                _key_fcurve(fcurve, frames, values[:, index], interpolation, tol)
    _assign(armature_obj, action)
    return action


def _fcurve_factory(action, obj):
    """A function (data_path, index, group) → new F-curve in ``action`` for ``obj``, any version."""
    if not hasattr(action, "slots"):  # 4.2 / 4.3: legacy actions
        return lambda path, index, group: action.fcurves.new(path, index=index, action_group=group)
    slot = action.slots.new(id_type="OBJECT", name=obj.name)
    layer = action.layers.new("Layer")
    strip = layer.strips.new(type="KEYFRAME")
    bag = strip.channelbag(slot, ensure=True)
    action["_akd_slot"] = slot.identifier  # picked up by _assign

    def new(path: str, index: int, group: str):
        grp = bag.groups.get(group) or bag.groups.new(group)
        fcurve = bag.fcurves.new(path, index=index)
        fcurve.group = grp
        return fcurve

    return new


def _assign(obj, action) -> None:
    """Make ``action`` active on ``obj`` (with its slot on 4.4+), keeping the previous one."""
    ad = obj.animation_data or obj.animation_data_create()
    previous = ad.action
    if previous is not None:
        previous.use_fake_user = True  # unassigned but kept, and saved with the file
    ad.action = action
    if hasattr(action, "slots"):
        identifier = action.pop("_akd_slot")
        ad.action_slot = next(s for s in action.slots if s.identifier == identifier)


def _key_fcurve(fcurve, frames: np.ndarray, values: np.ndarray, interpolation: str, tolerance: float | None) -> None:
    """Key ``values`` [F] at ``frames`` [F]; with a tolerance, keep the fewest keys that Blender's
    evaluation of the curve reproduces within it (start from the end keys, add the worst frame of
    every out-of-tolerance run until none is left)."""
    if tolerance is None:
        _set_keys(fcurve, frames, values, interpolation)
        return
    keep = np.zeros(len(frames), dtype=bool)
    keep[[0, -1]] = True
    while True:
        _set_keys(fcurve, frames[keep], values[keep], interpolation)
        error = np.abs(np.array([fcurve.evaluate(f) for f in frames]) - values)
        bad = error > tolerance
        if not bad.any():
            return
        # one new key per run of consecutive bad frames, at its worst frame
        runs = np.split(np.flatnonzero(bad), np.flatnonzero(np.diff(np.flatnonzero(bad)) > 1) + 1)
        for run in runs:
            keep[run[np.argmax(error[run])]] = True


def _set_keys(fcurve, frames: np.ndarray, values: np.ndarray, interpolation: str) -> None:
    points = fcurve.keyframe_points
    if len(points):
        points.clear()
    points.add(len(frames))
    points.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
    points.foreach_set("interpolation", np.full(len(frames), _INTERPOLATION[interpolation], dtype=np.int32))
    fcurve.update()


def read_clip(
    armature_obj: bpy.types.Object,
    frame_start: int,
    frame_end: int,
    action: bpy.types.Action | None = None,
    fps: float | None = None,
) -> MotionClip:
    """Blender's evaluated pose channels over ``frame_start..frame_end`` (inclusive) as a MotionClip.

    With ``action`` given it is evaluated alone (NLA tracks ignored); otherwise the armature's
    current animation is. Rotations come from ``pose_bone.matrix_basis`` (any rotation mode).
    The scene's current frame and the armature's action, slot and pose are restored afterwards.
    Needs: main thread, any mode.
    """
    scene = bpy.context.scene
    ad = armature_obj.animation_data
    saved_frame = scene.frame_current
    saved = (ad.action, getattr(ad, "action_slot", None), ad.use_nla) if ad else None
    saved_pose = [pb.matrix_basis.copy() for pb in armature_obj.pose.bones]
    try:
        if action is not None:
            ad = ad or armature_obj.animation_data_create()
            ad.use_nla = False
            ad.action = action
            if hasattr(ad, "action_slot") and ad.action_slot is None and len(action.slots):
                ad.action_slot = action.slots[0]
        frames = range(int(frame_start), int(frame_end) + 1)
        bones = armature_obj.pose.bones
        rotations = np.empty((len(frames), len(bones), 4))
        locations = np.empty((len(frames), len(bones), 3))
        for i, frame in enumerate(frames):
            scene.frame_set(frame)
            for j, pb in enumerate(bones):
                rotations[i, j] = tuple(pb.matrix_basis.to_quaternion())
                locations[i, j] = tuple(pb.location)
    finally:
        if saved is not None:
            ad.action, ad.use_nla = saved[0], saved[2]
            if saved[1] is not None:
                ad.action_slot = saved[1]
        elif armature_obj.animation_data is not None:
            armature_obj.animation_data_clear()
        scene.frame_set(saved_frame)
        if armature_obj.animation_data is None or armature_obj.animation_data.action is None:
            for pb, basis in zip(armature_obj.pose.bones, saved_pose):
                pb.matrix_basis = basis
    names = tuple(b.name for b in armature_obj.data.bones)
    clip = MotionClip(names, float(fps or scene.render.fps / scene.render.fps_base), int(frame_start), rotations, locations)
    return clip.continuous()


def current_pose(armature_obj: bpy.types.Object) -> MotionClip:
    """The armature's pose as it is now (one frame, Blender order): rotations from each pose bone's
    ``matrix_basis`` (any rotation mode), locations from ``location``. Changes nothing."""
    bones = armature_obj.pose.bones
    rotations = np.array([tuple(pb.matrix_basis.to_quaternion()) for pb in bones], dtype=np.float64)
    locations = np.array([tuple(pb.location) for pb in bones], dtype=np.float64)
    names = tuple(b.name for b in armature_obj.data.bones)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    return MotionClip(names, float(fps), int(bpy.context.scene.frame_current), rotations[None], locations[None])
