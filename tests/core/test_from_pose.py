"""A library motion started from a held pose (``from_pose.turns_from_held``): composed on the held pose,
the bones the motion moves take its pose, the bones it leaves alone keep the held one, the body keeps
its held heading."""

from __future__ import annotations

import numpy as np
import torch

from akd_blender.core.character.procedural import biped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.character.rotations import quat_multiply, quat_to_matrix, rotvec_to_quat
from akd_blender.core.motion.library import make_role_clip
from akd_blender.core.motion.library.from_pose import moved_bones, turns_from_held
from akd_blender.core.motion.library.labelled import Variation, neutral_clip


def _same_rotations(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.minimum(np.abs(a - b), np.abs(a + b)).max() < 1e-9)


def test_moved_bones_take_the_motion_and_the_others_keep_the_held_pose():
    rig = biped()
    roles = find_roles(rig)
    held = neutral_clip(rig).rotations[0].copy()  # the arms down
    shin = rig.bone_index("shin.L")
    held[shin] = rotvec_to_quat(torch.tensor([0.5, 0.0, 0.0])).numpy()  # a bent knee
    clip = make_role_clip(rig, roles, "raise_arms", Variation(), 12, 12.0)
    moved = moved_bones(clip)
    assert moved[rig.bone_index("upper_arm.L")] and not moved[shin]
    turns = turns_from_held(rig, int(roles.root), held, None, clip)
    composed = quat_multiply(torch.as_tensor(held).expand(12, -1, -1), torch.as_tensor(turns.rotations)).numpy()
    assert _same_rotations(composed[:, moved], clip.rotations[:, moved])
    assert _same_rotations(composed[:, ~moved], np.repeat(held[None, ~moved], 12, axis=0))


def test_the_root_keeps_the_held_heading():
    rig = biped()
    roles = find_roles(rig)
    root = int(roles.root)
    up = np.asarray(roles.frame.up, dtype=np.float64)
    heading = quat_to_matrix(rotvec_to_quat(torch.as_tensor(0.7 * up))).numpy()  # turned 40° about up
    held = np.tile([1.0, 0.0, 0.0, 0.0], (rig.num_bones, 1))
    local = rig.rest_matrices[root, :3, :3].T @ up
    held[root] = rotvec_to_quat(torch.as_tensor(0.7 * local)).numpy()
    clip = make_role_clip(rig, roles, "bow", Variation(), 12, 12.0)
    assert moved_bones(clip)[root]  # the bow bends at the hips: the motion turns the root
    turns = turns_from_held(rig, root, held, heading, clip)
    composed = quat_multiply(torch.as_tensor(held[root]).expand(12, -1), torch.as_tensor(turns.rotations[:, root]))
    rest = rig.rest_matrices[root, :3, :3]
    posed = rest @ quat_to_matrix(composed).numpy() @ rest.T  # [F,3,3] the root's turn, armature space
    wanted = heading @ rest @ quat_to_matrix(torch.as_tensor(clip.rotations[:, root])).numpy() @ rest.T
    np.testing.assert_allclose(posed, wanted, atol=1e-9)
