"""Many-legged motions over bone roles, for the kind "hexapod": six legs (insects) or any even number
more (spiders, crabs): ``generate(rig, roles, frames, fps, variation) -> MotionClip``. Legs are found by
position (front / middle / hind) and side; the gaits step every other leg along a side together with the
opposite ones on the other side (:func:`~.limbs.alternate_group`: six legs' tripods, eight legs' groups
of four); sprawled legs swing about their own hip-to-foot line (:func:`~.limbs.step_sprawled`). Angles in
degrees in the body frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from . import bird
from .labelled import Variation
from .limbs import bend_torso, flex_leg, gait, jump, lay_tail, lift_axis, rad, swing_axis, turn_in_place
from .pose import BodyPose, bump, is_sprawled, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = ["walk", "run", "jump_up", "turn", "sit", "hop", "raise_front_legs"]


def walk(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """An alternating-tripod walk (two alternating groups on more legs): 2 cycles per clip, feet reaching
    20° ahead and behind."""
    return gait(rig, roles, frames, fps, v, cycles=2.0, swing=20, duty=0.55, clearance=0.3, head_bob=0)


def run(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A fast tripod scurry (two alternating groups on more legs): 3 cycles per clip, feet reaching 28°, on the ground 55 % of the time."""
    return gait(rig, roles, frames, fps, v, cycles=3.0, swing=28, duty=0.55, clearance=0.35, head_bob=0)


def jump_up(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A jump in place (:func:`~.limbs.jump`): the legs settle, then spring."""
    return jump(rig, roles, frames, fps, v)


def turn(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn around in place, stepping (:func:`~.limbs.turn_in_place`)."""
    return turn_in_place(rig, roles, frames, fps, v)


def sit(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Settle down: every leg raises its knee (35°) and the abdomen (tail) lifts just above level, so the body
    comes down onto the ground."""
    p = BodyPose(rig, roles, frames, fps)
    s = smoothstep((p.t - 0.1 - 0.2 * v.phase) / (0.5 / v.speed)) * min(v.amplitude, 1.1)
    lay_tail(p, s, rise=0.2)  # an abdomen hanging to the ground lifts, so the body can come down
    for limb in p.legs:
        flex_leg(p, limb, rad(35) * s)
    return p.clip(v.facing)


def hop(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Three small hops forward on all legs (the bird's hop, :func:`~.bird.hop`)."""
    return bird.hop(rig, roles, frames, fps, v)


def raise_front_legs(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A threat display: the front of the body lifts (15°), the front legs rise high (60–70°) and paw the
    air twice, then come back down; the other legs stay planted."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    start = 0.05 + 0.1 * v.phase
    span = 0.85 / v.speed
    s = bump(p.t, start, start + span, 0.25 * span)
    paw = np.sin(2 * np.pi * (2.0 * v.speed * p.t + v.phase))
    bend_torso(p, p.right, rad(15) * s)
    for limb in p.legs:
        if limb.position != "front":
            continue
        if is_sprawled(rig, roles, limb):
            p.rotate(limb.bones[0], lift_axis(p, limb), rad(60) * min(a, 1.1) * s)
            p.rotate(limb.bones[0], swing_axis(p, limb), rad(15) * paw * s)
        else:
            p.pitch(limb.bones[0], rad(70) * min(a, 1.1) * s + rad(15) * paw * s)
    return p.clip(v.facing)
