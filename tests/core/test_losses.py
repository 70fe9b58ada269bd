"""Regularisers: zero for motions that break no rule, the documented penalty otherwise."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rotations import euler_to_quat
from akd_blender.core.distillation.regularisers import (
    foot_joints,
    foot_skate_loss,
    ground_penetration_loss,
    joint_limit_loss,
    loop_loss,
    smoothness_loss,
)


def test_smoothness_is_second_difference():
    t = torch.arange(6.0)[:, None, None]
    linear = t * torch.tensor([1.0, 2.0, 0.0])  # constant velocity
    assert smoothness_loss(linear) == 0
    jitter = linear.clone()
    jitter[3, 0, 0] += 1.0  # one spike: second differences -> +1, -2, +1 on frames 2..4
    assert math.isclose(float(smoothness_loss(jitter)), (1 + 4 + 1) / 4)
    assert math.isclose(float(smoothness_loss(jitter, scale=2.0)), (1 + 4 + 1) / 16)
    assert smoothness_loss(linear[:2]) == 0


def test_ground_penetration():
    above = torch.tensor([[[0.0, 0.0, 0.1], [1.0, 0.0, 0.0]]])
    assert ground_penetration_loss(above, 0.0) == 0
    below = torch.tensor([[[0.0, 0.0, -0.2], [1.0, 0.0, 0.5]]])
    assert math.isclose(float(ground_penetration_loss(below, 0.0)), 0.04 / 2, rel_tol=1e-6)


def test_foot_skate_penalises_planted_sliding_only():
    frames = torch.arange(4.0)[:, None]
    planted_slide = torch.stack([frames * 0.1, torch.zeros_like(frames), torch.zeros_like(frames)], -1)  # [F,1,3]
    lifted_slide = planted_slide + torch.tensor([0.0, 0.0, 0.5])
    planted_still = torch.zeros(4, 1, 3)
    assert float(foot_skate_loss(planted_slide, 0.0)) > 0.009
    assert float(foot_skate_loss(lifted_slide, 0.0)) < 1e-6
    assert foot_skate_loss(planted_still, 0.0) == 0


def test_joint_limits():
    limits = torch.tensor([[[-0.5, 0.5], [float("nan"), float("nan")], [0.0, 0.0]]])  # X ±0.5, Y free, Z locked
    inside = euler_to_quat(torch.tensor([[[0.3, 1.2, 0.0]]]), "XYZ")
    assert float(joint_limit_loss(inside, limits, torch.tensor([0]))) < 1e-10
    outside = euler_to_quat(torch.tensor([[[0.7, 0.0, 0.0]]]), "XYZ")
    assert math.isclose(float(joint_limit_loss(outside, limits, torch.tensor([0]))), 0.2**2 / 3, rel_tol=1e-4)
    assert joint_limit_loss(outside, limits[:0], torch.tensor([], dtype=torch.int64)) == 0


def test_loop():
    rot = torch.tensor([[[1.0, 0, 0, 0]], [[0.0, 1, 0, 0]], [[-1.0, 0, 0, 0]]])  # last = first up to sign
    pos = torch.zeros(3, 2, 3)
    assert float(loop_loss(rot, pos)) < 1e-12
    pos[-1, 1, 0] = 1.0
    assert math.isclose(float(loop_loss(rot, pos)), 0.5, rel_tol=1e-6)


@pytest.mark.parametrize("build", [biped, quadruped])
def test_foot_joints_named(build):
    rig = build()
    names = [rig.bone_names[i] for i in foot_joints(rig)]
    assert names and all("foot" in n for n in names)
    assert np.all(rig.tails[foot_joints(rig), 2] < 0.25 * rig.height + rig.ground_height)


def test_multiscale_mse_levels_reach_two_pixels():
    from akd_blender.core.render.image_losses import multiscale_mse

    a, b = torch.zeros(2, 3, 32, 32), torch.zeros(2, 3, 32, 32)
    b[..., 0, 0] = 1.0  # one pixel differs: full resolution alone sees 1/1024 of it per channel
    full = torch.nn.functional.mse_loss(a, b)
    assert multiscale_mse(a, b, scales=1) == pytest.approx(float(full))
    # level k (32, 16, 8, 4, 2 pixels): the pixel is averaged into one of (32/2^k)^2, so MSE = 1/(1024·4^k)
    expected = sum(1 / (1024 * 4**k) for k in range(5)) / 5
    assert float(multiscale_mse(a, b)) == pytest.approx(expected, rel=1e-5)
