"""Physics grounding: the MuJoCo model built from a rig, the clip ↔ state maps and the tracker."""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rotations import matrix_to_quat
from akd_blender.core.errors import Cancelled, InputError
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.physics import PhysicsConfig, build_model, ground_clip
from akd_blender.core.motion.physics.convert import bodies_to_clip, clip_to_qpos
from akd_blender.core.motion.physics.perturb import inject_artifacts, translate_root
from akd_blender.core.progress import Callbacks

from .test_metrics import scaled
from .test_physics_motions import biped_walk, quadruped_trot

JNT = mujoco.mjtJoint


@pytest.mark.parametrize(
    "make, bodies, root",
    [(biped, 18, "hips"), (quadruped, 20, "pelvis")],  # the biped's neck owns 2 vertices: merged
)
def test_model_structure(make, bodies, root):
    rig = make()
    pm = build_model(rig)
    m = pm.model
    assert m.nbody - 1 == bodies == len(pm.body_bones)
    assert rig.bone_names[pm.root_bone] == root
    assert m.jnt_type[0] == JNT.mjJNT_FREE and (m.jnt_type[1:] == JNT.mjJNT_BALL).all()
    assert (m.body_mass[1:] > 0).all()
    assert 40 < pm.total_mass < 200  # water density, a 1-1.7 m character
    assert m.geom_type[0] == mujoco.mjtGeom.mjGEOM_PLANE
    # every body collides with the ground, none with another body
    data = mujoco.MjData(m)
    mujoco.mj_forward(m, data)
    pairs = {(m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]) for c in data.contact[: data.ncon]}
    assert all(0 in p for p in pairs) and pairs


def test_locks_limits_and_merging_shape_the_joints():
    rig = biped()
    locks = rig.rotation_locks.copy()
    limits = rig.rotation_limits.copy()
    shin, spine = rig.bone_index("shin.L"), rig.bone_index("spine")
    locks[shin] = [False, True, True]  # a knee: hinge about local X
    limits[shin, 0] = [-2.5, 0.1]
    locks[spine] = True  # fully locked: merged into the hips
    weights = rig.weights.copy()
    hand = rig.bone_index("hand.R")
    weights[:, rig.bone_index("forearm.R")] += weights[:, hand]  # a bone owning no vertices: merged
    weights[:, hand] = 0
    pm = build_model(replace(rig, rotation_locks=locks, rotation_limits=limits, weights=weights))
    m = pm.model
    body = pm.bone_body[shin] + 1
    j = m.body_jntadr[body]
    assert m.jnt_type[j] == JNT.mjJNT_HINGE
    np.testing.assert_allclose(m.jnt_axis[j], [1, 0, 0])
    assert m.jnt_limited[j] and np.allclose(m.jnt_range[j], [-2.5, 0.1])
    assert pm.bone_body[spine] == pm.bone_body[rig.bone_index("hips")]
    assert pm.bone_body[hand] == pm.bone_body[rig.bone_index("forearm.R")]
    assert m.nbody - 1 == rig.num_bones - 3  # spine, hand.R and the neck (2 vertices)


def test_scale_is_normalised():
    small, big = build_model(biped()), build_model(scaled(biped(), 46.0))  # 79 units tall, like the Fox
    assert small.scale == 1.0 and big.scale == pytest.approx(1.0 / big.rig.height)
    assert big.total_mass == pytest.approx(build_model(biped(), PhysicsConfig(height=1.0)).total_mass, rel=1e-6)


def test_clip_to_state_and_back_reproduces_the_pose():
    rig, clip = quadruped_trot(seconds=0.5)
    pm = build_model(rig)
    qpos = clip_to_qpos(pm, clip)
    data = mujoco.MjData(pm.model)
    rot, pos = [], []
    for q in qpos:
        data.qpos[:] = q
        mujoco.mj_kinematics(pm.model, data)
        rot.append(data.xmat[1:].reshape(-1, 3, 3).copy())
        pos.append(data.xpos[1:].copy())
    back = bodies_to_clip(pm, clip, np.array(rot), np.array(pos))
    skel = Skeleton(rig, dtype=torch.float64)
    a = skel(clip.pose_channels(torch.float64)).numpy()
    b = skel(back.pose_channels(torch.float64)).numpy()
    assert np.abs(a - b).max() < 1e-6


@pytest.mark.parametrize("gait", [biped_walk, quadruped_trot])
def test_grounding_removes_injected_slide_float_and_sink(gait):
    rig, clean = gait(seconds=3.0)
    bad = inject_artifacts(rig, clean)
    result = ground_clip(rig, bad)
    before, after = result.metrics_before, result.metrics_after
    assert result.clip.bone_names == bad.bone_names and result.clip.fps == bad.fps
    assert result.clip.frame_start == bad.frame_start and result.clip.num_frames == bad.num_frames
    assert after["foot_skate"] * 5 <= before["foot_skate"], (before, after)
    assert after["penetration"] * 5 <= before["penetration"], (before, after)
    assert after["floating_fraction"] < 0.5 * before["floating_fraction"], (before, after)
    assert after["joint_angle_error_deg"] < 2.0  # tracking error reported, and small
    assert after["root_position_error"] < 0.3
    assert result.seconds > 0 and result.passes


def test_ten_seconds_stay_stable_and_runs_are_deterministic():
    rig, clip = quadruped_trot(seconds=10.0)
    result = ground_clip(rig, clip)
    assert np.isfinite(result.clip.rotations).all() and np.isfinite(result.clip.locations).all()
    with torch.no_grad():
        heads = Skeleton(rig, dtype=torch.float64).joint_positions(*result.clip.pose_channels(torch.float64)).numpy()
    rest_z = rig.heads[rig.bone_index("pelvis"), 2]
    assert np.abs(heads[:, rig.bone_index("pelvis"), 2] - rest_z).max() < 0.15 * rig.height  # no explosion, no fall
    assert heads[-1, 0, 1] < -0.5 * 10.0  # it trotted forward (-Y) most of its 1 m/s
    assert result.passes[-1]["max_speed"] < 10.0  # m/s, for a 1 m animal trotting at 1 m/s
    short = MotionClip(clip.bone_names, clip.fps, 5, clip.rotations[:20], clip.locations[:20])
    a, b = ground_clip(rig, short), ground_clip(rig, short)
    np.testing.assert_array_equal(a.clip.rotations, b.clip.rotations)
    np.testing.assert_array_equal(a.clip.locations, b.clip.locations)


def test_progress_and_cancel():
    rig, clip = biped_walk(seconds=0.5)
    seen = []
    callbacks = Callbacks(progress=seen.append, should_cancel=lambda: len(seen) >= 3)
    with pytest.raises(Cancelled):
        ground_clip(rig, clip, callbacks=callbacks)
    assert [p.step for p in seen] == [1, 2, 3] and seen[0].total == clip.num_frames - 1
    assert all(p.phase == "physics" and p.detail == "pass 1" and p.eta_seconds is not None for p in seen)


def test_bad_input_is_one_clear_error():
    rig = biped()
    with pytest.raises(InputError, match="bones"):
        ground_clip(rig, MotionClip.rest(quadruped(), 5))
    with pytest.raises(InputError, match="2 frames"):
        ground_clip(rig, MotionClip.rest(rig, 1))
    nan = MotionClip.rest(rig, 4)
    nan.rotations[2, 3, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        ground_clip(rig, nan)


def feet_on_their_own_roots(rig, clip):
    """``rig`` and ``clip`` with every foot bone made a root of its own, as a glTF rig whose feet hang
    from IK target bones: the same pose, the feet placed by their own location channels."""
    feet = [i for i, name in enumerate(rig.bone_names) if name.endswith(("foot.L", "foot.R"))]
    parents, connect, local = rig.parents.copy(), rig.use_connect.copy(), rig.use_local_location.copy()
    parents[feet], connect[feet], local[feet] = -1, False, True
    split = replace(rig, parents=parents, use_connect=connect, use_local_location=local)
    pose = Skeleton(rig, dtype=torch.float64).pose_matrices(*clip.pose_channels(torch.float64)).numpy()
    basis = np.linalg.solve(rig.rest_matrices[feet], pose[:, feet])  # [F,n,4,4] = T(location) R(rotation)
    rotations, locations = clip.rotations.copy(), clip.locations.copy()
    rotations[:, feet] = matrix_to_quat(torch.as_tensor(basis[..., :3, :3])).numpy()
    locations[:, feet] = basis[..., :3, 3]
    return split, MotionClip(clip.bone_names, clip.fps, clip.frame_start, rotations, locations), feet


def test_feet_hung_from_other_roots_are_simulated_and_grounded():
    """Feet weighted to bones beside the body's hierarchy (the IK targets an artist's glTF feet hang
    from) get bodies jointed to the legs, move with the character, and are grounded like any foot."""
    rig, trot = quadruped_trot(seconds=3.0)
    split, clip, feet = feet_on_their_own_roots(rig, trot)
    skel = Skeleton(split, dtype=torch.float64)
    assert (
        np.abs(
            skel(clip.pose_channels(torch.float64)).numpy()
            - Skeleton(rig, dtype=torch.float64)(trot.pose_channels(torch.float64)).numpy()
        ).max()
        < 1e-9
    )
    pm = build_model(split)
    for foot in feet:  # hung from the lower leg above it, wherever MuJoCo numbers it
        i = int(pm.bone_body[foot])
        assert pm.body_bones[i] == foot
        assert split.bone_names[pm.body_bones[pm.body_parents[i]]] == rig.bone_names[rig.parents[foot]]
    qpos = clip_to_qpos(pm, clip)
    data = mujoco.MjData(pm.model)
    rot, pos = [], []
    for q in qpos[:6]:
        data.qpos[:] = q
        mujoco.mj_kinematics(pm.model, data)
        rot.append(data.xmat[1:].reshape(-1, 3, 3).copy())
        pos.append(data.xpos[1:].copy())
    six = MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations[:6], clip.locations[:6])
    back = bodies_to_clip(pm, six, np.array(rot), np.array(pos))
    assert np.abs(skel(back.pose_channels(torch.float64)).numpy() - skel(six.pose_channels(torch.float64)).numpy()).max() < 1e-6
    # the whole character sinks, feet included
    down = translate_root(split, clip, np.tile([0.0, 0.0, -0.1], (clip.num_frames, 1)))
    moved = skel(down.pose_channels(torch.float64)).numpy() - skel(clip.pose_channels(torch.float64)).numpy()
    assert np.allclose(moved, [0.0, 0.0, -0.1], atol=1e-9)
    bad = inject_artifacts(split, clip)
    result = ground_clip(split, bad, model=pm)
    before, after = result.metrics_before, result.metrics_after
    assert after["foot_skate"] * 5 <= before["foot_skate"], (before, after)
    assert after["penetration"] * 5 <= before["penetration"], (before, after)
    pose = skel.pose_matrices(*result.clip.pose_channels(torch.float64)).numpy()
    for foot in feet:  # each foot stays at the end of its leg
        ankle = pose[:, rig.parents[foot]] @ np.append(
            np.linalg.solve(rig.rest_matrices[rig.parents[foot]], np.append(rig.heads[foot], 1.0))[:3], 1.0
        )
        assert np.linalg.norm(ankle[:, :3] - pose[:, foot, :3, 3], axis=-1).max() < 0.01 * rig.height
