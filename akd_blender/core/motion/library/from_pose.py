"""Library motions started from a held pose (the pose the armature shows when the job starts).

A job composes a motion on the held pose: each bone's channel is the held rotation, then the motion's
turn (``held · turn``). The library's motions are made from the rest pose and set the bones they move
to body-frame poses (an arm raised overhead is aimed overhead; a walk's legs step from the standing
legs); composing such a motion's rotations on a held pose that is not the rest pose turns those bones
twice (the demo biped's arms, held down at its sides, ended level and across the body instead of
overhead; an artist's character held mid-stride walked in lunges and sank).

:func:`turns_from_held` gives the turns that make the composition what the motion means: the bones the
motion moves take the motion's pose, the bones it leaves alone (at rest in every frame of the clip) keep
the held pose, and the body keeps its held heading (its turn about the up axis, on the roles' root).
"""

from __future__ import annotations

import numpy as np
import torch

from ...character.rig import RigAsset
from ...character.rotations import matrix_to_quat, quat_multiply
from ..clip import MotionClip
from .ground_contact import lowest_heights
from .pose import location_axes, location_carrier

__all__ = ["moved_bones", "turns_from_held"]


def moved_bones(clip: MotionClip, tolerance: float = 1e-9) -> np.ndarray:
    """bool [J]: the bones ``clip`` turns away from their rest orientation in some frame."""
    return (1.0 - np.abs(clip.rotations[..., 0])).max(axis=0) > tolerance


def turns_from_held(
    rig: RigAsset,
    root: int,
    held: np.ndarray | None,
    heading: np.ndarray | None,
    clip: MotionClip,
    up: np.ndarray | None = None,
) -> MotionClip:
    """``clip`` (made from the rest pose) as turns to compose on the held pose ``held`` [J,4] (channel
    rotations; None: the rest pose, and ``clip`` as it is): composed as ``held · turn``, every bone the
    clip moves (:func:`moved_bones`) gets the clip's rotation, with bone ``root`` (the roles' root)
    also turned by ``heading`` [3,3] (the held body's turn about its up axis, armature space; None:
    none), and every other bone keeps its held rotation. With ``up`` [3] (the body's up axis), the body
    is moved along it so that its lowest point is where the clip put it, every frame (a held leg the
    motion leaves alone neither sinks the body nor lifts it); locations otherwise as they are."""
    if held is None:
        return clip
    held_q = torch.as_tensor(np.asarray(held, dtype=np.float64))  # [J,4]
    held_q = held_q / held_q.norm(dim=-1, keepdim=True)
    wanted = torch.as_tensor(clip.rotations, dtype=torch.float64).clone()  # [F,J,4] the pose each bone should take
    moved = moved_bones(clip)
    if heading is not None and moved[root]:
        rest = rig.rest_matrices[root, :3, :3]
        turn = matrix_to_quat(torch.as_tensor(rest.T @ np.asarray(heading, dtype=np.float64) @ rest))
        wanted[:, root] = quat_multiply(turn.expand_as(wanted[:, root]), wanted[:, root])
    inverse = held_q * torch.tensor([1.0, -1.0, -1.0, -1.0], dtype=torch.float64)  # unit quaternions: the conjugate
    turns = quat_multiply(inverse.expand_as(wanted), wanted)
    turns[:, ~torch.as_tensor(moved)] = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    if up is None:
        return MotionClip(clip.bone_names, clip.fps, clip.frame_start, turns.numpy(), clip.locations)
    carrier = location_carrier(rig, root)
    final = quat_multiply(held_q.expand_as(turns), turns).numpy()
    posed = MotionClip(clip.bone_names, clip.fps, clip.frame_start, final, clip.locations)
    shift = lowest_heights(rig, clip, up, carrier) - lowest_heights(rig, posed, up, carrier)  # [F] along up
    locations = clip.locations.copy()
    locations[:, carrier] += np.outer(shift, up) @ np.linalg.inv(location_axes(rig, carrier)).T
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, turns.numpy(), locations)
