"""Physics on the real assets: every shared character builds a MuJoCo model, and the Fox's own Walk and
Run (read from Blender's actions) ground with far less foot skate and penetration."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.blender.keys.keyframes import read_clip
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.motion.physics import build_model, ground_clip
from akd_blender.core.motion.physics.perturb import inject_artifacts, loop_clip
from tests.conftest import ASSET_FILES

from .helpers import imported_action


@pytest.mark.parametrize("name", sorted(ASSET_FILES))
def test_model_builds_and_stands_for_every_asset(assets, name):
    load_scene(str(assets[name]))
    rig = rig_from_armature(find_armature())
    pm = build_model(rig)
    m = pm.model
    assert m.nbody >= 2 and m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert np.isfinite(m.body_mass).all() and (m.body_mass[1:] > 0).all()
    assert 0.3 <= rig.height * pm.scale <= 3.0  # simulated at human-ish size, whatever the units
    # one simulated second standing in the rest pose: stable, and the model does not fall apart
    data = mujoco.MjData(m)
    mujoco.mj_forward(m, data)
    for _ in range(int(1.0 / m.opt.timestep)):
        mujoco.mj_step(m, data)
    assert np.isfinite(data.qpos).all()
    assert np.abs(data.qvel[:3]).max() < 5.0


def _fox_clip(assets, action):
    load_scene(str(assets["Fox"]))
    arm = find_armature()
    rig = rig_from_armature(arm)
    act = imported_action(action)  # "Walk" on Blender 5.0, "Walk_root" on 4.2
    start, end = act.frame_range
    clip = read_clip(arm, int(start), int(np.ceil(end)), action=act)
    return rig, loop_clip(clip, 3.0)


@pytest.mark.parametrize("action", ["Walk", "Run"])
def test_fox_walk_and_run_are_grounded(assets, action):
    rig, clip = _fox_clip(assets, action)
    for motion in (clip, inject_artifacts(rig, clip)):
        result = ground_clip(rig, motion)
        before, after = result.metrics_before, result.metrics_after
        assert after["foot_skate"] * 5 <= before["foot_skate"], (action, before, after)
        assert after["joint_angle_error_deg"] < 2.0, after  # tracking error reported and small
        out = Skeleton(rig)(result.clip)
        assert np.isfinite(out.numpy()).all()
    # the perturbed version also loses ≥ 5× of its penetration
    assert after["penetration"] * 5 <= before["penetration"], (action, before, after)


def test_a_rigify_rig_is_simulated_limb_by_limb():
    """Rigify locks every DEF- bone's rotation; the controls move them, so the mirror takes no lock from a
    driven bone and the physics model holds the legs and spine (it held the head alone)."""
    from . import rig_zoo

    arm, _ = rig_zoo.rigify_rig("basic_human")
    rig = rig_from_armature(arm)
    driven = [rig.bone_index(name) for name in rig.driven_bones]
    assert driven and not rig.rotation_locks[driven].any() and not rig.location_locks[driven].any()
    simulated = {rig.bone_names[b] for b in build_model(rig).body_bones}
    assert {"DEF-thigh.L", "DEF-shin.L", "DEF-foot.L", "DEF-thigh.R", "DEF-shin.R", "DEF-spine"} <= simulated
