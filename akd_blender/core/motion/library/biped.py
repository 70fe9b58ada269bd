"""Biped motions over bone roles: ``generate(rig, roles, frames, fps, variation) -> MotionClip``.

Every motion starts from arms hanging at the sides (aimed from the rig's own rest arms) and keeps
the lowest vertex on the ground unless it jumps. Angles in degrees in the body frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .labelled import Variation
from .limbs import aim_arm, arm_bones, arm_direction, arms_down, bend_torso, flex_leg, gait, jump, rad, turn_in_place
from .pose import BodyPose, bump, knee_sign, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = [
    "walk",
    "run",
    "jump_up",
    "turn",
    "sit",
    "wave",
    "raise_arms",
    "kick",
    "bow",
    "crouch",
    "clap",
    "punch",
    "stretch",
    "point",
]


def walk(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """1.5 strides per clip, feet reaching 25° ahead and behind, on the ground 60 % of the time."""
    return gait(rig, roles, frames, fps, v, cycles=1.5, swing=25, duty=0.6, clearance=0.1, lean=3, elbow=15)


def run(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """3 strides per clip, feet reaching 28°, on the ground 42 % of the time, elbows bent 80°, leaning 12°."""
    return gait(rig, roles, frames, fps, v, cycles=3.0, swing=28, duty=0.42, clearance=0.25, lean=12, elbow=80)


def jump_up(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A jump in place (:func:`~.limbs.jump`)."""
    return jump(rig, roles, frames, fps, v)


def turn(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn around in place, stepping (:func:`~.limbs.turn_in_place`)."""
    return turn_in_place(rig, roles, frames, fps, v)


def _ease(p: BodyPose, v: Variation, start: float = 0.1, duration: float = 0.45) -> np.ndarray:
    """0 → 1 from ``start`` (shifted by the phase) over ``duration / speed`` of the clip, then held."""
    return smoothstep((p.t - start - 0.15 * v.phase) / (duration / v.speed))


def sit(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Sit down on the ground: thighs up to 110° forward (knees raised), shins folded back, the torso
    leaning back a little, hands reaching for the knees; the hips come down to the ground."""
    p = BodyPose(rig, roles, frames, fps)
    s = _ease(p, v) * min(v.amplitude, 1.1)
    bend_torso(p, p.right, rad(8) * s)
    arms_down(p)
    for limb in roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, 0.6, 0.1, 0.8), weight=s)
    for limb in p.legs:
        sign = knee_sign(rig, roles, limb)
        p.pitch(limb.bones[0], -sign * rad(110) * s)
        if len(limb.bones) > 1:
            p.pitch(limb.bones[1], sign * rad(125) * s)
        if len(limb.bones) > 2:
            p.level(limb.bones[2])
    return p.clip(v.facing)


def _raised(p: BodyPose, v: Variation, start: float = 0.0, duration: float = 0.2) -> np.ndarray:
    return smoothstep((p.t - start) / (duration / v.speed))


def _mirror(side: str) -> float:
    """1 for the right side (the library's default limb), -1 for the left (ValueError otherwise)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', not {side!r}")
    return 1.0 if side == "right" else -1.0


def wave(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, side: str = "right") -> MotionClip:
    """Raise the ``side`` hand (default the right) above the head and wave it side to side twice (the
    forearm swings 35° about the facing axis); the other arm hangs; the head tilts toward the hand."""
    mirror = _mirror(side)
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (2.0 * v.speed * p.t + v.phase)
    rise = _raised(p, v)
    arms_down(p)
    arm = roles.limb("arms", side) or (roles.arms[0] if roles.arms else None)
    if arm is not None:
        bones = arm_bones(rig, arm, p.up)
        aim_arm(p, arm, arm_direction(p, arm, -0.75, 0.65), weight=rise)
        if len(bones) > 1:
            p.aim(bones[1], bones, p.up, rise)
            p.rotate(bones[1], p.forward, -rise * rad(35) * a * v.direction * np.sin(w) * mirror)
        if len(bones) > 2:
            p.rotate(bones[2], p.forward, -rise * rad(15) * a * np.sin(w - 0.5) * mirror)
    if roles.head is not None:
        p.rotate(roles.head, p.forward, rad(10) * rise * mirror)
    return p.clip(v.facing)


def raise_arms(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Lift both arms sideways from the sides to overhead (150–172° from down with the amplitude),
    the head looking up."""
    p = BodyPose(rig, roles, frames, fps)
    start = 0.15 + 0.2 * v.phase
    up = smoothstep((p.t - start) / (0.45 / v.speed))
    angle = rad(8) + up * rad(float(np.clip(152 + 50 * (v.amplitude - 1), 142, 164)))
    for limb in roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, np.cos(angle), np.sin(angle)))
    if roles.head is not None:
        p.pitch(roles.head, rad(12) * up)
    return p.clip(v.facing)


def kick(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, side: str = "right") -> MotionClip:
    """A front kick with the ``side`` leg (default the right): chamber (knee up, shin folded), snap the leg straight out
    forward to ~75° and back down; the torso leans back, the arms out for balance."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    start = 0.1 + 0.15 * v.phase
    span = 0.75 / v.speed
    up = bump(p.t, start, start + span, 0.25 * span)
    snap = bump(p.t, start + 0.3 * span, start + 0.75 * span, 0.15 * span)
    bend_torso(p, p.right, rad(10) * up)
    arms_down(p, 8 + 22 * float(a))
    _mirror(side)
    leg = next((limb for limb in p.legs if limb.side == side), p.legs[-1] if p.legs else None)
    if leg is not None:
        sign = knee_sign(rig, roles, leg)
        p.pitch(leg.bones[0], -sign * rad(75) * a * up)
        if len(leg.bones) > 1:
            p.pitch(leg.bones[1], sign * rad(90) * up * (1 - snap))
    return p.clip(v.facing)


def bow(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Bow: bend the upper body 60° forward (40 % at the hips, the rest over the spine) and come back
    up; the head follows, the legs stay upright."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    start = 0.1 + 0.1 * v.phase
    span = 0.8 / v.speed
    down = bump(p.t, start, start + span, 0.35 * span)
    bend_torso(p, p.right, -rad(60) * a * down, at_hips=0.4)
    arms_down(p, 4)
    p.bend_chain(roles.neck, p.right, -rad(15) * down)
    return p.clip(v.facing)


def crouch(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Squat down and stay: the legs fold (knees 2×55°), the torso leans 30° forward, arms reach forward."""
    p = BodyPose(rig, roles, frames, fps)
    s = _ease(p, v, 0.1, 0.4) * v.amplitude
    bend_torso(p, p.right, -rad(30) * s)
    arms_down(p)
    for limb in roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, 0.3, 0.1, 1.0), weight=smoothstep(s))
    for limb in p.legs:
        flex_leg(p, limb, rad(55) * s)
    return p.clip(v.facing)


def clap(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Clap three times in front of the chest: the arms reach forward and the hands swing apart and
    together (forearms turned in)."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    rise = _raised(p, v, 0.0, 0.15)
    w = 2 * np.pi * (3.0 * v.speed * p.t + v.phase)
    apart = 0.5 * (1 - np.cos(w)) * 0.55 * a - 0.15
    arms_down(p)
    for limb in roles.arms:
        bones = arm_bones(rig, limb, p.up)
        aim_arm(p, limb, arm_direction(p, limb, 0.25, apart, 1.0), weight=rise)
        if len(bones) > 1:
            p.aim(bones[1], bones, arm_direction(p, limb, 0.0, apart - 0.5, 1.0), rise)
    return p.clip(v.facing)


def punch(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, side: str = "right") -> MotionClip:
    """Guard up and punch straight forward, the ``side`` hand first (default the right), then the
    other, in turn (two punches each); the torso twists into each punch."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (2.0 * v.speed * p.t + v.phase)
    rise = _raised(p, v, 0.0, 0.15)
    lead, other = np.clip(np.sin(w), 0, None) ** 2, np.clip(-np.sin(w), 0, None) ** 2
    extend = {"right": lead, "left": other} if _mirror(side) > 0 else {"right": other, "left": lead}
    bend_torso(p, p.up, rad(12) * a * (extend["right"] - extend["left"]) * rise)
    arms_down(p)
    for limb in roles.arms:
        bones = arm_bones(rig, limb, p.up)
        e = extend.get(limb.side, 0.0) * min(a, 1.0)
        upper = arm_direction(p, limb, 0.65 * (1 - e) + 0.05, 0.25 * (1 - e) - 0.1 * e, 0.45 + 0.6 * e)
        aim_arm(p, limb, upper, weight=rise)
        if len(bones) > 1:
            p.aim(bones[1], bones, arm_direction(p, limb, -0.6 * (1 - e), -0.25 * (1 - e) - 0.1 * e, 0.5 + 0.5 * e), rise)
    return p.clip(v.facing)


def stretch(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Stretch: both arms reach up overhead and back (165° from down, 20° behind the body's plane),
    the spine arches back 18° (× amplitude), the head tips back; held a moment, then released back to
    standing. The feet stay planted."""
    p = BodyPose(rig, roles, frames, fps)
    a = min(v.amplitude, 1.15)
    start = 0.08 + 0.1 * v.phase
    span = min(0.8 / v.speed, 0.95 - start)
    s = bump(p.t, start, start + span, 0.35 * span)
    bend_torso(p, p.right, rad(18) * a * s)
    arms_down(p)
    angle = rad(165)
    for limb in roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, np.cos(angle), 0.25, -0.35 * a), weight=s)
    if roles.head is not None:
        p.pitch(roles.head, rad(15) * s)
    return p.clip(v.facing)


def point(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, side: str = "right") -> MotionClip:
    """Point ahead with the ``side`` arm (default the right): the arm lifts straight forward to
    shoulder height (upper arm, forearm and hand in one line, 5°·(amplitude − 1)·direction above
    level), holds there and gives a small jab halfway; the other arm hangs, the head turns 10° toward
    the pointing hand."""
    mirror = _mirror(side)
    p = BodyPose(rig, roles, frames, fps)
    start = 0.05 + 0.1 * v.phase
    rise = _raised(p, v, start, 0.25)
    elevation = rad(5) * (v.amplitude - 1) * v.direction + rad(4) * bump(p.t, 0.55, 0.75, 0.08)
    arms_down(p)
    arm = roles.limb("arms", side) or (roles.arms[0] if roles.arms else None)
    if arm is not None:
        bones = arm_bones(rig, arm, p.up)
        ahead = np.cos(elevation)[:, None] * p.forward + np.sin(elevation)[:, None] * p.up
        aim_arm(p, arm, ahead, ahead, weight=rise)
        for b in bones[2:3]:
            p.aim(b, bones, ahead, rise)
    if roles.head is not None:
        p.rotate(roles.head, p.up, -rad(10) * rise * mirror)
    return p.clip(v.facing)
