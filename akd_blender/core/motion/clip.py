"""Motions: MotionClip (per-frame result, Blender's own pose channels) and MotionParams (optimised).

A :class:`MotionClip` is exactly what gets keyed into Blender: for every frame and bone, the pose
bone's ``rotation_quaternion`` (w, x, y, z; relative to rest) and ``location``.
:class:`MotionParams` is the small, continuous set of numbers the distillation optimises — per-key
rotation-vector offsets and a root path — and turns into a clip (differentiably) on demand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..character.rig import RigAsset
from ..character.rotations import make_quat_continuous, quat_multiply, rotvec_to_quat

__all__ = ["MotionClip", "MotionParams", "interpolation_basis"]


@dataclass(frozen=True, eq=False)
class MotionClip:
    """Per-frame pose channels of one armature.

    Attributes:
        bone_names: bone names in Blender order (the rig's order).
        fps: frames per second.
        frame_start: Blender frame number of the first frame.
        rotations: float [F,J,4], each pose bone's ``rotation_quaternion`` (w, x, y, z), relative to
            the bone's rest orientation.
        locations: float [F,J,3], each pose bone's ``location`` (Blender units, in the bone's rest
            frame for bones with local location); usually zero except the root.
    """

    bone_names: tuple[str, ...]
    fps: float
    frame_start: int
    rotations: np.ndarray
    locations: np.ndarray

    def __post_init__(self) -> None:
        f, j = self.rotations.shape[:2] if self.rotations.ndim == 3 else (0, 0)
        if self.rotations.shape != (f, len(self.bone_names), 4) or self.locations.shape != (f, j, 3):
            raise ValueError(
                f"MotionClip: rotations {self.rotations.shape} / locations {self.locations.shape} "
                f"do not match [F,{len(self.bone_names)},4] / [F,{len(self.bone_names)},3]"
            )
        if f < 1:
            raise ValueError("MotionClip needs at least one frame")

    @property
    def num_frames(self) -> int:
        return int(self.rotations.shape[0])

    @property
    def frame_end(self) -> int:
        """Blender frame number of the last frame (inclusive)."""
        return self.frame_start + self.num_frames - 1

    @classmethod
    def rest(cls, rig: RigAsset, frames: int, fps: float = 24.0, frame_start: int = 1) -> MotionClip:
        """A clip holding the rest pose for ``frames`` frames."""
        rotations = np.zeros((frames, rig.num_bones, 4))
        rotations[..., 0] = 1.0
        return cls(rig.bone_names, fps, frame_start, rotations, np.zeros((frames, rig.num_bones, 3)))

    def pose_channels(
        self, dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu"
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotations [F,J,4] and locations [F,J,3] as tensors."""
        return (
            torch.as_tensor(self.rotations, dtype=dtype, device=device),
            torch.as_tensor(self.locations, dtype=dtype, device=device),
        )

    def continuous(self) -> MotionClip:
        """The same clip with quaternion signs flipped so consecutive frames share a hemisphere."""
        quat = make_quat_continuous(torch.as_tensor(self.rotations), dim=0).numpy()
        return MotionClip(self.bone_names, self.fps, self.frame_start, quat, self.locations.copy())

    def matches(self, rig: RigAsset) -> bool:
        """Whether this clip's bones are the rig's bones, in the same order."""
        return tuple(self.bone_names) == tuple(rig.bone_names)


def interpolation_basis(frames: int, keys: int, kind: str = "cubic") -> np.ndarray:
    """Weights [F,K] that interpolate K evenly spaced keys (first at frame 0, last at F-1).

    ``kind`` is ``"linear"`` or ``"cubic"`` (Catmull-Rom, passes through the keys). Rows sum to 1.
    """
    if keys < 2 or frames < 2:
        return np.ones((frames, max(keys, 1))) / max(keys, 1)
    pos = np.linspace(0.0, keys - 1, frames)
    seg = np.minimum(np.floor(pos).astype(int), keys - 2)
    t = pos - seg
    basis = np.zeros((frames, keys))
    rows = np.arange(frames)
    if kind == "linear":
        basis[rows, seg] += 1 - t
        basis[rows, seg + 1] += t
        return basis
    if kind != "cubic":
        raise ValueError(f"interpolation must be 'linear' or 'cubic', not {kind!r}")
    coeffs = [
        (-0.5 * t**3 + t**2 - 0.5 * t),
        (1.5 * t**3 - 2.5 * t**2 + 1),
        (-1.5 * t**3 + 2 * t**2 + 0.5 * t),
        (0.5 * t**3 - 0.5 * t**2),
    ]
    for offset, c in zip((-1, 0, 1, 2), coeffs):
        np.add.at(basis, (rows, np.clip(seg + offset, 0, keys - 1)), c)
    return basis


class MotionParams(torch.nn.Module):
    """The optimised motion: per-key rotation offsets for the free bones and a root path.

    Parameters (``torch.nn.Parameter``):
        rotvec: [K,B,3] rotation vectors (radians, bone-local) of the B free bones, applied on top of
            ``base`` rotations; locked axes are zeroed.
        root_offset: [K,3] translation of the root bones (armature space, Blender units).
    K keys are spread evenly over F frames and interpolated (``interpolation_basis``).

    Buffers: ``base_rotations`` [F,J,4], ``base_locations`` [F,J,3] (the starting clip, rest by
    default), ``free_bones`` [B], ``axis_mask`` [B,3], ``root_axes`` [R,3,3] (armature-space delta →
    location channel), ``basis`` [F,K].
    """

    def __init__(
        self,
        rig: RigAsset,
        frames: int,
        fps: float = 24.0,
        keys: int | None = None,
        interpolation: str = "cubic",
        base: MotionClip | None = None,
        frame_start: int = 1,
    ) -> None:
        super().__init__()
        base = base or MotionClip.rest(rig, frames, fps, frame_start)
        if base.num_frames != frames or not base.matches(rig):
            raise ValueError("MotionParams: base clip does not match the rig and frame count")
        self.bone_names, self.fps, self.frame_start = rig.bone_names, fps, frame_start
        self.interpolation = interpolation  # how the keys are interpolated (interpolation_basis)
        keys = keys or frames
        free = np.flatnonzero(~rig.rotation_locks.all(axis=1))
        roots = rig.root_indices
        # A root's location channel maps to armature space through L = rest.rot (local) or I.
        root_axes = np.stack([rig.rest_matrices[r, :3, :3] if rig.use_local_location[r] else np.eye(3) for r in roots])
        self.rotvec = torch.nn.Parameter(torch.zeros(keys, len(free), 3))
        self.root_offset = torch.nn.Parameter(torch.zeros(keys, 3))
        self.register_buffer("base_rotations", torch.as_tensor(base.rotations, dtype=torch.float32))
        self.register_buffer("base_locations", torch.as_tensor(base.locations, dtype=torch.float32))
        self.register_buffer("free_bones", torch.as_tensor(free, dtype=torch.int64))
        self.register_buffer("axis_mask", torch.as_tensor(~rig.rotation_locks[free], dtype=torch.float32))
        self.register_buffer("root_bones", torch.as_tensor(roots, dtype=torch.int64))
        self.register_buffer("root_axes", torch.as_tensor(root_axes, dtype=torch.float32))
        self.register_buffer("basis", torch.as_tensor(interpolation_basis(frames, keys, interpolation), dtype=torch.float32))

    @property
    def num_frames(self) -> int:
        return int(self.basis.shape[0])

    def frame_rotvecs(self) -> torch.Tensor:
        """[F,B,3] interpolated, lock-masked rotation offsets of the free bones."""
        return torch.einsum("fk,kbc->fbc", self.basis, self.rotvec) * self.axis_mask

    def pose_channels(
        self, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotations [F,J,4] (wxyz) and locations [F,J,3], differentiable w.r.t. the parameters."""
        offsets = rotvec_to_quat(self.frame_rotvecs())
        rotations = self.base_rotations.index_copy(
            1, self.free_bones, quat_multiply(self.base_rotations[:, self.free_bones], offsets)
        )
        root_delta = self.basis @ self.root_offset  # [F,3] armature space
        root_local = torch.einsum("rji,fj->fri", self.root_axes, root_delta)  # L^T · delta, L orthonormal
        locations = self.base_locations.index_add(1, self.root_bones, root_local)
        out = (rotations.to(dtype), locations.to(dtype))
        return out if device is None else tuple(t.to(device) for t in out)

    @torch.no_grad()
    def to_clip(self) -> MotionClip:
        """The current parameters as a MotionClip (float64, sign-continuous quaternions)."""
        rotations, locations = self.pose_channels(torch.float64)
        clip = MotionClip(self.bone_names, self.fps, self.frame_start, rotations.cpu().numpy(), locations.cpu().numpy())
        return clip.continuous()
