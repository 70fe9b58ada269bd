"""Facing from what the body shows (toes ahead of the ankle, knees bent forward, the face), the sides
following from it, and the warning where the bone names state the other sides: a human named as
Unreal's mannequin, standing with its hips ahead of its ankles, walks toward its toes and waves the
hand the prompt names."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.roles import find_roles, named_side, side_name_warning
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.job.request import job_warnings
from akd_blender.core.settings import DistillConfig
from tests.core.rig_variants import affine, placed, rotation, world_forward
from tests.core.roles_zoo import mannequin

CPU = DistillConfig(device="cpu")


@pytest.fixture(scope="module")
def rig():
    return mannequin()[0]


def joints(rig, clip) -> np.ndarray:
    """World joint positions [F,J,3] of ``clip`` on ``rig``."""
    return Skeleton(rig).joint_positions(*clip.pose_channels(torch.float64)).numpy()


def mirrored(rig):
    """``rig`` reflected through x = 0 with its names kept: its ``_l`` bones now on the body's right."""
    flip = np.diag([-1.0, 1.0, 1.0])
    return dataclasses.replace(rig, heads=rig.heads @ flip, tails=rig.tails @ flip, vertices=rig.vertices @ flip)


def test_the_mannequin_faces_its_toes_though_its_hips_stand_ahead_of_its_ankles(rig):
    roles = find_roles(rig)
    assert roles.kind == "biped"
    np.testing.assert_allclose(roles.frame.forward, [0, -1, 0], atol=1e-6)
    names = {rig.bone_names[b]: r for b, r in roles.role_of().items()}
    assert names["hand_r"] == "arm.right" and names["ball_l"] == "leg.left"
    turned = placed(rig, affine(rotation([0, 0, 1], 2.0)))  # the armature object turned: it faces where its toes do
    np.testing.assert_allclose(
        world_forward(turned, find_roles(turned).frame.forward), rotation([0, 0, 1], 2.0) @ [0, -1, 0], atol=1e-6
    )


def test_walk_travels_toward_the_toes(rig):
    result = distill(rig, "a man walks forward", CPU)
    assert result.extra["motion"] == "biped/walk"
    j = joints(rig, result.clip)
    pelvis = rig.bone_names.index("pelvis")
    travel = j[-1, pelvis] - j[0, pelvis]
    assert travel[1] < -0.3, travel  # toward -Y, where the toes point
    assert abs(travel[0]) < 0.1 * abs(travel[1])


def test_waves_his_right_hand_raises_the_right_hand(rig):
    result = distill(rig, "a man waves his right hand", CPU)
    assert result.extra["motion"] == "biped/wave"
    j = joints(rig, result.clip)
    rise = {
        side: float(j[:, rig.bone_names.index(f"hand_{side}"), 2].max() - j[0, rig.bone_names.index(f"hand_{side}"), 2])
        for side in "lr"
    }
    assert rise["r"] > 0.3 and rise["l"] < 0.05, rise
    assert result.extra.get("side_names") is None  # the names agree with the body


@pytest.mark.parametrize(
    ("name", "side"),
    [
        ("thigh_l", "left"),
        ("calf_r", "right"),
        ("DEF-forearm.R.001", "right"),
        ("mixamorig:LeftUpLeg", "left"),
        ("Bip01 R Foot", "right"),
        ("L_Hand", "left"),
        ("b_RightUpperArm_09", "right"),
        ("lowerarm_l", "left"),
        ("spine_01", None),
        ("Rightness", None),
    ],
)
def test_named_side_reads_the_usual_conventions(name, side):
    assert named_side(name) == side


def test_names_stating_the_other_sides_warn_in_one_line(rig):
    """The body reflected with its names kept: the roles follow the body (the bone named ``hand_r`` is the
    left hand now) and the job warns that the names state the other side, naming bones."""
    flipped = mirrored(rig)
    roles = find_roles(flipped)
    names = {flipped.bone_names[b]: r for b, r in roles.role_of().items()}
    assert names["hand_r"] == "arm.left" and names["thigh_l"] == "leg.right"
    line = side_name_warning(flipped, roles)
    assert line is not None and "\n" not in line and "'thigh_r'" in line and "faces -Y" in line
    assert side_name_warning(rig, find_roles(rig)) is None
    assert line in job_warnings(flipped, {}, {"side_names": line})
