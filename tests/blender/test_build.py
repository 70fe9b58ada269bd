"""Procedural rigs built in Blender come back through extract unchanged and deform identically."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.blender.build import armature_from_rig
from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import CHARACTERS
from akd_blender.core.motion.clip import MotionClip

from .helpers import evaluated_world_vertices, random_pose, set_pose


@pytest.mark.parametrize("character", sorted(CHARACTERS))
def test_build_then_extract_round_trip(character):
    rig = CHARACTERS[character]()
    arm = armature_from_rig(rig)
    back = rig_from_armature(arm)
    assert back.bone_names == rig.bone_names
    assert np.array_equal(back.parents, rig.parents)
    assert np.allclose(back.rest_matrices, rig.rest_matrices, atol=1e-5)
    assert np.array_equal(back.use_connect, rig.use_connect)
    assert np.allclose(back.vertices, rig.vertices, atol=1e-5)
    assert np.array_equal(back.faces, rig.faces)
    assert np.allclose(back.weights, rig.weights, atol=1e-5)
    assert np.allclose(back.vertex_colors, rig.vertex_colors, atol=2e-3)
    assert back.warnings == ()
    rotations, locations = random_pose(rig.num_bones, np.random.default_rng(5), angle=1.0, translation=0.05)
    set_pose(arm, rotations, locations)
    expected = evaluated_world_vertices(back.mesh_names)
    got = Skeleton(rig, torch.float64)(MotionClip(rig.bone_names, 24, 1, rotations[None], locations[None]))[0].numpy()
    assert np.abs(got - expected).max() <= 1e-4 * rig.height
