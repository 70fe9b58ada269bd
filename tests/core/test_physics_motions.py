"""Analytic, foot-planted gaits of the procedural biped and quadruped (test and bench material), and
checks that they are clean and that ``inject_artifacts`` really adds slide, float and sink."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rotations import rotvec_to_quat
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.metrics import main_root, motion_metrics
from akd_blender.core.motion.physics.perturb import inject_artifacts, translate_root


def _smoothstep(x: np.ndarray) -> np.ndarray:
    return x * x * (3 - 2 * x)


def _gait(rig, legs, seconds, fps, period, stride, lift, crouch=0.03) -> MotionClip:
    """Foot-planted gait by two-link leg IK in the sagittal (Y-Z) plane.

    legs: (hip bone, knee bone, ankle bone, phase offset). The root moves along -Y at stride/period;
    each leg stands for the first half of its cycle (ankle fixed on the ground) and swings in the
    second half (ankle moved to the next plant with a smoothstep, lifted by ``lift`` m). Every leg
    bone's local X is world -X in these rigs (rest_matrix convention), so a rotation ``a`` about
    world +X (positive moves the foot backwards, +Y) is the local rotation vector (-a, 0, 0).
    """
    frames = int(round(seconds * fps)) + 1
    t = np.arange(frames) / fps
    speed = stride / period
    root = np.stack([np.zeros(frames), -speed * t, np.full(frames, -crouch)], 1)
    rotvec = np.zeros((frames, rig.num_bones, 3))
    for hip_b, knee_b, ankle_b, offset in legs:
        hb, kb, ab = (rig.bone_index(n) for n in (hip_b, knee_b, ankle_b))
        l1 = np.linalg.norm(rig.heads[kb] - rig.heads[hb])
        l2 = np.linalg.norm(rig.heads[ab] - rig.heads[kb])
        cycle = t / period + offset
        n, phase = np.floor(cycle), cycle % 1.0
        t_stance = (n - offset) * period  # when this cycle's stance began
        plant = rig.heads[hb, 1] - speed * t_stance - stride / 4
        tau = np.clip((phase - 0.5) / 0.5, 0, 1)
        ankle_y = np.where(phase < 0.5, plant, plant - stride * _smoothstep(tau))
        ankle_z = rig.heads[ab, 2] + np.where(phase < 0.5, 0.0, lift * np.sin(np.pi * tau))
        hip = rig.heads[hb] + root
        dy, dz = ankle_y - hip[:, 1], ankle_z - hip[:, 2]
        d = np.minimum(np.hypot(dy, dz), (l1 + l2) * 0.9999)
        knee = np.pi - np.arccos(np.clip((l1**2 + l2**2 - d**2) / (2 * l1 * l2), -1, 1))
        a = np.arctan2(dy, -dz) - np.arctan2(l2 * np.sin(knee), l1 + l2 * np.cos(knee))
        rotvec[:, hb, 0], rotvec[:, kb, 0], rotvec[:, ab, 0] = -a, -knee, a + knee
    rotations = rotvec_to_quat(torch.as_tensor(rotvec)).numpy()
    clip = MotionClip(rig.bone_names, float(fps), 1, rotations, np.zeros((frames, rig.num_bones, 3)))
    return translate_root(rig, clip, root)


def biped_walk(seconds: float = 4.0, fps: float = 24.0):
    """The procedural biped walking forward (-Y) at about 1 m/s, feet planted in stance."""
    rig = biped()
    legs = [("thigh.L", "shin.L", "foot.L", 0.0), ("thigh.R", "shin.R", "foot.R", 0.5)]
    return rig, _gait(rig, legs, seconds, fps, period=1.1, stride=1.2, lift=0.14)


def quadruped_trot(seconds: float = 4.0, fps: float = 24.0):
    """The procedural quadruped trotting forward (-Y), diagonal legs in phase."""
    rig = quadruped()
    legs = [
        ("front_upper.L", "front_lower.L", "front_foot.L", 0.0),
        ("back_upper.R", "back_lower.R", "back_foot.R", 0.0),
        ("front_upper.R", "front_lower.R", "front_foot.R", 0.5),
        ("back_upper.L", "back_lower.L", "back_foot.L", 0.5),
    ]
    return rig, _gait(rig, legs, seconds, fps, period=0.8, stride=0.8, lift=0.12)


GAITS = {"biped_walk": biped_walk, "quadruped_trot": quadruped_trot}


@pytest.mark.parametrize("name", sorted(GAITS))
def test_gait_is_clean_and_perturbation_adds_artifacts(name):
    rig, clip = GAITS[name](seconds=3.0)
    clean = motion_metrics(rig, clip)
    bad = motion_metrics(rig, inject_artifacts(rig, clip))
    assert clean["foot_skate"] < 0.05, clean  # body heights per second
    assert clean["penetration"] < 1e-3 and clean["floating_fraction"] < 0.1, clean
    assert bad["foot_skate"] > 4 * clean["foot_skate"] + 0.05, bad
    assert bad["penetration"] > 10 * clean["penetration"] + 1e-3, bad
    assert bad["floating_fraction"] > 0.15, bad


def test_translate_root_moves_every_vertex_by_the_offset():
    from akd_blender.core.character.kinematics import Skeleton

    rig, clip = biped_walk(seconds=0.5)
    delta = np.random.default_rng(0).normal(size=(clip.num_frames, 3)) * 0.1
    moved = translate_root(rig, clip, delta)
    skel = Skeleton(rig, dtype=torch.float64)
    a = skel(clip.pose_channels(torch.float64)).numpy()
    b = skel(moved.pose_channels(torch.float64)).numpy()
    np.testing.assert_allclose(b - a, np.broadcast_to(delta[:, None], a.shape), atol=1e-9)
    assert main_root(rig) == rig.bone_index("hips")
