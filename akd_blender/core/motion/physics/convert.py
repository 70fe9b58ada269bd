"""MotionClip ↔ MuJoCo states of a :class:`PhysicsModel`.

``clip_to_qpos``: Blender pose channels → FK (``kinematics``) → bone frames in simulation space →
free-root ``qpos`` plus each joint's rotation relative to its rest orientation in the parent body.
``bodies_to_clip``: simulated body frames → Blender pose channels (rotations relative to rest, root
location), by inverting Blender's FK bone by bone; bones without a body keep the input channels, so
``Skeleton(rig)`` puts every simulated bone exactly where MuJoCo had it.
"""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from ...character.kinematics import Skeleton, location_axes
from ...character.rotations import make_quat_continuous, matrix_to_quat, quat_to_matrix
from ..clip import MotionClip
from .model import PhysicsModel

__all__ = ["pose_matrices", "clip_to_qpos", "qpos_velocities", "bodies_to_clip"]


def pose_matrices(pm: PhysicsModel, clip: MotionClip) -> np.ndarray:
    """float64 [F,J,4,4] ``pose_bone.matrix`` of every bone (armature space) for ``clip``."""
    skel = Skeleton(pm.rig, dtype=torch.float64)
    with torch.no_grad():
        return skel.pose_matrices(*clip.pose_channels(torch.float64)).numpy()


def _quat(mats: np.ndarray) -> np.ndarray:
    return matrix_to_quat(torch.as_tensor(mats)).numpy()


def clip_to_qpos(pm: PhysicsModel, clip: MotionClip) -> np.ndarray:
    """float64 [F,nq] MuJoCo positions that put every body where the clip puts its bone."""
    poses = pose_matrices(pm, clip)[:, pm.body_bones]  # [F,B,4,4]
    rot = pm.rotation @ poses[..., :3, :3]  # simulation-space orientations
    pos = pm.to_sim(poses[..., :3, 3])
    m = pm.model
    qpos = np.zeros((clip.num_frames, m.nq))
    qpos[:, 0:3] = pos[:, 0]
    qpos[:, 3:7] = _quat(rot[:, 0])
    for i in range(1, len(pm.body_bones)):
        parent = rot[:, pm.body_parents[i]]
        local = pm.rel_rotations[i].T @ np.swapaxes(parent, -1, -2) @ rot[:, i]  # joint rotation [F,3,3]
        adr = m.jnt_qposadr[m.body_jntadr[i + 1]]
        quat = _quat(local)
        if pm.hinge_axes[i].any():
            qpos[:, adr] = 2 * np.arctan2(quat[:, 1:] @ pm.hinge_axes[i], quat[:, 0])
        else:
            qpos[:, adr : adr + 4] = make_quat_continuous(torch.as_tensor(quat)).numpy()
    qpos[:, 3:7] = make_quat_continuous(torch.as_tensor(qpos[:, 3:7])).numpy()
    return qpos


def qpos_velocities(model: mujoco.MjModel, qpos: np.ndarray, fps: float) -> np.ndarray:
    """float64 [F,nv] velocities taking frame f to frame f+1 (the last repeats the one before)."""
    vel = np.zeros((len(qpos), model.nv))
    for f in range(len(qpos) - 1):
        mujoco.mj_differentiatePos(model, vel[f], 1.0 / fps, qpos[f], qpos[f + 1])
    if len(qpos) > 1:
        vel[-1] = vel[-2]
    return vel


def bodies_to_clip(pm: PhysicsModel, reference: MotionClip, body_rot: np.ndarray, body_pos: np.ndarray) -> MotionClip:
    """Simulated body frames → a MotionClip on ``reference``'s bones, fps and frame_start.

    Args:
        body_rot: [F,B,3,3] body orientations (simulation space, ``data.xmat``).
        body_pos: [F,B,3] body origins = bone heads (simulation space, ``data.xpos``).
    Body bones get rotations that reproduce the simulated orientations; the root body's bone (or its
    nearest unconnected ancestor) gets the location that puts its head at the simulated position;
    a body hung beside the root's hierarchy gets the location that puts its head at its simulated
    position; every other channel is the reference's.
    """
    rig = pm.rig
    frames = body_rot.shape[0]
    rest = rig.rest_matrices
    rot_ch = reference.rotations.copy()
    loc_ch = reference.locations.copy()
    ref_rot = quat_to_matrix(torch.as_tensor(reference.rotations, dtype=torch.float64)).numpy()
    target = {int(b): pm.rotation.T @ body_rot[:, i] for i, b in enumerate(pm.body_bones)}  # armature space
    pose = np.zeros((frames, rig.num_bones, 4, 4))
    pose[..., 3, 3] = 1.0
    for b in range(rig.num_bones):
        p = int(rig.parents[b])
        if p < 0:
            offset, parent_rot, parent_pos = rest[b], np.eye(3), np.zeros(3)
            inherit_rot = np.eye(3)
        else:
            offset = np.linalg.solve(rest[p], rest[b])
            parent_rot, parent_pos = pose[:, p, :3, :3], pose[:, p, :3, 3]
            inherit_rot = parent_rot if rig.inherit_rotation[b] else rest[p, :3, :3]
        base = inherit_rot @ offset[:3, :3]  # [F,3,3] or [3,3]
        if b in target:
            basis = np.swapaxes(base, -1, -2) @ target[b]
            rot_ch[:, b] = _quat(basis)
        else:
            basis = ref_rot[:, b]
        pose[:, b, :3, :3] = base @ basis
        loc_axes = np.broadcast_to(location_axes(rig, b, None if p < 0 else parent_rot), (frames, 3, 3))
        head = (np.broadcast_to(parent_rot, (frames, 3, 3)) @ offset[:3, 3]) + parent_pos
        loc = np.zeros((frames, 3)) if rig.use_connect[b] else loc_ch[:, b]
        pose[:, b, :3, 3] = head + (loc_axes @ loc[..., None])[..., 0]
        if b == pm.root_bone:
            _place_root(pm, pose, loc_ch, pm.from_sim(body_pos[:, 0]) - pose[:, b, :3, 3])
    for i, b in enumerate(pm.body_bones[1:], start=1):  # bodies hung beside the root's hierarchy
        p = int(rig.parents[b])
        if p < 0 or pm.bone_body[p] < 0:
            _shift_bone(pm, int(b), pose, loc_ch, pm.from_sim(body_pos[:, i]) - pose[:, b, :3, 3])
    rot_ch = make_quat_continuous(torch.as_tensor(rot_ch), dim=0).numpy()
    return MotionClip(reference.bone_names, reference.fps, reference.frame_start, rot_ch, loc_ch)


def _shift_bone(pm: PhysicsModel, bone: int, pose: np.ndarray, loc_ch: np.ndarray, delta: np.ndarray) -> int:
    """Move ``bone`` by ``delta`` [F,3] (armature space) through the location channel of its nearest
    unconnected ancestor-or-self (``loc_ch`` in place; ``pose`` holds the parents' armature-space
    poses). Returns the bone whose channel moved."""
    rig = pm.rig
    b = bone
    while rig.use_connect[b] and rig.parents[b] >= 0:
        b = int(rig.parents[b])
    p = int(rig.parents[b])
    axes = np.broadcast_to(location_axes(rig, b, None if p < 0 else pose[:, p, :3, :3]), delta.shape[:1] + (3, 3))
    loc_ch[:, b] += np.linalg.solve(axes, delta[..., None])[..., 0]
    return b


def _place_root(pm: PhysicsModel, pose: np.ndarray, loc_ch: np.ndarray, delta: np.ndarray) -> None:
    """Move the root body's bone by ``delta`` [F,3] (armature space) through the location channel
    of the nearest bone that has a usable one (itself unless connected), updating ``pose``."""
    b = _shift_bone(pm, pm.root_bone, pose, loc_ch, delta)
    # the moved bone and everything placed so far below it shift rigidly by delta
    moved = [c for c in range(pm.root_bone + 1) if c == b or _is_descendant(pm.rig.parents, c, b)]
    for c in moved:
        pose[:, c, :3, 3] += delta


def _is_descendant(parents: np.ndarray, c: int, a: int) -> bool:
    while c >= 0:
        c = int(parents[c])
        if c == a:
            return True
    return False
