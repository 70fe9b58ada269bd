"""The pose builder of the labelled library's procedural motions: per-bone rotations about rest-frame
axes and the root's path, for F frames, as a :class:`~akd_blender.core.motion.clip.MotionClip`."""

from __future__ import annotations

import numpy as np
import torch

from ...character.rig import RigAsset
from ...character.rotations import quat_multiply, rotvec_to_quat
from ..clip import MotionClip

__all__ = ["LabelledPose", "X", "Y", "Z"]

X, Y, Z = np.eye(3)
"""The rest frame's axes: the character faces -Y with Z up, so X points to its left (the biped's left arm
points to +X)."""


class LabelledPose:
    """Accumulates per-bone world-axis rotations and the root path for F frames."""

    def __init__(self, rig: RigAsset, frames: int, fps: float) -> None:
        self.rig, self.frames, self.fps = rig, frames, fps
        self.quat = torch.zeros(frames, rig.num_bones, 4, dtype=torch.float64)
        self.quat[..., 0] = 1.0
        self.root_delta = np.zeros((frames, 3))

    def rotate(self, bone: str, axis: np.ndarray, angle: np.ndarray | float) -> LabelledPose:
        """Post-multiply bone's rotation by ``angle`` [F] (radians) about ``axis`` (rest frame)."""
        b = self.rig.bone_index(bone)
        local_axis = self.rig.rest_matrices[b, :3, :3].T @ axis
        angle = np.broadcast_to(np.asarray(angle, dtype=np.float64), (self.frames,))
        q = rotvec_to_quat(torch.as_tensor(angle[:, None] * local_axis[None]))
        self.quat[:, b] = quat_multiply(self.quat[:, b], q)
        return self

    def pre_rotate(self, bone: str, axis: np.ndarray, angle: np.ndarray | float) -> LabelledPose:
        """Pre-multiply (apply after everything else, e.g. the facing yaw of the root)."""
        b = self.rig.bone_index(bone)
        local_axis = self.rig.rest_matrices[b, :3, :3].T @ axis
        angle = np.broadcast_to(np.asarray(angle, dtype=np.float64), (self.frames,))
        q = rotvec_to_quat(torch.as_tensor(angle[:, None] * local_axis[None]))
        self.quat[:, b] = quat_multiply(q, self.quat[:, b])
        return self

    def clip(self, facing: float, yaw: np.ndarray | None = None) -> MotionClip:
        """The clip: the root path (character frame) is turned by ``facing`` (+ per-frame ``yaw``)."""
        root = int(self.rig.root_indices[0])
        name = self.rig.bone_names[root]
        total_yaw = facing + (np.zeros(self.frames) if yaw is None else yaw)
        self.pre_rotate(name, Z, total_yaw)
        c, s = np.cos(facing), np.sin(facing)
        turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        delta = self.root_delta @ turn.T
        locations = np.zeros((self.frames, self.rig.num_bones, 3))
        rest = self.rig.rest_matrices[root, :3, :3]
        locations[:, root] = delta @ rest if self.rig.use_local_location[root] else delta
        return MotionClip(self.rig.bone_names, self.fps, 1, self.quat.numpy().copy(), locations).continuous()
