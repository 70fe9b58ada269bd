"""FK/LBS: what the docstrings promise, gradients, and the rotation parametrisations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton, depth_levels
from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.rotations import (
    euler_to_quat,
    make_quat_continuous,
    matrix_to_quat,
    matrix_to_sixd,
    quat_to_euler,
    quat_to_matrix,
    quat_to_rotvec,
    rotvec_to_quat,
    sixd_to_matrix,
)
from akd_blender.core.motion.clip import MotionClip, MotionParams, interpolation_basis


@pytest.fixture(scope="module")
def rig():
    return biped()


def test_rest_pose_reproduces_rest_vertices(rig):
    skeleton = Skeleton(rig, torch.float64)
    out = skeleton(MotionClip.rest(rig, 2))
    assert out.shape == (2, rig.num_vertices, 3)
    assert torch.allclose(out, torch.as_tensor(rig.world_vertices()).expand(2, -1, -1), atol=1e-9)
    heads = skeleton.joint_positions(*MotionClip.rest(rig, 1).pose_channels(torch.float64))[0]
    assert np.allclose(heads.numpy(), rig.heads, atol=1e-9)


def test_root_location_translates_everything(rig):
    skeleton = Skeleton(rig, torch.float64)
    clip = MotionClip.rest(rig, 1)
    locations = clip.locations.copy()
    root = int(rig.root_indices[0])
    locations[0, root] = [0.1, 0.2, 0.3]  # bone-local axes of the root
    moved = skeleton(MotionClip(rig.bone_names, 24, 1, clip.rotations, locations))[0].numpy()
    delta = rig.rest_matrices[root, :3, :3] @ np.array([0.1, 0.2, 0.3])
    assert np.allclose(moved - rig.world_vertices(), delta, atol=1e-9)


def test_rotating_a_child_moves_only_its_subtree(rig):
    skeleton = Skeleton(rig, torch.float64)
    clip = MotionClip.rest(rig, 1)
    rotations = clip.rotations.copy()
    bone = rig.bone_index("forearm.L")
    rotations[0, bone] = [np.cos(0.5), np.sin(0.5), 0, 0]
    heads = skeleton.joint_positions(torch.as_tensor(rotations), torch.as_tensor(clip.locations))[0].numpy()
    moved = np.linalg.norm(heads - rig.heads, axis=1) > 1e-9
    assert set(np.flatnonzero(moved)) == {rig.bone_index("hand.L")}


def test_gradients_reach_rotations_and_locations(rig):
    skeleton = Skeleton(rig)
    params = MotionParams(rig, frames=4, keys=2)
    with torch.no_grad():
        params.rotvec.normal_(0, 0.2)
    verts = skeleton(params)
    (verts[..., 2].mean() + verts[..., 0].pow(2).mean()).backward()
    assert params.rotvec.grad is not None and params.rotvec.grad.abs().sum() > 0
    assert torch.isfinite(params.rotvec.grad).all()
    assert params.root_offset.grad[:, 2].abs().sum() > 0


def test_motion_params_to_clip_matches_pose_channels():
    rig = quadruped()
    params = MotionParams(rig, frames=6, keys=3, interpolation="linear")
    with torch.no_grad():
        params.rotvec.normal_(0, 0.3)
        params.root_offset.normal_(0, 0.1)
    clip = params.to_clip()
    assert clip.rotations.shape == (6, rig.num_bones, 4)
    skeleton = Skeleton(rig, torch.float64)
    assert torch.allclose(skeleton(clip), skeleton(params).double(), atol=1e-5)
    # the root path moves the root bone's head by exactly root_offset (armature space)
    root = int(rig.root_indices[0])
    heads = skeleton.joint_positions(*clip.pose_channels(torch.float64))
    offset = (params.basis @ params.root_offset).detach().double()
    assert torch.allclose(heads[:, root] - torch.as_tensor(rig.heads[root]), offset, atol=1e-5)


def test_locked_axes_do_not_move():
    rig = biped()
    locks = rig.rotation_locks.copy()
    locks[rig.bone_index("shin.L")] = [False, True, True]  # a hinge
    locks[rig.bone_index("head")] = True
    from dataclasses import replace

    locked = replace(rig, rotation_locks=locks)
    params = MotionParams(locked, frames=3)
    assert rig.bone_index("head") not in params.free_bones.tolist()
    with torch.no_grad():
        params.rotvec.normal_(0, 0.5)
    shin = params.free_bones.tolist().index(rig.bone_index("shin.L"))
    rotvec = params.frame_rotvecs()[:, shin]
    assert torch.all(rotvec[:, 1:] == 0) and rotvec[:, 0].abs().sum() > 0


def test_interpolation_basis_passes_through_keys():
    for kind in ("linear", "cubic"):
        basis = interpolation_basis(13, 4, kind)
        assert np.allclose(basis.sum(1), 1)
        assert np.allclose(basis[[0, 4, 8, 12]], np.eye(4), atol=1e-12)


def test_depth_levels():
    levels = depth_levels(np.array([-1, 0, 1, 0, -1, 4]))
    assert [lv.tolist() for lv in levels] == [[0, 4], [1, 3, 5], [2]]


def test_rotation_round_trips():
    torch.manual_seed(0)
    rotvec = torch.randn(50, 3, dtype=torch.float64)
    rotvec = rotvec / rotvec.norm(dim=-1, keepdim=True) * torch.rand(50, 1, dtype=torch.float64) * 3.0
    quat = rotvec_to_quat(rotvec)
    assert torch.allclose(quat_to_rotvec(quat), rotvec, atol=1e-9)
    matrix = quat_to_matrix(quat)
    assert torch.allclose(sixd_to_matrix(matrix_to_sixd(matrix)), matrix, atol=1e-9)
    back = matrix_to_quat(matrix)
    assert torch.allclose(
        torch.minimum((back - quat).abs().amax(-1), (back + quat).abs().amax(-1)), torch.zeros(50, dtype=torch.float64), atol=1e-9
    )
    for mode in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"):
        euler = quat_to_euler(quat, mode)
        again = euler_to_quat(euler, mode)
        assert torch.allclose(quat_to_matrix(again), matrix, atol=1e-9), mode


def test_euler_matches_blender_convention():
    # Blender "XYZ": rotate about X first, then Y, then Z, i.e. R = Rz · Ry · Rx.
    angles = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64)
    cx, cy, cz = torch.cos(angles)
    sx, sy, sz = torch.sin(angles)
    rx = torch.tensor([[1, 0, 0], [0, cx, -sx], [0, sx, cx]], dtype=torch.float64)
    ry = torch.tensor([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]], dtype=torch.float64)
    rz = torch.tensor([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]], dtype=torch.float64)
    assert torch.allclose(quat_to_matrix(euler_to_quat(angles, "XYZ")), rz @ ry @ rx, atol=1e-12)
    assert torch.allclose(quat_to_matrix(euler_to_quat(angles, "ZYX")), rx @ ry @ rz, atol=1e-12)


def test_make_quat_continuous():
    quat = rotvec_to_quat(torch.linspace(0, 3, 10)[:, None] * torch.tensor([[0.0, 0.0, 1.0]]))
    flipped = quat.clone()
    flipped[1::2] *= -1
    fixed = make_quat_continuous(flipped)
    assert torch.allclose(fixed, quat)


def test_rig_save_and_load_round_trip(tmp_path):
    from akd_blender.core.character.rig import RigError, load_rig, save_rig

    rig = quadruped()
    save_rig(rig, str(tmp_path / "q.npz"))
    back = load_rig(str(tmp_path / "q.npz"))
    assert back.bone_names == rig.bone_names and back.rotation_modes == rig.rotation_modes
    assert np.array_equal(back.weights, rig.weights) and np.array_equal(back.rest_matrices, rig.rest_matrices)
    assert back.height == rig.height and back.uvs is None
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(RigError, match="is not a saved RigAsset"):
        load_rig(str(tmp_path / "bad.npz"))


def test_skin_of_one_fk_pass_equals_deform(rig):
    skeleton = Skeleton(rig)
    params = MotionParams(rig, 3, keys=2)
    with torch.no_grad():
        params.rotvec.normal_(0.0, 0.3)
    rotations, locations = params.pose_channels()
    pose = skeleton.pose_matrices(rotations, locations)
    assert torch.equal(skeleton.skin(pose), skeleton.deform(rotations, locations))
    assert torch.equal(skeleton.skin(pose, "armature"), skeleton.deform(rotations, locations, "armature"))
