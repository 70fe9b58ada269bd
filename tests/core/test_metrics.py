"""Motion metrics: known answers on the procedural characters (units: body heights, seconds)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rotations import rotvec_to_quat
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.metrics import (
    MotionThresholds,
    detect_feet,
    main_root,
    motion_curves,
    motion_metrics,
    motion_thresholds,
    motion_warnings,
    tracking_error,
)
from akd_blender.core.motion.physics.perturb import translate_root


def scaled(rig, s: float):
    """The same character ``s`` times bigger (the Fox is 79 units tall)."""
    rest = rig.rest_matrices.copy()
    rest[:, :3, 3] *= s
    return replace(
        rig,
        rest_matrices=rest,
        heads=rig.heads * s,
        tails=rig.tails * s,
        lengths=rig.lengths * s,
        vertices=rig.vertices * s,
        ground_height=rig.ground_height * s,
        height=rig.height * s,
    )


@pytest.mark.parametrize(
    "make, expected",
    [(biped, {"foot.L", "foot.R"}), (quadruped, {f"{leg}_foot.{side}" for leg in ("front", "back") for side in "LR"})],
)
def test_detect_feet_finds_the_feet(make, expected):
    rig = make()
    names = {rig.bone_names[b] for b in detect_feet(rig).bones}
    assert expected <= names
    assert not names & {"head", "chest", "neck", "hips", "pelvis", "spine"}


def test_main_root_is_the_pelvis():
    assert biped().bone_names[main_root(biped())] == "hips"
    assert quadruped().bone_names[main_root(quadruped())] == "pelvis"


def test_rest_pose_is_clean():
    rig = biped()
    m = motion_metrics(rig, MotionClip.rest(rig, 12))
    for key in ("foot_skate", "penetration", "floating", "floating_fraction", "jitter"):
        assert m[key] == pytest.approx(0.0, abs=1e-9), key
    assert m["contact_fraction"] == 1.0
    assert m["duration"] == pytest.approx(0.5)


@pytest.mark.parametrize("s", [1.0, 46.0])
def test_sinking_floating_and_sliding_have_known_values_at_any_scale(s):
    rig = scaled(biped(), s)
    fps, frames, h = 24.0, 25, rig.height
    rest = MotionClip.rest(rig, frames, fps)
    depth = 0.05
    sunk = motion_metrics(rig, translate_root(rig, rest, np.tile([0, 0, -depth * h], (frames, 1))))
    assert sunk["penetration"] == pytest.approx(depth * frames / fps, rel=1e-6)  # h·s
    assert sunk["penetration_max"] == pytest.approx(depth, rel=1e-6)
    raised = motion_metrics(rig, translate_root(rig, rest, np.tile([0, 0, 0.1 * h], (frames, 1))))
    assert raised["floating_fraction"] == 1.0 and raised["contact_fraction"] == 0.0
    assert raised["floating"] == pytest.approx((0.1 - 0.01) * frames / fps, rel=1e-6)
    speed = 0.3  # h/s along X, feet on the ground
    path = np.zeros((frames, 3))
    path[:, 0] = speed * h * np.arange(frames) / fps
    slid = motion_metrics(rig, translate_root(rig, rest, path))
    assert slid["foot_skate"] == pytest.approx(speed, rel=1e-6)
    assert slid["penetration"] == pytest.approx(0.0, abs=1e-9)
    curves = motion_curves(rig, translate_root(rig, rest, path))
    np.testing.assert_allclose(curves["skate"][1:], speed, rtol=1e-6)
    assert curves["foot_height"].shape == (frames, len(curves["feet"]))


def test_jitter_sees_noise():
    rig = biped()
    rest = MotionClip.rest(rig, 30)
    noise = np.random.default_rng(0).normal(size=(30, rig.num_bones, 3)) * 0.05
    noisy = MotionClip(rig.bone_names, 24.0, 1, rotvec_to_quat(__import__("torch").as_tensor(noise)).numpy(), rest.locations)
    assert motion_metrics(rig, noisy)["jitter"] > 100 * (motion_metrics(rig, rest)["jitter"] + 1e-6)


def test_tracking_error_known_angle_and_root_offset():
    import torch

    rig = biped()
    rest = MotionClip.rest(rig, 5)
    assert tracking_error(rig, rest, rest)["joint_angle_error_max_deg"] == pytest.approx(0.0, abs=1e-6)
    rot = rest.rotations.copy()
    rot[:, rig.bone_index("shin.L")] = rotvec_to_quat(torch.tensor([0.0, 0.0, np.radians(30.0)])).numpy()
    bent = MotionClip(rig.bone_names, 24.0, 1, rot, rest.locations)
    err = tracking_error(rig, rest, bent)
    assert err["joint_angle_error_max_deg"] == pytest.approx(30.0, rel=1e-6)
    assert err["joint_angle_error_deg"] == pytest.approx(30.0 / rig.num_bones, rel=1e-6)
    moved = translate_root(rig, rest, np.tile([0.0, 0.2 * rig.height, 0.0], (5, 1)))
    assert tracking_error(rig, rest, moved)["root_position_error"] == pytest.approx(0.2, rel=1e-6)


def test_mismatched_clip_is_refused():
    with pytest.raises(ValueError, match="bones"):
        motion_curves(biped(), MotionClip.rest(quadruped(), 3))


def _yup(rig):
    """``rig`` under a Y-up → Z-up armature object rotation (as Blender's glTF importer makes it): the
    armature's own axes are not the world's."""
    turn = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
    arm = np.linalg.inv(turn)
    return replace(rig, vertices=rig.vertices @ arm[:3, :3].T, rest_matrices=arm @ rig.rest_matrices, armature_world=turn)


@pytest.mark.parametrize("make", [biped, lambda: _yup(biped()), lambda: scaled(quadruped(), 79.0)])
def test_start_gap_travel_and_tilt_have_known_values(make):
    import torch

    rig = make()
    frames, h = 20, rig.height
    rest = MotionClip.rest(rig, frames, 24.0)
    still = motion_metrics(rig, rest)
    for key in ("start_gap", "root_travel", "root_travel_max", "root_tilt_max_deg"):
        assert still[key] == pytest.approx(0.0, abs=1e-6), key
    path = np.zeros((frames, 3))
    path[:, 0] = np.linspace(0.0, 0.8 * h, frames)
    path[:, 1] = 0.6 * h * np.sin(np.linspace(0.0, np.pi, frames))
    path[:, 2] = 0.1 * h
    moved = motion_metrics(rig, translate_root(rig, rest, path))
    assert moved["start_gap"] == pytest.approx(0.1, rel=1e-6)
    assert moved["root_travel"] == pytest.approx(0.8, rel=1e-6)
    assert moved["root_travel_max"] == pytest.approx(np.hypot(path[:, 0], path[:, 1]).max() / h, rel=1e-6)
    root = main_root(rig)
    world_axis = np.array([1.0, 0.0, 0.0])  # tip forward about world X by up to 40°, while turning 90° about Z
    local = np.linalg.inv(rig.armature_world[:3, :3] @ rig.rest_matrices[root, :3, :3]) @ world_axis
    tip = np.radians(np.linspace(0.0, 40.0, frames))[:, None] * local
    yaw_local = np.linalg.inv(rig.armature_world[:3, :3] @ rig.rest_matrices[root, :3, :3]) @ np.array([0.0, 0.0, 1.0])
    yaw = np.radians(np.linspace(0.0, 90.0, frames))[:, None] * yaw_local
    rotations = rest.rotations.copy()
    rotations[:, root] = rotvec_to_quat(torch.as_tensor(tip)).numpy()
    tipped = motion_metrics(rig, MotionClip(rig.bone_names, 24.0, 1, rotations, rest.locations))
    assert tipped["root_tilt_max_deg"] == pytest.approx(40.0, abs=1e-6)
    rotations[:, root] = rotvec_to_quat(torch.as_tensor(yaw)).numpy()
    turned = motion_metrics(rig, MotionClip(rig.bone_names, 24.0, 1, rotations, rest.locations))
    assert turned["root_tilt_max_deg"] == pytest.approx(0.0, abs=1e-5)


def test_ground_is_the_one_given():
    rig = biped()
    rest = MotionClip.rest(rig, 8)
    lower = motion_metrics(rig, rest, ground=rig.ground_height - 0.2 * rig.height)
    assert lower["start_gap"] == pytest.approx(0.2, rel=1e-6) and lower["floating_fraction"] == 1.0
    assert lower["ground"] == pytest.approx(rig.ground_height - 0.2 * rig.height)


def test_warnings_name_each_limit_exceeded():
    rig = biped()
    frames, h = 24, rig.height
    rest = MotionClip.rest(rig, frames, 24.0)
    assert motion_warnings(motion_metrics(rig, rest)) == []
    path = np.zeros((frames, 3))
    path[:, 0] = np.linspace(0.0, 1.5 * h, frames)
    path[:, 2] = 0.3 * h
    drifting = motion_metrics(rig, translate_root(rig, rest, path))
    lines = motion_warnings(drifting)
    assert len(lines) == 3 and all("\n" not in line for line in lines)
    assert any("starts 0.3 heights" in line for line in lines)
    assert any("100% of the frames" in line and "limit 25%" in line for line in lines)
    assert any("drifts 1.5 heights" in line for line in lines)
    assert len(motion_warnings(drifting, motion_thresholds("walk"))) == 2  # a walk may travel
    assert motion_warnings(drifting, MotionThresholds(None, None, None, None, None, None)) == []
    sliding = path.copy()
    sliding[:, 2] = 0.0
    lines = motion_warnings(motion_metrics(rig, translate_root(rig, rest, sliding)), motion_thresholds("walk"))
    assert len(lines) == 1 and "slide at 1.57 heights (2.82 units) per second (limit 0.5 heights/s)" in lines[0]
    sunk = motion_metrics(rig, translate_root(rig, rest, np.tile([0.0, 0.0, -0.05 * h], (frames, 1))))
    assert [line for line in motion_warnings(sunk) if "sinks 0.05 heights" in line]


def test_thresholds_per_motion():
    assert motion_thresholds(None) == MotionThresholds()
    assert motion_thresholds("walk").root_travel is None and motion_thresholds("run").floating_fraction == 0.8
    assert motion_thresholds("sit").root_travel == MotionThresholds().root_travel
    assert motion_thresholds("sit").root_tilt_deg > 90
    assert motion_thresholds("wave") == MotionThresholds()
