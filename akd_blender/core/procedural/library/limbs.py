"""Limb-level building blocks over bone roles: arms hung from their actual rest direction, legs
swung, flexed and kept level, torsos bent over spines of any length, and the gait, jump and turn
that every legged kind shares (the leg phases decide biped, quadruped or bird)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ...motion import MotionClip
from ...rig import RigAsset
from ..motions import Variation
from .pose import BodyPose, knee_sign, limb_length, smoothstep

if TYPE_CHECKING:
    from ...roles import BoneRoles, Limb

__all__ = [
    "rad",
    "side_axis",
    "arm_bones",
    "arm_direction",
    "aim_arm",
    "arms_down",
    "flex_leg",
    "swing_leg",
    "bend_torso",
    "mean_leg_length",
    "gait",
    "jump",
    "turn_in_place",
    "walk_phase_offsets",
]


def rad(degrees: float | np.ndarray) -> np.ndarray | float:
    """Degrees → radians."""
    return np.deg2rad(degrees)


def side_axis(p: BodyPose, limb: Limb) -> np.ndarray:
    """[3] the body axis pointing out of the limb's side (left, right; up for a centre limb)."""
    return {"left": p.left, "right": p.right}.get(limb.side, p.up)


def arm_bones(rig: RigAsset, limb: Limb) -> tuple[int, ...]:
    """The arm without its clavicle: (upper arm, forearm, hand …). The first bone is taken for a
    clavicle when the arm has 4+ bones or its first segment is under 60 % of the second's length."""
    bones = limb.bones
    if len(bones) >= 3:
        points = [rig.heads[b] for b in bones[:3]]
        first, second = np.linalg.norm(points[1] - points[0]), np.linalg.norm(points[2] - points[1])
        if len(bones) >= 4 or first < 0.6 * second:
            return bones[1:]
    return bones


def arm_direction(p: BodyPose, limb: Limb, down: float, out: float = 0.0, forward: float = 0.0) -> np.ndarray:
    """[3] or [F,3] a unit direction from the arm's side: ``down`` along -up, ``out`` away from the
    body's midline, ``forward`` along the facing (scalars or [F] arrays; normalised)."""
    d = np.multiply.outer(np.asarray(down, dtype=np.float64), -p.up)
    d = d + np.multiply.outer(np.asarray(out, dtype=np.float64), side_axis(p, limb))
    d = d + np.multiply.outer(np.asarray(forward, dtype=np.float64), p.forward)
    return d / np.linalg.norm(d, axis=-1, keepdims=True)


def aim_arm(p: BodyPose, limb: Limb, upper: np.ndarray, lower: np.ndarray | None = None, weight=1.0) -> None:
    """Point the upper arm along ``upper`` and (if given) the forearm along ``lower`` ([3] or [F,3]),
    each from its actual posed direction (T-pose, A-pose or arms down alike)."""
    bones = arm_bones(p.rig, limb)
    p.aim(bones[0], bones, upper, weight)
    if lower is not None and len(bones) > 1:
        p.aim(bones[1], bones, lower, weight)


def arms_down(p: BodyPose, spread: float = 8.0) -> None:
    """Hang every arm down at its side, ``spread`` degrees out from vertical (forearm following)."""
    for limb in p.roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, np.cos(rad(spread)), np.sin(rad(spread))))


def swing_leg(p: BodyPose, limb: Limb, angle: np.ndarray | float) -> None:
    """Swing the leg's first bone forward by ``angle`` (radians; negative swings it back)."""
    p.pitch(limb.bones[0], angle)


def flex_leg(p: BodyPose, limb: Limb, angle: np.ndarray | float, level: bool = True) -> None:
    """Fold a leg like a squat by ``angle`` (radians, [F] or scalar) at its first joint: the first bone
    turns by ∓angle, the second by ±2·angle the way its knee bends (:func:`~.pose.knee_sign`), and
    the third bone (foot / metatarsus) is kept at its rest orientation when ``level``."""
    sign = knee_sign(p.rig, p.roles, limb)
    angle = np.asarray(angle, dtype=np.float64)
    p.pitch(limb.bones[0], -sign * angle)
    if len(limb.bones) > 1:
        p.pitch(limb.bones[1], 2 * sign * angle)
    if level and len(limb.bones) > 2:
        p.level(limb.bones[2])


def bend_torso(p: BodyPose, axis: np.ndarray, angle: np.ndarray | float) -> None:
    """Bend the upper body by ``angle`` about ``axis`` spread over the spine (1–4 bones); a rig with no
    spine turns its root and turns the legs back, so they stay where they were."""
    if p.roles.spine:
        p.bend_chain(p.roles.spine, axis, angle)
        return
    p.rotate(p.roles.root, axis, angle)
    for limb in p.roles.legs:
        p.rotate(limb.bones[0], axis, -np.asarray(angle))


def mean_leg_length(rig: RigAsset, roles: BoneRoles) -> float:
    """Mean :func:`~.pose.limb_length` of the legs (10 % of the height for a legless rig)."""
    if not roles.legs:
        return 0.1 * float(roles.frame.height)
    return float(np.mean([limb_length(rig, roles, limb) for limb in roles.legs]))


def walk_phase_offsets(roles: BoneRoles, limb: Limb) -> float:
    """Phase (cycles) of a leg in a walk: left/right alternate; a quadruped's lateral sequence
    (hind-left, front-left, hind-right, front-right); a hexapod's tripods."""
    left = limb.side == "left"
    if limb.position in ("front", "hind"):
        order = {("hind", True): 0.0, ("front", True): 0.25, ("hind", False): 0.5, ("front", False): 0.75}
        return order[(limb.position, left)]
    return 0.0 if left else 0.5


def _tripod_or(offsets: Callable[[BoneRoles, Limb], float], roles: BoneRoles, limb: Limb) -> float:
    if any(leg.position == "middle" for leg in roles.legs):  # six legs: alternating tripods
        return 0.0 if (limb.side == "left") == (limb.position != "middle") else 0.5
    return offsets(roles, limb)


def gait(
    rig: RigAsset,
    roles: BoneRoles,
    frames: int,
    fps: float,
    v: Variation,
    *,
    cycles: float,
    swing: float,
    knee: float,
    offsets: Callable[[BoneRoles, Limb], float] = walk_phase_offsets,
    lean: float = 0.0,
    elbow: float = 15.0,
    spine_flex: float = 0.0,
    bounce: float = 0.0,
    head_bob: float = 4.0,
) -> MotionClip:
    """A cyclic gait travelling along the body's forward axis.

    Each leg swings ``swing`` degrees about the body's right axis with its phase from ``offsets`` and
    flexes ``knee`` degrees while it swings forward (the foot clears the ground; its third bone is
    kept level); arms hang down and swing opposite to their leg with ``elbow`` degrees of bend; the
    torso leans ``lean`` degrees forward and flexes ``spine_flex`` degrees twice a cycle (a bound).
    The body travels ``4·leg length·sin(swing)`` per cycle (each foot sweeps back under the hip for
    half a cycle); ``bounce`` lifts the lowest vertex by that fraction of the leg length at the
    double-frequency peaks (a run's flight). Angles in degrees; ``cycles`` per clip at speed 1.
    """
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (cycles * v.speed * p.t + v.phase)
    bend_torso(p, p.right, -rad(lean) * a - rad(spine_flex) * a * np.sin(w))
    arms_down(p)
    swings = {}
    for limb in roles.legs:
        ph = w + 2 * np.pi * _tripod_or(offsets, roles, limb)
        theta = rad(swing) * a * np.sin(ph)
        swings[limb.side] = theta
        swing_leg(p, limb, theta)
        if len(limb.bones) > 1:
            sign = knee_sign(rig, roles, limb)
            p.pitch(limb.bones[1], sign * (rad(knee) * a * np.clip(np.cos(ph), 0, None) + rad(5)))
        if len(limb.bones) > 2:
            p.level(limb.bones[2])
    for limb in roles.arms:
        bones = arm_bones(rig, limb)
        p.pitch(bones[0], -0.8 * swings.get(limb.side, 0.0))
        if len(bones) > 1:
            p.pitch(bones[1], rad(elbow) * a)
    p.bend_chain(roles.neck, p.right, rad(head_bob) * a * np.sin(2 * w))
    p.wave_chain(roles.tail, p.up, rad(12) * a, w)
    length = mean_leg_length(rig, roles)
    stride = 4 * length * np.sin(rad(swing) * a) * 0.85
    p.travel = np.outer(stride * cycles * v.speed * p.t, p.forward)
    p.lift = bounce * length * a * np.clip(np.sin(2 * w), 0, None) ** 2
    return p.clip(v.facing)


def jump(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, forward: float = 0.0) -> MotionClip:
    """Crouch, spring up, land, crouch again: legs fold (:func:`flex_leg`), the lowest vertex rises
    ``0.4·leg length·amplitude`` at the top; arms swing up in the air; ``forward`` leg lengths of
    travel during the flight (0: in place)."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    ph = (v.speed * p.t + v.phase * 0.25) % 1.0
    crouch = np.exp(-(((ph - 0.15) / 0.09) ** 2)) + np.exp(-(((ph - 0.92) / 0.07) ** 2))
    air = np.where((ph > 0.25) & (ph < 0.82), np.sin(np.pi * np.clip(ph - 0.25, 0, None) / 0.57), 0.0)
    bend_torso(p, p.right, -rad(20) * a * crouch)
    for limb in roles.arms:
        up = np.clip(air, 0, 1)
        aim_arm(p, limb, arm_direction(p, limb, np.cos(rad(8 + 140 * up)), np.sin(rad(8 + 140 * up)) + 0.05, 0.3 * up))
    for limb in roles.legs:
        flex_leg(p, limb, rad(40) * a * crouch + rad(12) * air)
    p.wave_chain(roles.tail, p.right, rad(25) * a, 2 * np.pi * ph)
    length = mean_leg_length(rig, roles)
    p.lift = 0.4 * length * a * air
    progress = smoothstep((ph - 0.25) / 0.57)
    p.travel = np.outer(forward * length * a * progress, p.forward)
    return p.clip(v.facing)


def turn_in_place(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn about the body's centre by ``160°·amplitude`` (left for direction +1), stepping: the legs
    lift in two alternating groups (left/right; a quadruped's diagonal pairs); the neck leads."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    p.yaw = v.direction * rad(160) * a * smoothstep((p.t - 0.05) / (0.85 / v.speed))
    steps = 2 * np.pi * (2.0 * v.speed * p.t + v.phase)
    arms_down(p)
    for limb in roles.legs:
        group = (limb.side == "left") != (limb.position == "hind")
        lift = np.clip(np.sin(steps + np.pi * group), 0, None)
        flex_leg(p, limb, rad(20) * lift)
    p.bend_chain(roles.neck, p.up, v.direction * rad(15) * smoothstep(p.t / 0.3) * (1 - smoothstep((p.t - 0.8) / 0.2)))
    return p.clip(v.facing)
