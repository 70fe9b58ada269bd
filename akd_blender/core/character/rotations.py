"""Rotation conversions in Blender's conventions, on top of ``roma``.

Blender (and :class:`~akd_blender.core.motion.clip.MotionClip`) stores quaternions as (w, x, y, z);
``roma`` uses (x, y, z, w). Everything here takes and returns **wxyz** unless the name says
otherwise. All functions are batched over leading dimensions and differentiable.

Continuous parametrisations for optimisation:
- rotation vectors (axis × angle, radians) — used by :class:`MotionParams` as offsets from rest;
- the 6D representation (first two matrix columns, Zhou et al. 2019).
"""

from __future__ import annotations

import numpy as np
import roma
import torch

__all__ = [
    "nearest_rotation",
    "quat_to_matrix",
    "matrix_to_quat",
    "rotvec_to_quat",
    "quat_to_rotvec",
    "sixd_to_matrix",
    "matrix_to_sixd",
    "quat_to_euler",
    "euler_to_quat",
    "quat_multiply",
    "quat_conjugate",
    "make_quat_continuous",
]


def quat_to_matrix(quat: torch.Tensor) -> torch.Tensor:
    """Unit quaternions [...,4] (wxyz) → rotation matrices [...,3,3] (normalises first)."""
    xyzw = roma.quat_wxyz_to_xyzw(quat)
    return roma.unitquat_to_rotmat(xyzw / xyzw.norm(dim=-1, keepdim=True))


def matrix_to_quat(matrix: torch.Tensor) -> torch.Tensor:
    """Rotation matrices [...,3,3] → unit quaternions [...,4] (wxyz, w ≥ 0)."""
    quat = roma.quat_xyzw_to_wxyz(roma.rotmat_to_unitquat(matrix))
    return torch.where(quat[..., :1] < 0, -quat, quat)


def rotvec_to_quat(rotvec: torch.Tensor) -> torch.Tensor:
    """Rotation vectors [...,3] (radians) → unit quaternions [...,4] (wxyz)."""
    return roma.quat_xyzw_to_wxyz(roma.rotvec_to_unitquat(rotvec))


def quat_to_rotvec(quat: torch.Tensor) -> torch.Tensor:
    """Unit quaternions [...,4] (wxyz) → rotation vectors [...,3], angle in [0, π]."""
    return roma.unitquat_to_rotvec(roma.quat_wxyz_to_xyzw(quat), shortest_arc=True)


def sixd_to_matrix(sixd: torch.Tensor) -> torch.Tensor:
    """6D representation [...,6] (two columns, column-major) → rotation matrices [...,3,3]."""
    return roma.special_gramschmidt(sixd.reshape(*sixd.shape[:-1], 2, 3).transpose(-1, -2))


def matrix_to_sixd(matrix: torch.Tensor) -> torch.Tensor:
    """Rotation matrices [...,3,3] → 6D representation [...,6] (first two columns)."""
    return matrix[..., :, :2].transpose(-1, -2).reshape(*matrix.shape[:-2], 6)


def quat_multiply(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton product a·b of quaternions [...,4] (wxyz)."""
    xyzw = roma.quat_product(roma.quat_wxyz_to_xyzw(a), roma.quat_wxyz_to_xyzw(b))
    return roma.quat_xyzw_to_wxyz(xyzw)


def quat_conjugate(quat: torch.Tensor) -> torch.Tensor:
    """Conjugates [...,4] (wxyz) of quaternions [...,4]: the inverse rotations of unit quaternions."""
    return quat * torch.tensor([1.0, -1.0, -1.0, -1.0], dtype=quat.dtype, device=quat.device)


def quat_to_euler(quat: torch.Tensor, mode: str) -> torch.Tensor:
    """Unit quaternions [...,4] (wxyz) → Euler angles [...,3] (radians, x/y/z order of the
    channels) for a Blender ``rotation_mode`` such as ``"XYZ"`` (extrinsic, X applied first)."""
    angles = roma.unitquat_to_euler(mode.lower(), roma.quat_wxyz_to_xyzw(quat))
    return _axis_order(angles, mode, to_xyz=True)


def euler_to_quat(angles: torch.Tensor, mode: str) -> torch.Tensor:
    """Euler angles [...,3] (radians, channels x, y, z) in Blender ``rotation_mode`` → wxyz."""
    ordered = _axis_order(angles, mode, to_xyz=False)
    return roma.quat_xyzw_to_wxyz(roma.euler_to_unitquat(mode.lower(), ordered))


def _axis_order(angles: torch.Tensor | list, mode: str, to_xyz: bool) -> torch.Tensor:
    """roma orders Euler angles as the convention string; Blender channels are always x, y, z."""
    if isinstance(angles, (list, tuple)):
        angles = torch.stack(list(angles), dim=-1)
    order = ["XYZ".index(axis) for axis in mode]  # position in xyz of each convention axis
    if to_xyz:
        inverse = [order.index(i) for i in range(3)]
        return angles[..., inverse]
    return angles[..., order]


def make_quat_continuous(quat: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """Flip signs along ``dim`` (time) so consecutive quaternions [...,4] lie in one hemisphere.

    q and -q are the same rotation; per-channel interpolation between keys (Blender's F-curves)
    takes the short way only when neighbours agree in sign.
    """
    quat = quat.movedim(dim, 0)
    if quat.shape[0] < 2:
        return quat.movedim(0, dim)
    # Flipping q_i flips the sign of both its dot products, so the flip of frame i is the parity
    # of negative dot products up to i: a cumulative product of signs.
    dots = (quat[1:] * quat[:-1]).sum(-1, keepdim=True)
    signs = torch.cumprod(torch.where(dots < 0, -torch.ones_like(dots), torch.ones_like(dots)), dim=0)
    signs = torch.cat([torch.ones_like(signs[:1]), signs], dim=0)
    return (quat * signs).movedim(0, dim)


def nearest_rotation(m: np.ndarray) -> np.ndarray:
    """The rotation [3,3] nearest to 3×3 ``m`` (its polar factor: a stretch, scale or shear dropped)."""
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    if np.linalg.det(r) < 0:
        u[:, -1] *= -1
        r = u @ vt
    return r
