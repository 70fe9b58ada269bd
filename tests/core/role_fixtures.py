"""Bone roles for the procedural characters, and a procedural bird, for the role-based library's tests.

The roles here are read from the procedural characters' bone names (tests only; the product finds
roles from topology and geometry). When ``akd_blender.core.roles`` is not importable, minimal
dataclasses with the agreed fields stand in for it, in this file only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from akd_blender.core.procedural.characters import HEAD, LEFT, LEFT_END, RIGHT, RIGHT_END, TAIL, TORSO, BoneSpec, build_character
from akd_blender.core.procedural.characters import biped as biped_rig
from akd_blender.core.procedural.characters import quadruped as quadruped_rig
from akd_blender.core.rig import RigAsset

try:
    from akd_blender.core.roles import BodyFrame, BoneRoles, Limb
except ImportError:  # the roles module is not on this branch yet: the agreed fields only

    @dataclass(frozen=True)
    class BodyFrame:  # type: ignore[no-redef]
        up: np.ndarray
        forward: np.ndarray
        left: np.ndarray
        height: float
        length: float
        ground: float

        def to_armature(self, v_char: np.ndarray) -> np.ndarray:
            v = np.asarray(v_char, dtype=np.float64)
            return v[..., :1] * self.left + v[..., 1:2] * self.forward + v[..., 2:3] * self.up

    @dataclass(frozen=True)
    class Limb:  # type: ignore[no-redef]
        side: str
        position: str
        bones: tuple[int, ...]

    @dataclass(frozen=True)
    class BoneRoles:  # type: ignore[no-redef]
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
            for limb in getattr(self, group):
                if limb.side == side and limb.position == position:
                    return limb
            return None


SIDES = (("L", "left"), ("R", "right"))


def _frame(rig: RigAsset) -> BodyFrame:
    up, forward = np.array([0.0, 0.0, 1.0]), np.array([0.0, -1.0, 0.0])
    v = rig.vertices
    return BodyFrame(up, forward, np.cross(up, forward), float(np.ptp(v @ up)), float(np.ptp(v @ forward)), float((v @ up).min()))


def _chain(rig: RigAsset, *names: str) -> tuple[int, ...]:
    return tuple(rig.bone_index(n) for n in names)


def biped_roles(rig: RigAsset) -> BoneRoles:
    """Roles of ``characters.biped()`` from its bone names."""
    return BoneRoles(
        kind="biped",
        frame=_frame(rig),
        root=rig.bone_index("hips"),
        spine=_chain(rig, "spine", "chest"),
        neck=_chain(rig, "neck"),
        head=rig.bone_index("head"),
        tail=(),
        legs=tuple(Limb(side, "", _chain(rig, f"thigh.{s}", f"shin.{s}", f"foot.{s}")) for s, side in SIDES),
        arms=tuple(
            Limb(side, "", _chain(rig, f"shoulder.{s}", f"upper_arm.{s}", f"forearm.{s}", f"hand.{s}")) for s, side in SIDES
        ),
        wings=(),
    )


def quadruped_roles(rig: RigAsset) -> BoneRoles:
    """Roles of ``characters.quadruped()`` from its bone names."""
    legs = tuple(
        Limb(side, position, _chain(rig, f"{leg}_upper.{s}", f"{leg}_lower.{s}", f"{leg}_foot.{s}"))
        for leg, position in (("front", "front"), ("back", "hind"))
        for s, side in SIDES
    )
    return BoneRoles(
        kind="quadruped",
        frame=_frame(rig),
        root=rig.bone_index("pelvis"),
        spine=_chain(rig, "spine", "chest"),
        neck=_chain(rig, "neck"),
        head=rig.bone_index("head"),
        tail=_chain(rig, "tail.1", "tail.2", "tail.3"),
        legs=legs,
        arms=(),
        wings=(),
    )


def bird_rig() -> RigAsset:
    """A 0.6 m procedural bird facing -Y: body, chest, 2-bone neck, head with a beak, tail, legs of
    three bones (tibia down-back, tarsus down-forward, toes), wings of three bones spread sideways."""
    s = [
        BoneSpec("body", None, (0, 0.10, 0.32), (0, -0.10, 0.36), 0.09, TORSO),
        BoneSpec("chest", "body", (0, -0.10, 0.36), (0, -0.20, 0.40), 0.08, TORSO, connect=True),
        BoneSpec("neck.1", "chest", (0, -0.20, 0.40), (0, -0.24, 0.48), 0.035, HEAD, connect=True),
        BoneSpec("neck.2", "neck.1", (0, -0.24, 0.48), (0, -0.26, 0.56), 0.03, HEAD, connect=True),
        BoneSpec("head", "neck.2", (0, -0.26, 0.56), (0, -0.38, 0.56), 0.04, HEAD, connect=True),
        BoneSpec("tail", "body", (0, 0.10, 0.32), (0, 0.26, 0.34), 0.03, TAIL),
    ]
    for side in "LR":
        main, end = (LEFT, LEFT_END) if side == "L" else (RIGHT, RIGHT_END)
        x = 1.0 if side == "L" else -1.0
        s += [
            BoneSpec(f"shin.{side}", "body", (x * 0.05, 0.02, 0.28), (x * 0.05, 0.06, 0.15), 0.025, main),
            BoneSpec(f"tarsus.{side}", f"shin.{side}", (x * 0.05, 0.06, 0.15), (x * 0.05, 0.02, 0.04), 0.018, main, connect=True),
            BoneSpec(f"toe.{side}", f"tarsus.{side}", (x * 0.05, 0.02, 0.04), (x * 0.05, -0.06, 0.02), 0.015, end, connect=True),
            BoneSpec(f"wing_upper.{side}", "chest", (x * 0.07, -0.12, 0.40), (x * 0.22, -0.12, 0.41), 0.03, main),
            BoneSpec(
                f"wing_fore.{side}",
                f"wing_upper.{side}",
                (x * 0.22, -0.12, 0.41),
                (x * 0.38, -0.10, 0.41),
                0.025,
                main,
                connect=True,
            ),
            BoneSpec(
                f"wing_hand.{side}",
                f"wing_fore.{side}",
                (x * 0.38, -0.10, 0.41),
                (x * 0.52, -0.06, 0.41),
                0.02,
                end,
                connect=True,
            ),
        ]
    return build_character("Bird", s)


def bird_roles(rig: RigAsset) -> BoneRoles:
    """Roles of :func:`bird_rig` from its bone names."""
    return BoneRoles(
        kind="bird",
        frame=_frame(rig),
        root=rig.bone_index("body"),
        spine=_chain(rig, "chest"),
        neck=_chain(rig, "neck.1", "neck.2"),
        head=rig.bone_index("head"),
        tail=_chain(rig, "tail"),
        legs=tuple(Limb(side, "", _chain(rig, f"shin.{s}", f"tarsus.{s}", f"toe.{s}")) for s, side in SIDES),
        arms=(),
        wings=tuple(Limb(side, "", _chain(rig, f"wing_upper.{s}", f"wing_fore.{s}", f"wing_hand.{s}")) for s, side in SIDES),
    )


def procedural_characters() -> dict[str, tuple[RigAsset, BoneRoles]]:
    """kind → (rig, roles) for the procedural biped, quadruped and bird."""
    b, q, bird = biped_rig(), quadruped_rig(), bird_rig()
    return {"biped": (b, biped_roles(b)), "quadruped": (q, quadruped_roles(q)), "bird": (bird, bird_roles(bird))}
