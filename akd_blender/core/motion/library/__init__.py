"""The motion library over bone roles: every motion plays on any character of its kind (procedural
or an artist's rig) through :class:`~akd_blender.core.character.roles.BoneRoles`. See :mod:`.specs` for the
motions per kind and their phrasings, :mod:`.pose` for how body-frame angles become pose channels,
:mod:`.gait_styles` for the styles a gait plays (:data:`GAIT_STYLES`: kind → style names)."""

from .gait_styles import GAIT_STYLES
from .pose import BodyPose
from .specs import KINDS, LIBRARY, RoleMotionSpec, library_phrasings, make_role_clip, motions_for, role_motion, sample_variations

__all__ = [
    "BodyPose",
    "GAIT_STYLES",
    "KINDS",
    "LIBRARY",
    "RoleMotionSpec",
    "library_phrasings",
    "make_role_clip",
    "motions_for",
    "role_motion",
    "sample_variations",
]
