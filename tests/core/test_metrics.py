"""Motion metrics: known answers on the procedural characters (units: body heights, seconds)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from akd_blender.core.metrics import detect_feet, main_root, motion_curves, motion_metrics, tracking_error
from akd_blender.core.motion import MotionClip
from akd_blender.core.physics.perturb import translate_root
from akd_blender.core.procedural.characters import biped, quadruped
from akd_blender.core.rotations import rotvec_to_quat


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
