"""Actions of control rigs are read as Blender evaluates their deform bones: the judge and Ground Action
see the motion, not the controls' channels."""

from __future__ import annotations

import bpy
import numpy as np
import torch

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.keys.keyframes import read_clip
from akd_blender.core.character.kinematics import Skeleton

from .helpers import evaluated_world_vertices
from .rig_zoo import ik_biped


def test_a_keyed_ik_target_is_read_as_the_deform_bones_motion():
    arm, _body = ik_biped()
    rig = rig_from_armature(arm)
    assert rig.deform_skeleton
    ik_targets = [c.subtarget for pb in arm.pose.bones for c in pb.constraints if c.type == "IK" and c.subtarget]
    target = arm.pose.bones[ik_targets[0]]
    action = bpy.data.actions.new("Lift")
    arm.animation_data_create().action = action
    target.location = (0.0, 0.0, 0.0)
    target.keyframe_insert("location", frame=1)
    target.location = (0.0, 0.0, 0.15 * rig.height)
    target.keyframe_insert("location", frame=5)
    clip = read_clip(arm, 1, 5, action=action, rig=rig)
    assert clip.bone_names == rig.bone_names and clip.num_frames == 5
    bpy.context.scene.frame_set(5)
    shown = evaluated_world_vertices(rig.mesh_names)
    with torch.no_grad():
        posed = Skeleton(rig, dtype=torch.float64)(clip).numpy()
    assert np.abs(posed[-1] - posed[0]).max() > 0.05 * rig.height  # the IK lifted the leg
    assert np.abs(posed[-1] - shown).max() < 1e-3 * rig.height  # as Blender shows it
    plain = read_clip(arm, 1, 5, action=action)
    assert len(plain.bone_names) == len(arm.pose.bones)  # without the mirror: every bone's own channels
