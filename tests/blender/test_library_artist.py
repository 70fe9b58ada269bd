"""The role-based motion library on the artist rigs imported by Blender's glTF importer: the Fox plays
every quadruped motion, CesiumMan and RiggedFigure every biped motion, each doing what its label
says on the skinned mesh; keyed into a real action, Blender poses the armature exactly as the
project's FK does (the Fox's root sits under a non-deforming ``_rootJoint``; the humans are Y-up)."""

from __future__ import annotations

import functools

import bpy
import numpy as np
import pytest
import torch

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.blender.keys.actions import write_action
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.library import LIBRARY, make_role_clip, sample_variations
from tests.conftest import ASSET_FILES
from tests.core.library_checks import CHECKS, Measured

from .helpers import pose_matrices

ARTIST = {"Fox": "quadruped", "CesiumMan": "biped", "RiggedFigure": "biped"}
CASES = [(name, spec.label) for name, kind in ARTIST.items() for spec in LIBRARY[kind] if not spec.from_record]
"""Every generator on every artist rig (the record motions: test_records_artist.py)."""


@functools.cache
def _rig(name: str):
    load_scene(str(ASSET_FILES[name]))
    rig = rig_from_armature(find_armature())
    return rig, find_roles(rig)


@pytest.mark.parametrize("name,label", CASES, ids=[f"{n}-{lab}" for n, lab in CASES])
def test_every_motion_of_its_kind_plays_on_the_artist_rig(assets, name, label):
    rig, roles = _rig(name)
    assert roles.kind == ARTIST[name]
    variation = sample_variations(label, "heldout", 1, seed=1)[0]
    clip = make_role_clip(rig, roles, label, variation, frames=24, fps=12.0)
    assert clip.matches(rig)
    np.testing.assert_allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0, atol=1e-9)
    m = Measured(rig, roles, clip, variation.facing)
    assert np.isfinite(m.verts).all()
    assert m.height().min() > -0.03 * m.H
    for check in CHECKS[label]:
        check(m)


@pytest.mark.parametrize("name,label", [("Fox", "walk"), ("Fox", "rear_up"), ("CesiumMan", "wave"), ("RiggedFigure", "run")])
def test_keyed_action_poses_the_armature_as_the_library_says(assets, name, label):
    load_scene(str(assets[name]))
    arm = find_armature()
    rig = rig_from_armature(arm)
    roles = find_roles(rig)
    clip = make_role_clip(rig, roles, label, sample_variations(label, "train", 1, seed=2)[0], frames=12, fps=12.0)
    write_action(arm, clip, f"akd_{label}")
    expected = Skeleton(rig, torch.float64).pose_matrices(*clip.pose_channels(torch.float64)).numpy()
    for i in range(clip.num_frames):
        bpy.context.scene.frame_set(clip.frame_start + i)
        np.testing.assert_allclose(pose_matrices(arm), expected[i], atol=1e-4 * rig.height)
