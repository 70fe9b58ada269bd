"""Bone roles (root, spine, neck, head, tail, legs, arms, wings) found from a rig's topology, rest
geometry and skin weights, never from bone names. Entry points: :func:`find_roles`, :func:`describe_roles`."""

from __future__ import annotations

from .describe import describe_roles
from .find import find_roles
from .sides import named_side, side_name_warning
from .types import KINDS, BodyFrame, BoneRoles, Limb

__all__ = ["find_roles", "describe_roles", "named_side", "side_name_warning", "BodyFrame", "BoneRoles", "Limb", "KINDS"]
