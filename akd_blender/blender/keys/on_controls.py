"""Key a motion of the deform bones onto the rig's controls, then check it in Blender's evaluation.

Needs: main thread, Object or Pose mode. A :class:`~akd_blender.core.motion.clip.MotionClip` of deform bones
(the mirror's deform skeleton: rotations relative to rest in its hierarchy) is turned into
armature-space targets [F,J,4,4] (:func:`deform_targets`). The controls found by
:func:`~.controls.probe.find_controls` are then posed frame by frame through Blender itself
(:func:`~.controls.pose.pose_frames`), and IK/FK switches are keyed at their FK value (one constant key).

The keys go into one new action (:func:`write_to_controls`); the previous action keeps a fake user;
constraints, drivers and other custom properties are not touched. Afterwards up to
:data:`CHECK_FRAMES` frames are evaluated and the deform bones' ``pose_bone.matrix`` compared with the
targets: positions (head and tail) in character heights, rotations in radians.
"""

from __future__ import annotations

import time

import bpy
import numpy as np
import torch

from ...core.character.kinematics import forward_kinematics
from ...core.errors import InputError
from ...core.motion.clip import MotionClip
from ..character.deform_skeleton import frame_offsets
from ..character.game_rig import source_layout
from ..controls.bound import BoundArmature, bound_for
from ..controls.check import (
    CHECK_FRAMES,
    POSITION_TOLERANCE,
    PROPERTY,
    ROTATION_TOLERANCE,
    ControlResult,
    check,
    result_of,
)
from ..controls.pose import pose_frames
from ..controls.rig import deform_parents, restore_pose_bone, rig_height, save_pose_bone, set_switches

__all__ = [
    "CHECK_FRAMES",
    "POSITION_TOLERANCE",
    "ROTATION_TOLERANCE",
    "ControlResult",
    "deform_targets",
    "write_to_controls",
    "check",
    "result_of",
]


def _followed_elsewhere(armature_obj: bpy.types.Object, bones) -> str:
    """``": they follow armature 'X' …"`` when constraints on ``bones`` take other armatures' bones as targets
    (a game rig copying a Rigify rig's deform bones), else ``""``."""
    others = sorted(
        {
            con.target.name
            for name in bones
            for con in armature_obj.pose.bones[name].constraints
            if not con.mute
            and getattr(con, "target", None) is not None
            and con.target != armature_obj
            and con.target.type == "ARMATURE"
        }
    )
    if not others:
        return ""
    named = ", ".join(f"'{n}'" for n in others)
    return (
        f": they follow armature {named} through constraints; another armature's controls are keyed only when every"
        " deform bone copies one of its bones whole (Copy Transforms, or Copy Location and Copy Rotation, world space)"
    )


def deform_targets(armature_obj: bpy.types.Object, clip: MotionClip) -> np.ndarray:
    """[F,J,4,4] armature-space matrices of the clip's bones (Blender's bone frames): the mirror's forward
    kinematics of ``clip`` (``core.kinematics.Skeleton`` of :func:`~.character.extract.rig_from_armature`, a flipped
    bone's frame turned back to Blender's, :func:`~.character.deform_skeleton.frame_offsets`) when the mirror's bones are the
    clip's; otherwise (no mesh to mirror, another bone set) the same kinematics over the deform
    skeleton's hierarchy (:func:`~.controls.rig.deform_parents`) with the bones' rest matrices, a bone
    whose deform parent is its Blender parent keeping Blender's inheritance flags, one re-parented past
    helper bones inheriting fully."""
    from ...core.character.kinematics import Skeleton
    from ...core.character.rig import RigError
    from ..character.extract import rig_from_armature

    try:
        rig = rig_from_armature(armature_obj)
    except RigError:
        rig = None
    if rig is not None and tuple(rig.bone_names) == tuple(clip.bone_names):
        posed = Skeleton(rig, torch.float64).pose_matrices(*clip.pose_channels(torch.float64)).numpy()
        return posed @ np.linalg.inv(frame_offsets(armature_obj, rig))  # flipped bones in Blender's frames
    bones = armature_obj.data.bones
    names = clip.bone_names
    parents = deform_parents(armature_obj, names)
    depth = np.zeros(len(names), dtype=np.int64)
    for i in range(len(names)):
        p, d = parents[i], 0
        while p >= 0:
            p, d = parents[p], d + 1
        depth[i] = d
    levels = [torch.as_tensor(np.flatnonzero(depth == d)) for d in range(int(depth.max()) + 1)]
    same = np.array(
        [(bones[n].parent.name if bones[n].parent else None) == (names[p] if p >= 0 else None) for n, p in zip(names, parents)]
    )
    flags = {  # a bone re-parented past helper bones inherits fully from its deform parent (as the mirror)
        "inherit_rotation": np.array([bones[n].use_inherit_rotation for n in names]) | ~same,
        "local_location": np.array([bones[n].use_local_location for n in names]) | ~same,
        "connected": np.array([bones[n].use_connect for n in names]) & same,
    }
    rest = torch.as_tensor(np.stack([np.array(bones[n].matrix_local) for n in names]), dtype=torch.float64)
    rotations, locations = clip.pose_channels(torch.float64)
    pose = forward_kinematics(
        rotations,
        locations,
        torch.as_tensor(parents),
        rest,
        torch.as_tensor(flags["inherit_rotation"]),
        torch.as_tensor(flags["local_location"]),
        torch.as_tensor(flags["connected"]),
        levels,
    )
    return pose.numpy()


def write_to_controls(
    armature_obj: bpy.types.Object,
    clip: MotionClip,
    name: str,
    sparse=None,
    interpolation: str = "BEZIER",
    bound: BoundArmature | None = None,
) -> bpy.types.Action:
    """Key ``clip`` (a motion of deform bones) onto ``armature_obj``'s controls in a new action ``name``.

    Returns the new action, assigned to the armature keyed, with :class:`ControlResult` as JSON in its
    ``"akd_controls"`` custom property (read it back with :func:`result_of`). ``sparse`` /
    ``interpolation`` as in :func:`~.keys.actions.write_action`. When every bone of the clip copies a bone of one
    other armature whole (a game rig over a control rig, :func:`.character.game_rig.followed_armature`), that armature's
    controls are keyed (the action is assigned to it; ``ControlResult.armature`` names it) so that its
    bones, and so the clip's, go where the clip has them. ``bound``: the job's binding of ``armature_obj``
    (:func:`~.controls.bound.bind_armature`), whose probe is taken while the rig is unchanged since (one probe
    per job); None or one of other bones: bound here. Raises InputError when the armature is in Edit Mode or
    the rig has no control that moves any of the clip's bones.
    """
    bound = bound_for(bound, armature_obj, clip.bone_names)
    followed = bound.followed
    for obj in (armature_obj, *followed[:1]) if followed is not None else (armature_obj,):
        if obj.mode == "EDIT":
            raise InputError(f"armature '{obj.name}' is in Edit Mode: leave it to key its controls")

    def height_of() -> float:
        return _height(armature_obj, clip.bone_names)

    if followed is None:
        return _key_controls(
            armature_obj, clip, name, sparse, interpolation, lambda: deform_targets(armature_obj, clip), height_of, bound
        )
    source, bones = followed
    to_source = np.linalg.inv(np.array(source.matrix_world)) @ np.array(armature_obj.matrix_world)
    copied = [bones[b] for b in clip.bone_names]
    order, names, parents = source_layout(source, copied, deform_parents(armature_obj, clip.bone_names))
    renamed = MotionClip(names, clip.fps, clip.frame_start, clip.rotations[:, order], clip.locations[:, order])

    def source_targets() -> np.ndarray:
        """The targets in ``source``'s armature space and bone order, each bone's axes of unit length again
        (the two objects' scales differ: a game rig in centimetres over a rig in metres)."""
        moved = to_source @ deform_targets(armature_obj, clip)[:, order]
        moved[..., :3, :3] /= np.linalg.norm(moved[..., :3, :3], axis=-2, keepdims=True)
        return moved

    action = _key_controls(source, renamed, name, sparse, interpolation, source_targets, height_of, bound, parents)
    result = result_of(action)
    result.armature = source.name
    action[PROPERTY] = result.to_json()
    return action


def _key_controls(
    armature_obj: bpy.types.Object,
    clip: MotionClip,
    name: str,
    sparse,
    interpolation: str,
    targets_of,
    height_of,
    bound: BoundArmature,
    parents: tuple[int, ...] | None = None,
) -> bpy.types.Action:
    """:func:`write_to_controls` on ``armature_obj`` for ``clip``'s bones (bones of ``armature_obj``), whose
    armature-space targets [F,J,4,4] ``targets_of()`` gives and the character's height (world units)
    ``height_of()``, both called once the armature's previous action is set aside; the controls from
    ``bound`` (:meth:`~.controls.bound.BoundArmature.control_map`); ``parents``: the bones' hierarchy when it
    is not ``armature_obj``'s own (:func:`~.controls.probe.find_controls`)."""
    from . import keyframes

    start = time.perf_counter()
    scene = bpy.context.scene
    saved_frame = scene.frame_current
    ad = armature_obj.animation_data
    previous = ad.action if ad is not None else None
    if ad is not None and previous is not None:  # probe and pose without the old animation
        previous.use_fake_user = True
        ad.action = None
    saved_pose = {pb.name: save_pose_bone(pb) for pb in armature_obj.pose.bones}
    cmap = None
    try:
        cmap = bound.control_map(armature_obj, tuple(clip.bone_names), parents)
        if not cmap.keyed:
            raise InputError(
                f"armature '{armature_obj.name}' has no animatable control that moves its deform bones"
                + _followed_elsewhere(armature_obj, clip.bone_names)
            )
        height = height_of()
        scale = max(max(abs(v) for v in armature_obj.matrix_world.to_scale()), 1e-12)
        targets = targets_of()
        quats, locs = pose_frames(armature_obj, cmap, targets, height / scale)
    except BaseException:
        for pb in armature_obj.pose.bones:
            restore_pose_bone(pb, saved_pose[pb.name])
        if cmap is not None:
            set_switches(armature_obj, cmap.switches, fk=False)
        if ad is not None:
            ad.action = previous
        bpy.context.view_layer.update()
        raise
    controls = MotionClip(tuple(cmap.keyed), clip.fps, clip.frame_start, quats, locs).continuous()

    action = keyframes.new_action(name)
    new_fcurve = keyframes.fcurve_factory(action, armature_obj)
    keyframes.key_clip(new_fcurve, armature_obj, controls, sparse, interpolation, height)
    for s in cmap.switches:
        path = f'pose.bones["{bpy.utils.escape_identifier(s.bone)}"]["{bpy.utils.escape_identifier(s.prop)}"]'
        keyframes.set_fcurve_keys(
            new_fcurve(path, 0, s.bone), np.array([float(clip.frame_start)]), np.array([s.fk_value]), "CONSTANT"
        )
    keyframes.finish_action(armature_obj, action, clip)
    result = check(armature_obj, clip, cmap, targets, height)
    result.keyed = list(cmap.keyed)
    result.switches = [f"{s.bone}[{s.prop}]={s.fk_value:g}" for s in cmap.switches]
    result.seconds = time.perf_counter() - start
    action[PROPERTY] = result.to_json()
    scene.frame_set(saved_frame)
    return action


def _height(armature_obj, names) -> float:
    """The character's height in world units: the deformed meshes' Z extent, else the deform bones'."""
    from ..character.io import skinned_meshes
    from ..character.pose_channels import character_height

    if skinned_meshes(armature_obj):
        return character_height(armature_obj)
    scale = max(abs(v) for v in armature_obj.matrix_world.to_scale())
    return rig_height(armature_obj, names) * scale
