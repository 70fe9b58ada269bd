"""Which way a held pose's body faces, for library motions that travel: a character the animator turned
(its root control) walks the way it faces.

:func:`held_yaw` is the body's heading in a held pose as a rotation about the body's up axis;
:func:`held_heading` is that of a job's parameters' held starting pose; :func:`held_travel` turns a
library clip's travel by it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from ..character.rig import RigAsset
from ..errors import InputError
from ..motion.clip import MotionClip, MotionParams

if TYPE_CHECKING:
    from ..character.roles import BoneRoles

__all__ = ["held_yaw", "held_heading", "held_travel"]


def held_yaw(rig: RigAsset, roles: BoneRoles, held: MotionClip) -> np.ndarray:
    """[3,3] the turn about the body's up axis (armature space) of the body in ``held``'s first frame: its
    heading (:func:`~akd_blender.core.prompt.compose.clip.root_yaw`) as a rotation."""
    from ..character.rotations import quat_to_matrix, rotvec_to_quat
    from ..prompt.compose.clip import root_yaw

    yaw = float(root_yaw(rig, roles, held)[0])
    return quat_to_matrix(rotvec_to_quat(torch.as_tensor(yaw * np.asarray(roles.frame.up, dtype=np.float64)))).numpy()


def held_heading(rig: RigAsset, params: MotionParams, roles: BoneRoles | None = None) -> np.ndarray:
    """[3,3] :func:`held_yaw` of ``params``' held starting pose (the first frame of their base rotations and
    locations) on ``roles`` (default: the rig's, :func:`~akd_blender.core.character.roles.find_roles`); the
    identity when the rig's roles cannot be read."""
    if roles is None:
        from ..character.roles import find_roles

        try:
            roles = find_roles(rig)
        except (InputError, ValueError):
            return np.eye(3)
    held = MotionClip(
        rig.bone_names,
        params.fps,
        1,
        params.base_rotations[:1].detach().cpu().double().numpy(),
        params.base_locations[:1].detach().cpu().double().numpy(),
    )
    return held_yaw(rig, roles, held)


def held_travel(rig: RigAsset, roles: BoneRoles, held: MotionClip, locations: np.ndarray) -> np.ndarray:
    """``locations`` [F,J,3] (a library clip's, travel on its carrier bone) with the carrier's travel turned
    by :func:`held_yaw`: a character the animator has turned (its root control) walks the way it faces."""
    from ..motion.library.pose import location_axes, location_carrier

    carrier = location_carrier(rig, roles.root)
    axes = location_axes(rig, carrier)
    out = locations.copy()
    out[:, carrier] = locations[:, carrier] @ (np.linalg.inv(axes) @ held_yaw(rig, roles, held) @ axes).T
    return out
