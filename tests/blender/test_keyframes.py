"""write_action: Blender's evaluation of the new action reproduces the clip; old animation is kept."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
import torch

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.blender.character.pose_channels import character_height
from akd_blender.blender.keys.actions import write_action
from akd_blender.blender.keys.figures import key_figures
from akd_blender.blender.keys.keyframes import SparseKeys, read_clip
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.rotations import rotvec_to_quat
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionClip

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


def noisy_motion(rig, frames=48, seed=0, noise_deg=0.2) -> MotionClip:
    """A few bones swinging slowly (one reversal each), a root travelling, every other channel still at
    its rest value, with per-frame noise of ``noise_deg`` on the moving rotations."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, frames)
    rotvec = np.zeros((frames, rig.num_bones, 3))
    moving = [1, 3, 5, 9]
    for k, b in enumerate(moving):
        rotvec[:, b, k % 3] = 0.5 * np.sin(np.pi * t + k) + np.radians(noise_deg) * rng.standard_normal(frames)
    quat = rotvec_to_quat(torch.as_tensor(rotvec)).numpy()
    locations = np.zeros((frames, rig.num_bones, 3))
    locations[:, 0, 1] = 0.5 * rig.height * t
    return MotionClip(rig.bone_names, 24.0, 1, quat, locations)


def test_sparse_keys_within_bound_by_blenders_evaluation(fox):
    arm, rig = fox
    arm.animation_data.action = None
    for pb in arm.pose.bones:  # the pose the user sees is the rest pose: unmoved channels need no curve
        pb.matrix_basis.identity()
    clip = noisy_motion(rig)
    dense = write_action(arm, clip, "dense")
    bound = SparseKeys()
    sparse = write_action(arm, clip, "sparse", sparse=bound)
    full, reduced = key_figures(arm, dense, clip, rig.height), key_figures(arm, sparse, clip, rig.height)
    assert full["keys"] == full["channels"] * clip.num_frames and full["rotation_error_deg"] < 1e-3
    assert reduced["rotation_error_deg"] <= bound.rotation_deg and reduced["location_error"] <= bound.location_fraction
    assert reduced["keys"] < 0.1 * full["keys"]
    assert reduced["flat_channels"] > 100 and reduced["flat_keys_max"] <= 1
    assert reduced["curves"] < full["curves"]  # the still bones' curves are left out
    clean = noisy_motion(rig, noise_deg=0.0)
    motion = key_figures(arm, write_action(arm, clean, "clean"), clean, rig.height)["reversals_clip"]
    assert reduced["reversals_clip"] > motion + 1.0  # the noise reverses the curves ...
    assert reduced["reversals_keys"] <= motion + 0.25  # ... the keys carry the motion's reversals only
    # The same bound, seen through the posed bones Blender evaluates (every frame, every bone).
    want = expected_pose(rig, clip)
    got = blender_pose_over(arm, clip)
    cos = (np.einsum("fjab,fjab->fj", got[..., :3, :3], want[..., :3, :3]) - 1.0) / 2.0
    assert np.degrees(np.arccos(np.clip(cos, -1, 1))).max() <= 4 * bound.rotation_deg * 1.001  # ≤ 4 moving bones per chain
    start, end = sparse.frame_range
    assert (start, end) == (clip.frame_start, clip.frame_end) and sparse.use_frame_range


def test_sparse_keys_scale_with_the_character(fox):
    arm, rig = fox  # 79 units tall: a bound in Blender units would keep every key of the travel
    clip = noisy_motion(rig, noise_deg=0.0)
    assert character_height(arm) == pytest.approx(rig.height, rel=0.1)  # as shown: the imported action's pose
    action = write_action(arm, clip, "sparse", sparse=SparseKeys())
    figures = key_figures(arm, action, clip)
    assert figures["per_channel"][f"{rig.bone_names[0]}.location[1]"] <= 3  # a straight travel: two or three keys
    assert figures["location_error"] <= SparseKeys().location_fraction


def test_sparse_keys_other_rotation_modes_and_a_posed_bone():
    arm = build_stress_rig()
    rig = rig_from_armature(arm)
    modes = ["XYZ", "ZXY", "AXIS_ANGLE", "QUATERNION", "YZX", "XZY", "ZYX"]
    for pb, mode in zip(arm.pose.bones, modes):
        pb.rotation_mode = mode
    arm.pose.bones[3].rotation_quaternion = (0.9, 0.3, 0.0, 0.0)  # shown posed: its still channels keep a key
    clip = smooth_clip(rig, frames=40, amplitude=1.2)
    still = clip.rotations.copy()
    still[:, 3] = (1.0, 0.0, 0.0, 0.0)
    clip = MotionClip(clip.bone_names, clip.fps, clip.frame_start, still, clip.locations)
    action = write_action(arm, clip, "sparse", sparse=SparseKeys(rotation_deg=0.25))
    figures = key_figures(arm, action, clip, rig.height)
    assert figures["rotation_error_deg"] <= 0.25 and figures["location_error"] <= SparseKeys().location_fraction
    assert figures["keys"] < 0.5 * figures["channels"] * clip.num_frames
    name = arm.pose.bones[3].name
    assert [figures["per_channel"][f"{name}.rotation_quaternion[{i}]"] for i in range(4)] == [1, 1, 1, 1]


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
    from akd_blender.blender.character.pose_channels import current_pose

    pose = current_pose(arm)
    assert pose.num_frames == 1 and pose.bone_names == rig.bone_names
    assert np.allclose(pose_matrices(arm), before)
    got = Skeleton(rig, torch.float64).pose_matrices(*pose.pose_channels(torch.float64))[0].numpy()
    assert np.abs(got - before).max() <= 1e-5 * rig.height
