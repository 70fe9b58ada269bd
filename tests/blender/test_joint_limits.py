"""A rig whose joint limits forbid the pose a motion asks for: the job says so in a warning naming the
joint, instead of letting Blender play a smaller motion silently; within its limits, no such warning."""

from __future__ import annotations

from dataclasses import replace

import bpy
import numpy as np

from akd_blender.blender.build import armature_from_rig
from akd_blender.blender.character.deform_skeleton import start_pose
from akd_blender.blender.job.apply import apply_clips
from akd_blender.blender.job.rig import job_rig
from akd_blender.blender.keys.keyframes import read_clip
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.distillation.library_start import library_motion
from akd_blender.core.motion.joint_limits import beyond_limits
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.prompt.reading import LibraryChoice


def _raise_arms(limits: dict[str, float]) -> tuple[list[str], dict, float]:
    """The job's raise_arms on the procedural biped built with a Limit Rotation of ±``limits[bone]``
    degrees on every local axis of each named bone: the job's warnings, :func:`beyond_limits` of the
    clip and how high the right hand's tip ends above the head's top (Blender's evaluation, heights)."""
    rig = biped()
    bounds = rig.rotation_limits.copy()
    for bone, degrees in limits.items():
        bounds[rig.bone_index(bone)] = np.deg2rad([[-degrees, degrees]] * 3)
    arm = armature_from_rig(replace(rig, rotation_limits=bounds))
    mirror = job_rig(arm, None)
    roles = find_roles(mirror)
    clip = library_motion(mirror, roles, LibraryChoice("biped", "raise_arms", Variation()), 24, 24.0, start_pose(arm, mirror))
    applied = apply_clips(arm, mirror, [(clip, "raise arms")], keys="dense", set_scene_range=False)
    evaluated = read_clip(arm, clip.frame_start, clip.frame_end, action=bpy.data.actions[applied.action])
    bpy.context.scene.frame_set(clip.frame_end)
    hand, head = arm.pose.bones["hand.R"].tail, arm.pose.bones["head"].tail
    assert evaluated.num_frames == clip.num_frames
    return applied.warnings, beyond_limits(mirror, clip), (hand.z - head.z) / mirror.height


def test_a_limit_that_forbids_the_pose_is_named_in_a_warning():
    warnings, short, rise = _raise_arms({"upper_arm.R": 10.0})
    assert list(short) == ["upper_arm.R"]
    said = [w for w in warnings if "joint limits" in w]
    assert len(said) == 1 and "'upper_arm.R'" in said[0] and "Limit Rotation allows -10° to 10°" in said[0], warnings
    assert rise < 0.0  # Blender stops the arm short of overhead: the smaller motion the warning names


def test_limits_the_motion_stays_within_say_nothing():
    warnings, short, rise = _raise_arms({"upper_arm.R": 179.0, "forearm.R": 179.0})
    assert short == {} and not [w for w in warnings if "joint limits" in w], warnings
    assert rise > 0.05  # the hand ends overhead
