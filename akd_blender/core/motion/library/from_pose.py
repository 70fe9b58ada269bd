"""Library motions played from a held pose instead of the rest pose.

The library's motions aim limbs at body-frame directions from the bones' posed directions (an arm
raised overhead is aimed overhead from wherever it hangs). A job composes a motion on the pose the
armature holds (each bone's channel = the held rotation, then the motion's turn), so the motion's
turns must be made *from that pose*: a turn made from the rest pose (a T-pose) and composed on a held
pose with the arms down turns the arms twice (the arms meant to end overhead end level, across the
body). :func:`posed_rest` builds the rig whose rest pose is the held pose, and :func:`played_from`
plays a motion on it: its rotations are then turns from the held pose, exactly what the composition
expects (for Blender's ``pose_b = pose_p · rest_p⁻¹ · rest_b · basis_b``: with the held pose as the
rest, ``rest'_p⁻¹ · rest'_b = rest_p⁻¹ · rest_b · held_b``, so ``basis_b = held_b · turn_b``).

The held body's heading (its turn about the body's up axis) is taken out before the motion is played,
so that the motion's body frame (the roles' up, forward, left) stays the body's own; the composition
puts the heading back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import torch

from ...character.kinematics import Skeleton
from ...character.rig import RigAsset
from ...character.rotations import matrix_to_quat, quat_multiply
from ..clip import MotionClip
from .pose import location_axes

__all__ = ["posed_rest", "without_heading", "played_from"]


def posed_rest(rig: RigAsset, rotations: np.ndarray) -> RigAsset:
    """``rig`` with its rest pose replaced by the pose of channel ``rotations`` [J,4] (wxyz, locations
    zero): rest matrices, heads and tails are the posed bones' (armature space), the vertices the
    posed skinned mesh; everything else (hierarchy, flags, weights, ground, height) is the rig's."""
    skeleton = Skeleton(rig, torch.float64)
    channels = torch.as_tensor(np.asarray(rotations, dtype=np.float64))[None]
    pose = skeleton.pose_matrices(channels, torch.zeros(1, rig.num_bones, 3, dtype=torch.float64))
    vertices = skeleton.skin(pose, space="armature")[0].numpy()
    pose = pose[0].numpy()
    carried = pose @ np.linalg.inv(rig.rest_matrices)  # [J,4,4] rest → posed, per bone
    tails = np.einsum("jab,jb->ja", carried[:, :3, :3], rig.tails) + carried[:, :3, 3]
    return replace(rig, rest_matrices=pose, heads=pose[:, :3, 3].copy(), tails=tails, vertices=vertices)


def without_heading(rig: RigAsset, root: int, rotations: np.ndarray, heading: np.ndarray) -> np.ndarray:
    """Channel ``rotations`` [J,4] with the turn ``heading`` [3,3] (armature space, about the body's up
    axis) taken off bone ``root`` (a bone without a parent, or whose ancestors are at rest)."""
    rest = rig.rest_matrices[root, :3, :3]
    undo = torch.as_tensor(rest.T @ np.asarray(heading, dtype=np.float64).T @ rest)
    out = np.array(rotations, dtype=np.float64, copy=True)
    out[root] = quat_multiply(matrix_to_quat(undo), torch.as_tensor(out[root])).numpy()
    return out


def played_from(
    rig: RigAsset,
    root: int,
    held: np.ndarray | None,
    heading: np.ndarray | None,
    play: Callable[[RigAsset], MotionClip],
) -> MotionClip:
    """The clip ``play`` makes on ``rig``, played from the held pose: ``held`` [J,4] the held channel
    rotations (None or all identity: the rest pose, and ``play(rig)`` as it is), ``heading`` [3,3] the held
    body's turn about its up axis (armature space; None: none), taken off bone ``root`` (the roles' root)
    before playing. The clip's rotations are each bone's turn from the held pose (compose as ``held ·
    turn``); its locations are in ``rig``'s own location axes (the armature-space translation they
    make with the held pose's ancestors at rest is kept)."""
    if held is None:
        return play(rig)
    held = np.asarray(held, dtype=np.float64)
    if heading is not None:
        held = without_heading(rig, root, held, heading)
    if np.allclose(np.abs(held[:, 0]), 1.0, atol=1e-12):
        return play(rig)
    posed = posed_rest(rig, held)
    clip = play(posed)
    locations = clip.locations.copy()
    for bone in np.flatnonzero(np.abs(locations).max(axis=(0, 2)) > 0):
        to_rig = np.linalg.solve(location_axes(rig, int(bone)), location_axes(posed, int(bone)))
        locations[:, bone] = locations[:, bone] @ to_rig.T
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations, locations)
