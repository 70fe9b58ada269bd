"""The lowest point of a posed body: the height of the lowest skinned vertex a bone's subtree carries, each
frame, with the project's FK + LBS (the library lifts or lowers the root by it so that the body stands on
the ground)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from ...character.kinematics import Skeleton, skinning_matrices
from ...character.rig import RigAsset
from ..clip import MotionClip

__all__ = ["lowest_heights"]


@lru_cache(maxsize=16)
def _skeleton(rig: RigAsset) -> Skeleton:
    return Skeleton(rig, torch.float64)


def _subtree_mask(rig: RigAsset, bone: int) -> np.ndarray:
    """bool [J]: ``bone`` and its descendants."""
    mask = np.zeros(rig.num_bones, dtype=bool)
    mask[bone] = True
    for b in range(bone + 1, rig.num_bones):
        if rig.parents[b] >= 0 and mask[rig.parents[b]]:
            mask[b] = True
    return mask


@lru_cache(maxsize=16)
def _carried_skin(rig: RigAsset, carrier: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Linear blend skinning of the vertices carried by the ``carrier`` bone's subtree (weights > 0.5
    on it; every weighted vertex when none is) as one product: (blend [Vc,4·Jd] = each deform bone's
    weight × the vertex's rest [x, y, z, 1], rest share [Vc,3] = the vertex × its weight missing from
    1), float64, the deform bones in :class:`~akd_blender.core.character.kinematics.Skeleton`'s order."""
    weights = rig.weights[:, _subtree_mask(rig, carrier)].sum(1)
    carried = weights > 0.5
    if not carried.any():
        carried = rig.weights.sum(1) > 0
    skeleton = _skeleton(rig)
    w = skeleton.weights[torch.as_tensor(carried)]  # [Vc,Jd]
    rest = skeleton.vertices[torch.as_tensor(carried)]  # [Vc,3]
    homogeneous = torch.cat([rest, torch.ones_like(rest[:, :1])], 1)  # [Vc,4]
    blend = (w[:, :, None] * homogeneous[:, None, :]).flatten(1)
    return blend, (1.0 - w.sum(1, keepdim=True)) * rest


def lowest_heights(rig: RigAsset, clip: MotionClip, up: np.ndarray, carrier: int) -> np.ndarray:
    """Height along ``up`` [F] of the lowest skinned vertex carried by the ``carrier`` bone's subtree
    (armature units), posed by ``clip`` with the project's FK + LBS (only the heights are formed:
    each frame's skinning matrices' rows along ``up`` times :func:`_carried_skin`)."""
    skeleton = _skeleton(rig)
    blend, rest_share = _carried_skin(rig, carrier)
    pose = skeleton.pose_matrices(*clip.pose_channels(torch.float64))
    deform = skeleton.deform_bones
    skin = skinning_matrices(pose[:, deform], skeleton.rest_inverse[deform])  # [F,Jd,4,4]
    axis = torch.as_tensor(up, dtype=torch.float64)
    rows = torch.einsum("c,fjck->fjk", axis, skin[:, :, :3, :])  # [F,Jd,4]: (up · R | up · t) per bone
    heights = rows.flatten(1) @ blend.T + rest_share @ axis  # [F,Vc]
    return heights.amin(1).numpy()
