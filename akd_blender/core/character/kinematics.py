"""Forward kinematics and linear blend skinning, exactly as Blender evaluates an armature.

Pure, batched, differentiable functions plus :class:`Skeleton`, a ``torch.nn.Module`` that holds
one rig's constants as buffers and turns pose channels into deformed vertices.

Blender's pose evaluation for bone ``b`` with parent ``p`` (``BKE_bone_parent_transform_*``)::

    offset_b = rest_p⁻¹ · rest_b                       (root: rest_b)
    basis_b  = T(location_b) · R(rotation_b)           (pose channels, scale 1; Blender ignores
                                                        the location of a connected bone)
    rotation part:    A · offset_b.rot · basis_b.rot   A = pose_p.rot, or rest_p.rot when the bone
                                                         does not inherit rotation (root: I)
    translation part: pose_p · offset_b.head + L · location_b
                      L = pose_p.rot · offset_b.rot (local location), or pose_p.rot (root: I)

For the default flags this is ``pose_b = pose_p · offset_b · basis_b``. Skinning matrices are
``pose_b · rest_b⁻¹``; a vertex moves by the weight-blended skinning matrices, and a vertex with no
weight stays put (Blender's Armature modifier). Scale channels are 1 throughout, so Blender's
inherit-scale modes give the same result as the default and are not modelled.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from .rig import RigAsset
from .rotations import quat_to_matrix

__all__ = [
    "PoseSource",
    "ancestors_mask",
    "depth_levels",
    "location_axes",
    "nearest_body_bone",
    "forward_kinematics",
    "skinning_matrices",
    "linear_blend_skinning",
    "Skeleton",
]


class PoseSource(Protocol):
    """Anything that yields Blender pose channels: a MotionClip or MotionParams."""

    def pose_channels(self, dtype: torch.dtype, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Return rotations [F,J,4] (wxyz) and locations [F,J,3], Blender's pose-bone channels."""
        ...


def ancestors_mask(parents: np.ndarray, bone: int) -> np.ndarray:
    """bool [J]: the bones above ``bone`` in its hierarchy (``bone`` itself excluded); ``parents``
    int [J], parent index or -1."""
    mask = np.zeros(len(parents), dtype=bool)
    b = int(parents[bone])
    while b >= 0:
        mask[b] = True
        b = int(parents[b])
    return mask


def location_axes(rig: RigAsset, bone: int, parent_rotation: np.ndarray | None = None) -> np.ndarray:
    """The armature-space axes in which ``bone``'s location channel moves its head (``L`` of the module
    docstring): ``parent_rotation`` [...,3,3] is the parent's posed armature-space rotation (None for a
    root bone). Returns [...,3,3] (``parent_rotation``'s shape; [3,3] for a root): the parent's rotation
    times the bone's rest offset rotation for a local location, the parent's rotation otherwise (a root:
    its rest rotation, or the identity)."""
    parent = int(rig.parents[bone])
    if parent < 0:
        return rig.rest_matrices[bone, :3, :3] if rig.use_local_location[bone] else np.eye(3)
    if not rig.use_local_location[bone]:
        return parent_rotation
    offset = np.linalg.solve(rig.rest_matrices[parent], rig.rest_matrices[bone])
    return parent_rotation @ offset[:3, :3]


def nearest_body_bone(rig: RigAsset, body_bones: np.ndarray, bone: int) -> int:
    """The bone of ``body_bones`` (int [B]) whose rest segment (head to tail) comes nearest ``bone``'s rest
    head (armature space)."""
    a, b = rig.heads[body_bones], rig.tails[body_bones]  # [B,3]
    d = b - a
    t = np.clip(np.einsum("bi,bi->b", rig.heads[bone] - a, d) / np.maximum(np.einsum("bi,bi->b", d, d), 1e-12), 0.0, 1.0)
    gap = np.linalg.norm(a + t[:, None] * d - rig.heads[bone], axis=-1)
    return int(body_bones[int(np.argmin(gap))])


def depth_levels(parents: np.ndarray) -> list[np.ndarray]:
    """Group bone indices by depth in the hierarchy; level k holds bones with k ancestors.

    Args:
        parents: int [J], parent index or -1; parents precede children.
    Returns:
        list of int64 index arrays, roots first.
    """
    depth = np.zeros(len(parents), dtype=np.int64)
    for b, p in enumerate(parents):
        depth[b] = 0 if p < 0 else depth[p] + 1
    return [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)] if len(parents) else []


def forward_kinematics(
    rotations: torch.Tensor,
    locations: torch.Tensor,
    parents: torch.Tensor,
    rest: torch.Tensor,
    inherit_rotation: torch.Tensor,
    local_location: torch.Tensor,
    connected: torch.Tensor,
    levels: list[torch.Tensor],
) -> torch.Tensor:
    """Pose matrices of every bone in armature space.

    Args:
        rotations: [...,J,4] pose-bone ``rotation_quaternion`` (wxyz; normalised here).
        locations: [...,J,3] pose-bone ``location``.
        parents: int64 [J], parent index or -1.
        rest: [J,4,4] rest matrices (``bone.matrix_local``).
        inherit_rotation, local_location, connected: bool [J], the bones' flags (a connected
            bone's location channel is ignored, as in Blender).
        levels: from :func:`depth_levels` (as tensors), roots first.
    Returns:
        [...,J,4,4] ``pose_bone.matrix`` for every bone (armature space).
    """
    batch = rotations.shape[:-2]
    num_bones = rotations.shape[-2]
    dtype, device = rotations.dtype, rotations.device
    eye = torch.eye(4, dtype=dtype, device=device)
    # 1. Offsets from the parent's rest frame; an extra identity slot J stands in for "no parent".
    rest_ext = torch.cat([rest, eye[None]], dim=0)
    parent_ext = torch.where(parents < 0, torch.full_like(parents, num_bones), parents)
    offsets = torch.linalg.solve(rest_ext[parent_ext], rest)  # [J,4,4]
    basis_rot = quat_to_matrix(rotations)  # [...,J,3,3]
    locations = torch.where(connected[:, None], torch.zeros_like(locations), locations)
    pose = eye.expand(*batch, num_bones + 1, 4, 4)
    for level in levels:
        par = parent_ext[level]
        parent_pose = pose[..., par, :, :]  # [...,n,4,4]
        off = offsets[level]
        # 2. Rotation: parent's posed (or, for hinge bones, rest) orientation · offset · channel.
        inherit = inherit_rotation[level][:, None, None]
        parent_rot = torch.where(inherit, parent_pose[..., :3, :3], rest_ext[par][:, :3, :3])
        rot = parent_rot @ off[:, :3, :3] @ basis_rot[..., level, :, :]
        # 3. Translation: the head carried by the parent's pose, plus the location channel.
        head = (parent_pose[..., :3, :3] @ off[:, :3, 3:4])[..., 0] + parent_pose[..., :3, 3]
        loc_axes = torch.where(
            local_location[level][:, None, None], parent_pose[..., :3, :3] @ off[:, :3, :3], parent_pose[..., :3, :3]
        )
        trans = head + (loc_axes @ locations[..., level, :, None])[..., 0]
        top = torch.cat([rot, trans[..., None]], dim=-1)
        bottom = eye[3:].expand(*top.shape[:-2], 1, 4)
        pose = pose.index_copy(len(batch), level, torch.cat([top, bottom], dim=-2))
    return pose[..., :num_bones, :, :]


def skinning_matrices(pose: torch.Tensor, rest_inverse: torch.Tensor) -> torch.Tensor:
    """``pose_b · rest_b⁻¹``: [...,J,4,4] pose and [J,4,4] inverse rest → [...,J,4,4]."""
    return pose @ rest_inverse


def linear_blend_skinning(
    vertices: torch.Tensor, weights: torch.Tensor, skin: torch.Tensor, unweighted: torch.Tensor | None = None
) -> torch.Tensor:
    """Deform rest vertices by weight-blended skinning matrices.

    Args:
        vertices: [V,3] rest positions (armature space).
        weights: [V,J], rows sum to 1 or are all zero (that vertex stays put).
        skin: [...,J,4,4] skinning matrices.
        unweighted: [V,3] where a vertex without weights stays (None: ``vertices``), e.g. the rest
            positions in world space when ``skin`` maps to world space.
    Returns:
        [...,V,3] deformed positions (in the space ``skin`` maps to).
    """
    blended = (weights @ skin[..., :3, :].flatten(-2)).unflatten(-1, (3, 4))  # [...,V,3,4]
    x, y, z = vertices.unbind(-1)  # the blended 3×4 matrices times [x, y, z, 1], one column at a time
    moved = blended[..., 0] * x[:, None] + blended[..., 1] * y[:, None] + blended[..., 2] * z[:, None] + blended[..., 3]
    still = (1.0 - weights.sum(-1, keepdim=True)) * (vertices if unweighted is None else unweighted)
    return moved + still


class Skeleton(torch.nn.Module):
    """One rig's kinematic and skinning constants as buffers; poses → deformed vertices.

    ``Skeleton(rig)(motion)`` takes a MotionClip or MotionParams (anything with
    ``pose_channels``) or a ``(rotations [F,J,4], locations [F,J,3])`` pair and returns world-space
    vertices [F,V,3] of all deformed meshes concatenated in ``rig.mesh_names`` order, equal to
    Blender's evaluated meshes. Only deform bones' columns of the weights are kept.
    """

    def __init__(self, rig: RigAsset, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.rig = rig
        self.levels = [torch.as_tensor(level) for level in depth_levels(rig.parents)]
        deform = np.flatnonzero(rig.use_deform & (rig.weights.sum(0) > 0))
        self.register_buffer("parents", torch.as_tensor(rig.parents, dtype=torch.int64))
        self.register_buffer("rest", torch.as_tensor(rig.rest_matrices, dtype=dtype))
        self.register_buffer("rest_inverse", torch.linalg.inv(torch.as_tensor(rig.rest_matrices, dtype=torch.float64)).to(dtype))
        self.register_buffer("inherit_rotation", torch.as_tensor(rig.inherit_rotation, dtype=torch.bool))
        self.register_buffer("local_location", torch.as_tensor(rig.use_local_location, dtype=torch.bool))
        self.register_buffer("connected", torch.as_tensor(rig.use_connect, dtype=torch.bool))
        self.register_buffer("deform_bones", torch.as_tensor(deform, dtype=torch.int64))
        self.register_buffer("vertices", torch.as_tensor(rig.vertices, dtype=dtype))
        self.register_buffer("weights", torch.as_tensor(rig.weights[:, deform], dtype=dtype))
        self.register_buffer("armature_world", torch.as_tensor(rig.armature_world, dtype=dtype))
        world = torch.as_tensor(rig.armature_world, dtype=torch.float64)
        rest_world = torch.as_tensor(rig.vertices, dtype=torch.float64) @ world[:3, :3].T + world[:3, 3]
        self.register_buffer("world_rest", rest_world.to(dtype))  # [V,3] the rest vertices in world space

    def _apply(self, fn, recurse=True):  # keep the index lists on the buffers' device
        super()._apply(fn, recurse)
        self.levels = [level.to(self.parents.device) for level in self.levels]
        return self

    def pose_matrices(self, rotations: torch.Tensor, locations: torch.Tensor) -> torch.Tensor:
        """Rotations [...,J,4] (wxyz) and locations [...,J,3] → pose matrices [...,J,4,4] (armature space)."""
        return forward_kinematics(
            rotations.to(self.rest.dtype),
            locations.to(self.rest.dtype),
            self.parents,
            self.rest,
            self.inherit_rotation,
            self.local_location,
            self.connected,
            self.levels,
        )

    def deform(self, rotations: torch.Tensor, locations: torch.Tensor, space: str = "world") -> torch.Tensor:
        """Pose channels [...,J,4], [...,J,3] → vertices [...,V,3] in ``"world"`` or ``"armature"`` space."""
        return self.skin(self.pose_matrices(rotations, locations), space)

    def skin(self, pose: torch.Tensor, space: str = "world") -> torch.Tensor:
        """Pose matrices [...,J,4,4] (armature space, from :meth:`pose_matrices`) → vertices [...,V,3]
        in ``"world"`` or ``"armature"`` space (linear blend skinning; no second FK pass)."""
        if space not in ("world", "armature"):
            raise ValueError(f"space must be 'world' or 'armature', not {space!r}")
        skin = skinning_matrices(pose[..., self.deform_bones, :, :], self.rest_inverse[self.deform_bones])
        if space == "armature":
            return linear_blend_skinning(self.vertices, self.weights, skin)
        # The armature's world matrix folded into the J skinning matrices, not applied to V vertices.
        return linear_blend_skinning(self.vertices, self.weights, self.armature_world @ skin, self.world_rest)

    def forward(self, motion: PoseSource | tuple[torch.Tensor, torch.Tensor], space: str = "world") -> torch.Tensor:
        """A MotionClip / MotionParams / (rotations, locations) pair → vertices [F,V,3]."""
        if isinstance(motion, tuple):
            rotations, locations = motion
        else:
            rotations, locations = motion.pose_channels(self.rest.dtype, self.rest.device)
        return self.deform(rotations, locations, space)

    def joint_positions(self, rotations: torch.Tensor, locations: torch.Tensor, space: str = "world") -> torch.Tensor:
        """Posed bone heads [...,J,3] (world or armature space)."""
        heads = self.pose_matrices(rotations, locations)[..., :3, 3]
        if space == "armature":
            return heads
        return heads @ self.armature_world[:3, :3].T + self.armature_world[:3, 3]
