"""The floor a job stands on comes from the rest pose (or ``--ground-height`` / the panel's Floor), never
from a sunk or lifted frame of the action being fixed."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from akd_blender.blender.character.extract import FLOOR_SNAP, rest_floor, rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.blender.job.settings import on_floor

from .helpers import evaluated_world_vertices


def _shift_root(arm, world_dz: float) -> None:
    """Move the armature's root bones by ``world_dz`` along world Z in the pose shown now."""
    for pb in arm.pose.bones:
        if pb.parent is None:
            m = pb.matrix.copy()
            m.translation.z += world_dz / arm.matrix_world.to_scale().z
            pb.matrix = m
    bpy.context.view_layer.update()


@pytest.mark.parametrize("shift", [-0.1, 0.1])
def test_a_sunk_or_lifted_frame_is_not_the_floor(assets, shift):
    load_scene(str(assets["Fox"]))
    arm = find_armature()
    before = rig_from_armature(arm)
    _shift_root(arm, shift * before.height)
    rig = rig_from_armature(arm)
    shown = evaluated_world_vertices(rig.mesh_names)
    assert abs(shown[:, 2].min() - shift * rig.height) < 0.03 * rig.height  # the shown pose is sunk / lifted
    assert rig.ground_height == before.ground_height == 0.0


def test_a_character_standing_above_z0_stands_on_its_rest_floor(assets):
    load_scene(str(assets["Fox"]))
    arm = find_armature()
    lift = 0.5 * rig_from_armature(arm).height
    arm.location.z += lift
    bpy.context.view_layer.update()
    rig = rig_from_armature(arm)
    assert rig.ground_height == pytest.approx(float(rig.world_vertices()[:, 2].min()))
    assert rig.ground_height == pytest.approx(lift, abs=0.01 * rig.height)


def test_rest_floor_snaps_to_zero_within_the_tolerance():
    assert rest_floor(0.5 * FLOOR_SNAP * 2.0, 2.0) == 0.0
    assert rest_floor(-0.9 * FLOOR_SNAP * 2.0, 2.0) == 0.0
    assert rest_floor(1.5 * FLOOR_SNAP * 2.0, 2.0) == pytest.approx(1.5 * FLOOR_SNAP * 2.0)
    assert np.isclose(rest_floor(-3.0, 2.0), -3.0)


def test_a_given_floor_replaces_the_rest_floor(assets):
    load_scene(str(assets["Fox"]))
    rig = rig_from_armature(find_armature())
    assert on_floor(rig, None) is rig
    lowered = on_floor(rig, -2.5)
    assert lowered.ground_height == -2.5 and rig.ground_height == 0.0
    assert lowered.bone_names == rig.bone_names
