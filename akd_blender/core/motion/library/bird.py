"""Bird motions (wings, two legs, a neck) over bone roles:
``generate(rig, roles, frames, fps, variation) -> MotionClip``. Wings are found in ``roles.wings``
(any position, "middle" included) and legs in ``roles.legs``; angles in degrees in the body frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .labelled import Variation
from .limbs import flex_leg, gait, jump, lay_tail, mean_leg_length, rad, side_axis, turn_in_place
from .pose import BodyPose, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = ["walk", "run", "jump_up", "turn", "sit", "flap_wings", "peck", "hop", "take_off", "land", "glide"]


def walk(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A bird's walk: 2 strides per clip, feet reaching 25°, the head bobbing 10°."""
    return gait(rig, roles, frames, fps, v, cycles=2.0, swing=25, duty=0.6, head_bob=10)


def run(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A bird's run: 3.2 strides per clip, feet reaching 32°, on the ground 40 % of the time, leaning 15°."""
    return gait(rig, roles, frames, fps, v, cycles=3.2, swing=32, duty=0.4, clearance=0.2, lean=15, head_bob=6)


def jump_up(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A jump in place (:func:`~.limbs.jump`) with a wing beat at the top."""
    return jump(rig, roles, frames, fps, v)


def turn(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn around in place, stepping (:func:`~.limbs.turn_in_place`)."""
    return turn_in_place(rig, roles, frames, fps, v)


def sit(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Settle down: the legs fold fully under the body until it rests on the ground, the neck draws in,
    the tail lifts and the wings fold along the back, off the ground."""
    p = BodyPose(rig, roles, frames, fps)
    s = smoothstep((p.t - 0.1 - 0.2 * v.phase) / (0.5 / v.speed)) * min(v.amplitude, 1.1)
    for limb in p.legs:
        flex_leg(p, limb, rad(55) * s)
    p.bend_chain(roles.neck, p.right, rad(-20) * s)
    if roles.head is not None:
        p.level(roles.head, s)
    lay_tail(p, s, rise=0.3)
    for limb in p.wings:  # folded along the back, off the ground
        for b in limb.bones:
            p.aim(b, limb.bones, -p.forward + 0.3 * p.up + 0.15 * side_axis(p, limb), s)
    return p.clip(v.facing)


def _open_wings(p: BodyPose, weight: np.ndarray | float) -> None:
    """Spread every wing straight out sideways from whatever rest it has (folded or spread)."""
    for limb in p.wings:
        out = side_axis(p, limb) + 0.1 * p.up
        for b in limb.bones:
            p.aim(b, limb.bones, out, weight)


def flap_wings(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Open the wings and beat them 3 times (±55° about the facing axis at the shoulder, the outer
    bones lagging behind); the body bobs with each down-stroke."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (3.0 * v.speed * p.t + v.phase)
    opened = smoothstep(p.t / 0.15)
    _open_wings(p, opened)
    for limb in p.wings:
        sign = 1.0 if limb.side == "left" else -1.0  # about +forward the left wing rises
        for k, b in enumerate(limb.bones):
            p.rotate(b, p.forward, sign * opened * rad(55 if k == 0 else 20) * a * np.sin(w - 0.6 * k))
    p.lift = 0.08 * mean_leg_length(p) * a * np.clip(np.sin(w - np.pi / 2), 0, None) * opened
    return p.clip(v.facing)


def peck(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Peck at the ground three times: the body tips forward, the neck and head strike down and back."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (3.0 * v.speed * p.t + v.phase)
    strike = np.clip(np.sin(w), 0, None) ** 1.5 * min(a, 1.15)
    p.pitch(roles.root, -rad(25) * strike)
    for limb in p.legs:
        p.pitch(limb.bones[0], rad(25) * strike)
    chain = roles.neck + ((roles.head,) if roles.head is not None else ())
    if chain:
        p.aim(chain[0], chain, p.forward * 0.5 - p.up, strike)
        p.bend_chain(chain[1:], p.right, -rad(30) * strike)
    return p.clip(v.facing)


def hop(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Three small two-footed hops forward: both legs fold and spring together, the body rising
    0.3 leg lengths and moving 0.5 leg lengths per hop; wings lift a little in the air."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    hops = 3.0 * v.speed
    ph = (hops * p.t + v.phase) % 1.0
    air = np.where(ph < 0.55, np.sin(np.pi * ph / 0.55), 0.0)
    crouch = np.where(ph >= 0.55, np.sin(np.pi * (ph - 0.55) / 0.45), 0.0)
    for limb in p.legs:
        flex_leg(p, limb, rad(30) * a * crouch + rad(10) * air)
    for limb in p.wings:
        sign = 1.0 if limb.side == "left" else -1.0
        p.rotate(limb.bones[0], p.forward, sign * rad(20) * air)
    length = mean_leg_length(p)
    p.lift = 0.3 * length * a * air
    p.travel = np.outer(0.5 * length * a * hops * p.t, p.forward)
    return p.clip(v.facing)


def _beat(p: BodyPose, phase: np.ndarray, weight: np.ndarray | float, degrees: float) -> None:
    """Beat the opened wings: ±``degrees`` about the facing axis at the shoulder (the outer bones
    lagging, 20°), ``phase`` [F] in radians, ``weight`` [F] or scalar scaling the beat."""
    for limb in p.wings:
        sign = 1.0 if limb.side == "left" else -1.0  # about +forward the left wing rises
        for k, b in enumerate(limb.bones):
            p.rotate(b, p.forward, sign * weight * rad(degrees if k == 0 else 20) * np.sin(phase - 0.6 * k))


def take_off(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Take off: a crouch (legs folded 35°), a spring at a fifth of the clip into four full wing beats
    (±60°), the body climbing 2 leg lengths and flying 2 leg lengths ahead by the end, pitched 15° up,
    the legs tucked in the air."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    t = np.clip((p.t - 0.1 * v.phase) * v.speed, 0.0, 1.0)
    crouch = smoothstep(t / 0.15) * (1.0 - smoothstep((t - 0.15) / 0.08))
    up = smoothstep((t - 0.2) / 0.75)  # 0 on the ground → 1 at the top
    opened = smoothstep(t / 0.15)
    _open_wings(p, opened)
    _beat(p, 2 * np.pi * 4.0 * t, opened, 60 * a)
    for limb in p.legs:
        flex_leg(p, limb, rad(35) * crouch + rad(40) * smoothstep((t - 0.3) / 0.3))
    p.pitch(roles.root, rad(15) * up)
    length = mean_leg_length(p)
    p.lift = 2.0 * length * a * up
    p.travel = np.outer(2.0 * length * a * up, p.forward)
    return p.clip(v.facing)


def land(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Land: coming down from 1.5 leg lengths up and 1.5 behind, wings spread and beating slowly
    (±35°, braking), the legs reaching forward; touch-down at 70 % of the clip with a 25° knee give,
    then the wings fold along the back."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    t = np.clip((p.t - 0.1 * v.phase) * v.speed, 0.0, 1.0)
    down = smoothstep(t / 0.7)  # 0 in the air → 1 on the ground
    spread = 1.0 - smoothstep((t - 0.75) / 0.25)
    _open_wings(p, spread)
    _beat(p, 2 * np.pi * 2.5 * t, spread * (1.0 - smoothstep((t - 0.6) / 0.15)), 35 * a)
    for limb in p.wings:  # folded along the back once down
        for b in limb.bones:
            p.aim(b, limb.bones, -p.forward + 0.3 * p.up + 0.15 * side_axis(p, limb), smoothstep((t - 0.75) / 0.25))
    give = np.exp(-(((t - 0.78) / 0.08) ** 2))
    for limb in p.legs:
        p.pitch(limb.bones[0], -rad(25) * (1.0 - down))
        flex_leg(p, limb, rad(25) * give)
    p.pitch(roles.root, rad(12) * (1.0 - down))
    length = mean_leg_length(p)
    p.lift = 1.5 * length * a * (1.0 - down)
    p.travel = np.outer(-1.5 * length * a * (1.0 - down), p.forward)
    return p.clip(v.facing)


def glide(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Glide: the wings spread and held (no beat), the body up 1.2 leg lengths within the first
    fifth and sinking slowly, sailing 3 leg lengths ahead, banking ±10° once, the legs tucked."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    t = np.clip((p.t - 0.1 * v.phase) * v.speed, 0.0, 1.0)
    into = smoothstep(t / 0.2)
    _open_wings(p, into)
    for limb in p.legs:
        flex_leg(p, limb, rad(40) * into)
    p.rotate(roles.root, p.forward, rad(10) * a * into * np.sin(2 * np.pi * t + np.pi * v.phase))
    length = mean_leg_length(p)
    p.lift = length * a * (1.2 * into - 0.3 * t)
    p.travel = np.outer(3.0 * length * a * t, p.forward)
    return p.clip(v.facing)
