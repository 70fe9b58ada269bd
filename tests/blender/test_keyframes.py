"""write_action: Blender's evaluation of the new action reproduces the clip; old animation is kept."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
import torch

from akd_blender.blender.extract import rig_from_armature
from akd_blender.blender.io import find_armature, load_scene
from akd_blender.blender.keyframes import SparseKeys, read_clip, write_action
from akd_blender.core.errors import InputError
from akd_blender.core.kinematics import Skeleton
from akd_blender.core.motion import MotionClip
from akd_blender.core.rotations import rotvec_to_quat

from .helpers import build_stress_rig, imported_action, pose_matrices


def smooth_clip(rig, frames=24, seed=0, amplitude=0.6, flip_signs=True) -> MotionClip:
    """A smooth random motion: low-frequency rotations on every bone and a moving root."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, frames)[:, None, None]
    freq = rng.uniform(0.3, 1.2, (1, rig.num_bones, 3))
    phase = rng.uniform(0, 2 * np.pi, (1, rig.num_bones, 3))
    rotvec = amplitude * np.sin(2 * np.pi * freq * t + phase)
    quat = rotvec_to_quat(torch.as_tensor(rotvec)).numpy()
    if flip_signs:
        quat[1::3] *= -1  # same rotations, opposite signs: keys must still be continuous
    locations = 0.05 * rig.height * np.sin(2 * np.pi * freq * t + phase)
    return MotionClip(rig.bone_names, 24.0, 5, quat, locations)


def blender_pose_over(arm, clip) -> np.ndarray:
    out = []
    for i in range(clip.num_frames):
        bpy.context.scene.frame_set(clip.frame_start + i)
        out.append(pose_matrices(arm))
    return np.stack(out)


def expected_pose(rig, clip) -> np.ndarray:
    return Skeleton(rig, torch.float64).pose_matrices(*clip.pose_channels(torch.float64)).numpy()


@pytest.fixture
def fox(assets):
    load_scene(str(assets["Fox"]))
    arm = find_armature()
    return arm, rig_from_armature(arm)


def test_round_trip_dense(fox):
    arm, rig = fox
    clip = smooth_clip(rig)
    act = write_action(arm, clip, "akd test")
    assert arm.animation_data.action == act
    got = blender_pose_over(arm, clip)
    assert np.abs(got - expected_pose(rig, clip)).max() <= 1e-5 * rig.height
    assert np.abs(got[..., :3, :3] - expected_pose(rig, clip)[..., :3, :3]).max() <= 1e-5
    start, end = act.frame_range
    assert (start, end) == (clip.frame_start, clip.frame_end)


def test_previous_action_is_kept_and_names_never_clash(fox):
    arm, rig = fox
    old = arm.animation_data.action
    assert old is not None and old == imported_action("Survey")
    old_keys = sum(len(fc.keyframe_points) for fc in _fcurves(old))
    walk = imported_action("Walk")
    first = write_action(arm, smooth_clip(rig), walk.name)  # the name is taken: never overwritten
    second = write_action(arm, smooth_clip(rig, seed=1), walk.name)
    assert first.name != walk.name and second.name not in (walk.name, first.name)
    assert bpy.data.actions[walk.name] == walk
    assert old.use_fake_user and sum(len(fc.keyframe_points) for fc in _fcurves(old)) == old_keys
    assert len(arm.animation_data.nla_tracks) == 3  # the importer's tracks are untouched
    assert arm.animation_data.action == second


def test_round_trip_other_rotation_modes():
    arm = build_stress_rig()
    rig = rig_from_armature(arm)
    modes = ["XYZ", "ZXY", "AXIS_ANGLE", "QUATERNION", "YZX", "XZY", "ZYX"]
    for pb, mode in zip(arm.pose.bones, modes):
        pb.rotation_mode = mode
    clip = smooth_clip(rig, amplitude=1.2)
    write_action(arm, clip, "modes")
    got = blender_pose_over(arm, clip)
    want = expected_pose(rig, clip)
    assert np.abs(got - want).max() <= 1e-5 * rig.height


def test_sparse_keys_within_tolerance_and_fewer(fox):
    arm, rig = fox
    clip = smooth_clip(rig, frames=60, amplitude=0.4)
    dense = write_action(arm, clip, "dense")
    tol = SparseKeys(rotation=2e-3, location=1e-3 * rig.height)
    sparse = write_action(arm, clip, "sparse", sparse=tol)
    n_dense = sum(len(fc.keyframe_points) for fc in _fcurves(dense))
    n_sparse = sum(len(fc.keyframe_points) for fc in _fcurves(sparse))
    assert n_sparse < 0.5 * n_dense
    # The guarantee is on the F-curve channels as Blender evaluates them (before it normalises).
    keyed = clip.continuous()
    for i in range(clip.num_frames):
        bpy.context.scene.frame_set(clip.frame_start + i)
        quat = np.array([tuple(pb.rotation_quaternion) for pb in arm.pose.bones])
        loc = np.array([tuple(pb.location) for pb in arm.pose.bones])
        assert np.abs(quat - keyed.rotations[i]).max() <= tol.rotation * 1.001
        assert np.abs(loc - keyed.locations[i]).max() <= tol.location * 1.001


def test_read_clip_restores_scene(fox):
    arm, rig = fox
    scene = bpy.context.scene
    scene.frame_set(7)
    before_action = arm.animation_data.action
    clip = read_clip(arm, 0, 17, action=imported_action("Walk"))
    assert clip.num_frames == 18 and clip.frame_start == 0
    assert scene.frame_current == 7 and arm.animation_data.action == before_action
    assert np.allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0)


def test_bad_clip_is_refused_without_changes(fox):
    arm, rig = fox
    rest = MotionClip.rest(rig, 3)
    bad = MotionClip(("nope",) + rig.bone_names[1:], 24.0, 1, rest.rotations, rest.locations)
    n_actions = len(bpy.data.actions)
    with pytest.raises(InputError, match="no bone named 'nope'"):
        write_action(arm, bad, "x")
    assert len(bpy.data.actions) == n_actions and arm.animation_data.action == imported_action("Survey")


def _fcurves(action):
    if hasattr(action, "layers") and len(action.layers):
        return [fc for strip in action.layers[0].strips for bag in strip.channelbags for fc in bag.fcurves]
    return list(action.fcurves)


def test_current_pose_reads_any_rotation_mode_and_changes_nothing():
    arm = build_stress_rig()
    rig = rig_from_armature(arm)
    modes = ["XYZ", "QUATERNION", "AXIS_ANGLE", "ZXY", "QUATERNION", "YZX", "QUATERNION"]
    for pb, mode in zip(arm.pose.bones, modes):
        pb.rotation_mode = mode
    clip = smooth_clip(rig, frames=1, amplitude=1.0, flip_signs=False)
    write_action(arm, clip, "one pose")
    bpy.context.scene.frame_set(clip.frame_start)
    before = pose_matrices(arm)
    from akd_blender.blender.keyframes import current_pose

    pose = current_pose(arm)
    assert pose.num_frames == 1 and pose.bone_names == rig.bone_names
    assert np.allclose(pose_matrices(arm), before)
    got = Skeleton(rig, torch.float64).pose_matrices(*pose.pose_channels(torch.float64))[0].numpy()
    assert np.abs(got - before).max() <= 1e-5 * rig.height
