"""Motion regularisers: pure torch functions of posed joints / vertices / rotations.

All lengths are divided by ``scale`` (the character's height in Blender units) so the weights do not
depend on the rig's units; all losses are scalars ≥ 0, zero for a motion that breaks no rule.
World space is Blender's (Z up).
"""

from __future__ import annotations

import numpy as np
import torch

from ..character.rig import RigAsset
from ..character.rotations import quat_to_euler

__all__ = [
    "smoothness_loss",
    "ground_penetration_loss",
    "foot_skate_loss",
    "joint_limit_loss",
    "loop_loss",
    "foot_joints",
]

FOOT_WORDS = ("foot", "toe", "paw", "hoof", "ankle")


def smoothness_loss(positions: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Mean squared second-order temporal difference (acceleration per frame²).

    Args:
        positions: [F,N,3] joint (or vertex) positions; F < 3 gives 0.
        scale: length unit (character height).
    """
    if positions.shape[0] < 3:
        return positions.new_zeros(())
    acc = positions[2:] - 2 * positions[1:-1] + positions[:-2]
    return (acc / scale).pow(2).sum(-1).mean()


def ground_penetration_loss(vertices: torch.Tensor, ground_z: float, scale: float = 1.0) -> torch.Tensor:
    """Mean squared depth of vertices below the ground plane ``z = ground_z``.

    Args:
        vertices: [F,V,3] world positions.
    """
    depth = torch.relu(ground_z - vertices[..., 2]) / scale
    return depth.pow(2).mean()


def foot_skate_loss(feet: torch.Tensor, ground_z: float, scale: float = 1.0, contact_height: float = 0.03) -> torch.Tensor:
    """Horizontal foot speed weighted by ground contact.

    Args:
        feet: [F,K,3] world positions of the K foot joints.
        contact_height: height above ``ground_z`` (fraction of ``scale``) below which a foot counts as
            planted; contact weight falls smoothly from 1 at the ground to 0 at twice that height.
    Returns:
        mean over frame pairs and feet of ``contact · |Δxy|² / scale²``.
    """
    if feet.shape[0] < 2 or feet.shape[1] == 0:
        return feet.new_zeros(())
    height = (torch.minimum(feet[1:, :, 2], feet[:-1, :, 2]) - ground_z) / scale
    contact = torch.sigmoid((contact_height - height) / (0.25 * contact_height)).detach()
    slide = ((feet[1:, :, :2] - feet[:-1, :, :2]) / scale).pow(2).sum(-1)
    return (contact * slide).mean()


def joint_limit_loss(rotations: torch.Tensor, limits: torch.Tensor, bones: torch.Tensor) -> torch.Tensor:
    """Squared excess (radians) of the bones' Euler-XYZ angles outside their Limit Rotation ranges.

    Args:
        rotations: [F,J,4] pose-bone quaternions (wxyz).
        limits: [B,3,2] min/max radians for the B limited bones; NaN = unlimited axis.
        bones: int64 [B] indices of those bones in J.
    """
    if bones.numel() == 0:
        return rotations.new_zeros(())
    angles = quat_to_euler(rotations[:, bones], "XYZ")  # [F,B,3]
    lo, hi = limits[..., 0], limits[..., 1]
    excess = torch.relu(torch.nan_to_num(lo, nan=-1e9) - angles) + torch.relu(angles - torch.nan_to_num(hi, nan=1e9))
    return excess.pow(2).mean()


def loop_loss(rotations: torch.Tensor, positions: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """First frame = last frame: quaternion distance (sign-invariant) plus relative joint positions.

    Args:
        rotations: [F,J,4] wxyz. positions: [F,N,3] joints (root-relative positions are compared,
            so a clip that travels can still loop its cycle).
    """
    dot = (rotations[0] * rotations[-1]).sum(-1).abs().clamp(max=1.0)
    rel = positions - positions[:, :1]
    return (1 - dot).mean() + ((rel[0] - rel[-1]) / scale).pow(2).sum(-1).mean()


def foot_joints(rig: RigAsset) -> np.ndarray:
    """int64 indices of the foot bones: names containing foot/toe/paw/hoof/ankle, else the leaf bones
    whose rest tail lies within 10 % of the character's height above its lowest point."""
    named = [i for i, n in enumerate(rig.bone_names) if any(w in n.lower() for w in FOOT_WORDS)]
    if named:
        return np.asarray(named, dtype=np.int64)
    tails_z = rig.tails[:, 2]
    leaves = np.setdiff1d(np.arange(rig.num_bones), rig.parents[rig.parents >= 0])
    low = leaves[tails_z[leaves] <= tails_z.min() + 0.1 * max(np.ptp(rig.heads[:, 2]), 1e-6)]
    return low.astype(np.int64)
