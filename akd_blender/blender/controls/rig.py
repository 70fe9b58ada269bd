"""Read a control rig: its animatable bones, constraint-driven bones, IK chains and IK/FK switches.

Needs: main thread, Object or Pose mode. :func:`find_switches` changes switch properties and pose
channels temporarily (restored exactly) and leaves each switch it finds at its FK value; everything
else here only reads.

- *constraint-driven* bones: :func:`~.character.constraints.constraint_driven`.
- *animatable bones* (candidates): shown in a visible bone collection (or in none), not hidden, a
  rotation or location channel unlocked, not in an IK chain or driven by a driver, and either free of
  constraints that move it or a segment of a rotation chain (Copy Rotation mixed before or after its
  own rotation, as Rigify's tail and finger controls are) that its own rotation still turns (probed).
- *switch*: a number custom property of a pose bone that a driver reads to set a constraint's
  influence. It is an IK/FK switch when moving the rig's IK handles (each IK target, or its nearest
  animatable ancestor when the target is a mechanism bone) moves fewer deform bones at one end of
  its range (``id_properties_ui`` min/max, else 0/1) than at the other; that end is its FK value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ..character.constraints import TRANSFORM_CHANNELS, driven_channels, driving_constraints, ik_chain

if TYPE_CHECKING:
    from mathutils import Matrix

__all__ = [
    "save_pose_bone",
    "restore_pose_bone",
    "PROBE_ANGLE",
    "PROBE_SHIFT",
    "Switch",
    "pose_matrices",
    "deform_parents",
    "ik_targets",
    "candidates",
    "rig_height",
    "find_switches",
    "set_switches",
    "is_bone_shown",
    "probe_turn_basis",
    "probe_shift_basis",
]

PROBE_ANGLE = 0.3  # radians
PROBE_SHIFT = 0.05  # fraction of the rig's height


@dataclass(frozen=True)
class Switch:
    """An IK/FK switch: ``pose.bones[bone][prop]``, its value now and the value at which FK controls move
    the deform bones."""

    bone: str
    prop: str
    value: float
    fk_value: float


def pose_matrices(armature_obj: bpy.types.Object) -> np.ndarray:
    """[B,4,4] every pose bone's ``matrix`` (armature space), as last evaluated."""
    bones = armature_obj.pose.bones
    buf = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix", buf)
    return buf.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)


def deform_parents(armature_obj: bpy.types.Object, names) -> np.ndarray:
    """int [N]: each of ``names``' parent among them (index), -1 for none: the deform skeleton's parent
    (:func:`~.character.deform_skeleton.find_deform_skeleton`, walked up to a bone of ``names``) when ``names``
    are bones of it, else the nearest Blender ancestor among ``names``."""
    from ..character.deform_skeleton import find_deform_skeleton

    index = {n: i for i, n in enumerate(names)}
    parents = np.full(len(names), -1, dtype=np.int64)
    skeleton = find_deform_skeleton(armature_obj)
    if set(names) <= set(skeleton.bones):
        position = {n: i for i, n in enumerate(skeleton.bones)}
        for i, name in enumerate(names):
            p = skeleton.parents[position[name]]
            while p >= 0 and skeleton.bones[p] not in index:
                p = skeleton.parents[p]
            parents[i] = -1 if p < 0 else index[skeleton.bones[p]]
        return parents
    for i, name in enumerate(names):
        bone = armature_obj.data.bones[name].parent
        while bone is not None and bone.name not in index:
            bone = bone.parent
        parents[i] = -1 if bone is None else index[bone.name]
    return parents


def is_bone_shown(bone: bpy.types.Bone) -> bool:
    """True when ``bone`` is not hidden and is in no bone collection or in one that is shown (visible
    itself and through its parents where Blender tells)."""
    if bone.hide:
        return False
    collections = list(bone.collections)
    return not collections or any(getattr(c, "is_visible_effectively", c.is_visible) for c in collections)


def candidates(armature_obj) -> list[str]:
    """The animatable bones (see the module docstring), Blender order."""
    pose = armature_obj.pose.bones
    in_chain = {name for pb in pose for name in ik_chain(pb)}
    driven = driven_channels(armature_obj)
    out, constrained = [], []
    for pb in pose:
        if pb.name in in_chain or pb.name in driven or not is_bone_shown(pb.bone):
            continue
        if all(pb.lock_location) and all(pb.lock_rotation) and pb.rotation_mode != "AXIS_ANGLE":
            continue
        driving = driving_constraints(pb)
        if not driving:
            out.append(pb.name)
        elif all(c.type == "COPY_ROTATION" and (c.mix_mode != "REPLACE" or c.use_offset) for c in driving):
            constrained.append(pb.name)  # a rotation chain's segment (Rigify's tail and finger controls)
    keep = set(out) | _own_channels_count(armature_obj, constrained)
    return [pb.name for pb in pose if pb.name in keep]


def _own_channels_count(armature_obj, names: list[str]) -> set[str]:
    """Those of the constrained bones ``names`` whose own rotation (else location) channel still turns or
    moves them in Blender's evaluation (a channel that only rolls the bone does not count). Probed one
    bone at a time (:func:`probe_turn_basis`, else :func:`probe_shift_basis` by 5 % of its length), each restored
    exactly."""
    pose = armature_obj.pose.bones
    out = set()
    for name in names:
        pb = pose[name]
        basis = probe_turn_basis(pb)
        basis = basis if basis is not None else probe_shift_basis(pb, 0.05 * pb.bone.length)
        if basis is None:
            continue
        before, saved = np.array(pb.matrix), save_pose_bone(pb)
        pb.matrix_basis = basis
        bpy.context.view_layer.update()
        after = np.array(pb.matrix)
        restore_pose_bone(pb, saved)
        axes = [m[:3, 1] / max(float(np.linalg.norm(m[:3, 1])), 1e-12) for m in (before, after)]
        turned = np.abs(axes[1] - axes[0]).max() > 1e-3
        if turned or np.abs(after[:3, 3] - before[:3, 3]).max() > 1e-4 * max(pb.bone.length, 1e-6):
            out.add(name)
    if names:
        bpy.context.view_layer.update()
    return out


def probe_turn_basis(pb: bpy.types.PoseBone) -> Matrix | None:
    """``pb``'s basis matrix (4×4) turned by PROBE_ANGLE about a fixed skew axis with locked axes left out, or None."""
    from mathutils import Matrix, Vector

    axis = Vector([0.0 if lock else w for lock, w in zip(pb.lock_rotation, (0.45, 0.62, 0.64))])
    if pb.rotation_mode == "AXIS_ANGLE":
        axis = Vector((0.45, 0.62, 0.64))
    if axis.length < 1e-6:
        return None
    return pb.matrix_basis @ Matrix.Rotation(PROBE_ANGLE, 4, axis.normalized())


def probe_shift_basis(pb: bpy.types.PoseBone, shift: float) -> Matrix | None:
    """``pb``'s basis matrix (4×4) moved by ``shift`` (armature units) along a skew direction with locked axes left out, or None."""
    from mathutils import Matrix, Vector

    step = Vector([0.0 if lock else w for lock, w in zip(pb.lock_location, (0.5, 0.6, 0.62))])
    if step.length < 1e-6 or (pb.bone.use_connect and pb.parent is not None):
        return None
    return Matrix.Translation(step.normalized() * shift) @ pb.matrix_basis


def save_pose_bone(pb) -> tuple:
    """A pose bone's channels (location, rotations, scale) as a tuple, for :func:`restore_pose_bone`."""
    return tuple(tuple(getattr(pb, ch)) for ch in TRANSFORM_CHANNELS)


def restore_pose_bone(pb, saved: tuple) -> None:
    """Set a pose bone's channels back to ``saved`` (:func:`save_pose_bone`)."""
    for ch, value in zip(TRANSFORM_CHANNELS, saved):
        setattr(pb, ch, value)


def rig_height(armature_obj, names) -> float:
    """Z extent (armature units) of the heads and tails of bones ``names`` at rest (≥ 1e-6)."""
    bones = armature_obj.data.bones
    z = [p[2] for n in names for p in (bones[n].head_local, bones[n].tail_local)]
    return max(float(np.ptp(z)) if z else 1.0, 1e-6)


def _switch_props(armature_obj) -> list[tuple[str, str]]:
    """(bone, property) of pose-bone number properties read by drivers of constraint influences."""
    ad = armature_obj.animation_data
    found = []
    if ad is None:
        return found
    pose = armature_obj.pose.bones
    for fc in ad.drivers:
        if not (
            fc.data_path.startswith("pose.bones[") and ".constraints[" in fc.data_path and fc.data_path.endswith(".influence")
        ):
            continue
        for var in fc.driver.variables:
            for target in var.targets:
                path = target.data_path or ""
                if target.id != armature_obj or not path.startswith('pose.bones["') or '"]["' not in path:
                    continue
                bone, prop = path[len('pose.bones["') : -2].split('"]["', 1)
                if bone in pose and isinstance(pose[bone].get(prop), (int, float)) and (bone, prop) not in found:
                    found.append((bone, prop))
    return found


def ik_targets(armature_obj) -> list[tuple]:
    """(owner pose bone, IK constraint) of every enabled IK constraint with a bone target in this rig."""
    return [
        (pb, con)
        for pb in armature_obj.pose.bones
        for con in driving_constraints(pb)
        if con.type == "IK" and con.target == armature_obj and con.subtarget in armature_obj.pose.bones
    ]


def _ik_handles(armature_obj, candidates: set[str]) -> list:
    """For every IK constraint's target: the target itself when it is a candidate, else its nearest
    candidate ancestor (the control that moves a mechanism target); pose bones, no repeats."""
    out = []
    for _, con in ik_targets(armature_obj):
        bone = armature_obj.pose.bones[con.subtarget]
        while bone is not None and bone.name not in candidates:
            bone = bone.parent
        if bone is not None and bone not in out:
            out.append(bone)
    return out


def find_switches(armature_obj, deform_idx: np.ndarray, height: float, candidates: set[str]) -> list[Switch]:
    """IK/FK switches and their FK values (see the module docstring); leaves them at their FK value."""
    props = _switch_props(armature_obj)
    handles = _ik_handles(armature_obj, candidates)
    if not props or not handles:
        return []
    from mathutils import Matrix, Vector

    step = Vector((0.3, -0.4, 0.5)).normalized() * PROBE_SHIFT * height
    turn = Matrix.Rotation(PROBE_ANGLE, 4, Vector((0.45, 0.62, 0.64)).normalized())

    def moved_by_handles() -> int:
        armature_obj.update_tag()  # a custom property set: its drivers evaluate again
        bpy.context.view_layer.update()
        base = pose_matrices(armature_obj)[deform_idx]
        saved = [save_pose_bone(h) for h in handles]
        for h in handles:
            h.matrix_basis = Matrix.Translation(step) @ h.matrix_basis @ turn
        bpy.context.view_layer.update()
        after = pose_matrices(armature_obj)[deform_idx]
        for h, s in zip(handles, saved):
            restore_pose_bone(h, s)
        return int((np.abs(after - base).max(axis=(1, 2)) > 1e-5 * max(height, 1.0)).sum())

    switches = []
    for bone, prop in props:
        pb = armature_obj.pose.bones[bone]
        value = pb[prop]
        ui = pb.id_properties_ui(prop).as_dict()
        low, high = ui.get("min", 0.0), ui.get("max", 1.0)
        counts = []
        for v in (low, high):
            pb[prop] = type(value)(v)
            counts.append(moved_by_handles())
        pb[prop] = value
        if counts[0] != counts[1]:
            switches.append(Switch(bone, prop, float(value), float(low if counts[0] < counts[1] else high)))
    set_switches(armature_obj, switches, fk=True)
    return switches


def set_switches(armature_obj, switches: list[Switch], fk: bool) -> None:
    """Set each switch's property to its FK value (``fk``) or back to the value it had when found, then
    have Blender evaluate the rig again, drivers included (a custom property set alone does not)."""
    for s in switches:
        pb = armature_obj.pose.bones[s.bone]
        pb[s.prop] = type(pb[s.prop])(s.fk_value if fk else s.value)
    armature_obj.update_tag()
    bpy.context.view_layer.update()
