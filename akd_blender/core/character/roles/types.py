"""The plain data that bone-role finding returns: the body frame, limbs and the roles of a rig's bones."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BodyFrame", "Limb", "BoneRoles", "KINDS", "LIMB_GROUPS"]

KINDS = ("biped", "quadruped", "hexapod", "bird", "serpent", "other")
LIMB_GROUPS = {"legs": "leg", "arms": "arm", "wings": "wing"}


@dataclass(frozen=True, eq=False)
class BodyFrame:
    """The character's own axes in armature space, and its rest-pose extents.

    up: float64 [3], unit, the world's up (+Z world) expressed in armature space.
    forward: float64 [3], unit, perpendicular to ``up``: the way the character faces.
    left: float64 [3], unit, ``cross(up, forward)``: the character's own left.
    height: extent of the skinned rest mesh along ``up`` (armature units).
    length: extent of the skinned rest mesh along ``forward`` (armature units).
    ground: lowest rest vertex along ``up`` (armature units, ``dot(vertex, up)``).
    """

    up: np.ndarray
    forward: np.ndarray
    left: np.ndarray
    height: float
    length: float
    ground: float

    def to_armature(self, v_char: np.ndarray) -> np.ndarray:
        """Vectors [...,3] given as (left, forward, up) components -> armature-space vectors [...,3]."""
        v = np.asarray(v_char, dtype=np.float64)
        return v[..., 0:1] * self.left + v[..., 1:2] * self.forward + v[..., 2:3] * self.up

    def to_character(self, v_arm: np.ndarray) -> np.ndarray:
        """Armature-space vectors [...,3] -> (left, forward, up) components [...,3] (inverse of ``to_armature``)."""
        v = np.asarray(v_arm, dtype=np.float64)
        return np.stack([v @ self.left, v @ self.forward, v @ self.up], axis=-1)


@dataclass(frozen=True)
class Limb:
    """One limb: ``side`` is "left" | "right" | "center" (the character's own side); ``position`` is
    "front" | "middle" | "hind" for legs of many-legged bodies and "" otherwise; ``bones`` are rig bone
    indices from the body outwards (upper, lower, foot/hand, toe ...)."""

    side: str
    position: str
    bones: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class BoneRoles:
    """What each bone of a rig does, found from topology, rest geometry and skin weights.

    kind: one of ``KINDS``. root: the bone that carries the whole body (pelvis / hips). spine: bones from
    the first one above the root to the chest, in order. neck: bones between the chest and the head.
    head: the head bone or None. tail: root->tip. legs: ground-touching limbs. arms: upper-body limbs of
    bipeds (clavicle first when present). wings: broad, flat lateral limbs. extras: chains with no role
    (ears, jaw, fingers, toes of a branching foot, helper bones), each ordered from the body outwards.
    """

    kind: str
    frame: BodyFrame
    root: int
    spine: tuple[int, ...]
    neck: tuple[int, ...]
    head: int | None
    tail: tuple[int, ...]
    legs: tuple[Limb, ...]
    arms: tuple[Limb, ...]
    wings: tuple[Limb, ...]
    extras: tuple[tuple[int, ...], ...] = ()

    def limb(self, group: str, side: str, position: str = "") -> Limb | None:
        """The limb of ``group`` ("legs", "arms" or "wings") on ``side`` at ``position``; None when absent."""
        if group not in LIMB_GROUPS:
            raise ValueError(f"limb group must be one of {sorted(LIMB_GROUPS)}, not '{group}'")
        for limb in getattr(self, group):
            if limb.side == side and limb.position == position:
                return limb
        return None

    def role_of(self) -> dict[int, str]:
        """Bone index -> role name: "root", "spine", "neck", "head", "tail", "leg.left" (bipeds),
        "leg.front.left" / "leg.middle.right" / "leg.hind.left" (many legs), "arm.left", "wing.right".
        Bones with no role (extras, helpers above the root) are absent."""
        roles: dict[int, str] = {self.root: "root"}
        for name in ("spine", "neck", "tail"):
            roles.update({b: name for b in getattr(self, name)})
        if self.head is not None:
            roles[self.head] = "head"
        for group, word in LIMB_GROUPS.items():
            for limb in getattr(self, group):
                label = ".".join(part for part in (word, limb.position, limb.side) if part)
                roles.update({b: label for b in limb.bones})
        return roles
