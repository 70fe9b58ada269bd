"""Quadruped motions over bone roles: ``generate(rig, roles, frames, fps, variation) -> MotionClip``.

Legs are found by position (front / hind) and side; knees bend the way the rest legs bend (or a
quadruped's default: front forward, hind backward). Angles in degrees in the body frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .labelled import Variation
from .limbs import bend_torso, gait, jump, lay_tail, place_foot, rad, turn_in_place
from .pose import BodyPose, bone_tip, bump, is_sprawled, knee_sign, limb_length, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles, Limb

__all__ = ["walk", "trot", "leap", "turn", "sit", "wag_tail", "lie_down", "head_down", "rear_up", "gallop", "stretch", "shake"]


def _trot(roles: BoneRoles, limb: Limb) -> float:
    """Diagonal pairs together: front-left with hind-right, front-right with hind-left."""
    return 0.0 if (limb.side == "left") == (limb.position == "front") else 0.5


def _gallop(roles: BoneRoles, limb: Limb) -> float:
    """A rotary gallop: the hind pair, then the front pair, each foot a little after its partner."""
    return {"hind": 0.0, "front": 0.45}.get(limb.position, 0.0) + (0.1 if limb.side == "right" else 0.0)


def walk(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A lateral-sequence walk: 1.5 cycles per clip, feet reaching 22°, each on the ground 65 % of the time."""
    return gait(rig, roles, frames, fps, v, cycles=1.5, swing=22, duty=0.65, clearance=0.1)


def trot(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A run (trot): diagonal pairs, 2.5 cycles per clip, feet reaching 32°, on the ground 45 % of the time, the tail raised."""
    return gait(rig, roles, frames, fps, v, cycles=2.5, swing=32, duty=0.45, clearance=0.18, offsets=_trot, tail_lift=0.4)


def gallop(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A gallop: hind pair then front pair, 2 cycles per clip, feet reaching 38°, on the ground 35 % of
    the time, the spine flexing 12° with each stride, the tail raised."""
    return gait(
        rig,
        roles,
        frames,
        fps,
        v,
        cycles=2.0,
        swing=38,
        duty=0.35,
        clearance=0.2,
        offsets=_gallop,
        spine_flex=12,
        head_bob=8,
        tail_lift=0.7,
    )


def leap(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A jump forward of 0.6 leg lengths (:func:`~.limbs.jump`)."""
    return jump(rig, roles, frames, fps, v, forward=0.6)


def turn(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn around in place, stepping diagonal pairs (:func:`~.limbs.turn_in_place`)."""
    return turn_in_place(rig, roles, frames, fps, v)


def _legs(p: BodyPose, position: str) -> list[Limb]:
    return [limb for limb in p.legs if limb.position == position]


def _ease(p: BodyPose, v: Variation, start: float = 0.1, duration: float = 0.5) -> np.ndarray:
    return smoothstep((p.t - start - 0.2 * v.phase) / (duration / v.speed))


def _body_pitch_for(p: BodyPose, hip_height: float) -> float:
    """Pitch (radians) that, turning the body about its root, puts the front shoulders a front leg's
    length above the ground while the root stands ``hip_height`` above it (clamped to 20°–50°)."""
    rig, roles, forward = p.rig, p.roles, p.forward
    front = _legs(p, "front")
    if not front:
        return rad(35)
    shoulder = np.mean([rig.heads[limb.bones[0]] for limb in front], axis=0)
    reach = float((shoulder - rig.heads[roles.root]) @ forward)
    length = np.mean([limb_length(rig, roles, limb) for limb in front])
    if reach <= 1e-9:
        return rad(35)
    return float(np.clip(np.arcsin(np.clip((length - hip_height) / reach, -1, 1)), rad(20), rad(50)))


def sit(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Sit on the haunches: the body pitches up about the hips (the angle read from the body's
    proportions so the front legs stay straight under the chest), the hind legs fold under the rump,
    the front legs stay vertical, the head stays level, the tail lies out behind."""
    p = BodyPose(rig, roles, frames, fps)
    s = _ease(p, v) * min(v.amplitude, 1.1)
    hind = _legs(p, "hind")
    hip = np.mean([limb_length(rig, roles, limb) for limb in hind]) if hind else 0.0
    tilt = _body_pitch_for(p, 0.45 * hip) * s
    p.pitch(roles.root, tilt)
    for limb in hind:
        sign = knee_sign(rig, roles, limb)
        p.pitch(limb.bones[0], -sign * rad(50) * s)
        if len(limb.bones) > 1:
            p.pitch(limb.bones[1], sign * rad(120) * s)
        if len(limb.bones) > 2:
            p.level(limb.bones[2], s)
    for limb in _legs(p, "front"):
        p.pitch(limb.bones[0], -tilt)
        for b in limb.bones[1:2]:
            p.level(b, s)
    if roles.head is not None:
        p.level(roles.head, 0.7 * s)
    lay_tail(p, s)
    return p.clip(v.facing)


def wag_tail(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Raise the tail and wag it side to side 2.5 times (a wave travelling to the tip, ±70° overall);
    the hips sway a little against it."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (2.5 * v.speed * p.t + v.phase)
    p.rotate(roles.root, p.up, rad(4) * a * np.sin(w + np.pi))
    if roles.tail:
        p.aim(roles.tail[0], roles.tail, -p.forward + 0.9 * p.up, 0.6)
        p.wave_chain(roles.tail, p.up, v.direction * rad(70) * a, w)
    if roles.head is not None:
        p.pitch(roles.head, rad(5) * np.sin(w))
    return p.clip(v.facing)


def lie_down(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Lie down on the belly: the front legs stretch forward along the ground (sphinx), the hind legs
    fold under the body, the tail lies out behind curling aside; the body comes down to the ground,
    the head stays up."""
    p = BodyPose(rig, roles, frames, fps)
    s = _ease(p, v, 0.1, 0.55) * min(v.amplitude, 1.1)
    for limb in _legs(p, "front"):
        p.aim(limb.bones[0], limb.bones, p.forward - 0.5 * p.up, s)
        if len(limb.bones) > 1:
            p.aim(limb.bones[1], limb.bones, p.forward - 0.1 * p.up, s)
    for limb in _legs(p, "hind"):
        sign = knee_sign(rig, roles, limb)
        p.pitch(limb.bones[0], -sign * rad(70) * s)
        if len(limb.bones) > 1:
            p.pitch(limb.bones[1], sign * rad(140) * s)
        if len(limb.bones) > 2:
            p.level(limb.bones[2], s)
    if roles.head is not None:
        p.level(roles.head, 0.5 * s)
    lay_tail(p, s)
    p.wave_chain(roles.tail, p.up, rad(20) * s, np.full(frames, np.pi / 2))
    return p.clip(v.facing)


def head_down(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Lower the head to the ground to eat or sniff, nodding a little there: the neck bones point down
    and forward, the head pitches 40° nose-down, and the body dips about the hips as far as a short
    neck needs (up to 30°; the spine bends 8° more) with every foot staying where it stood, so the
    head reaches the ground."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    s = _ease(p, v, 0.05, 0.4)
    nod = rad(8) * a * np.sin(2 * np.pi * (2.0 * v.speed * p.t + v.phase)) * s
    chain = roles.neck + ((roles.head,) if roles.head is not None else ())
    if chain:
        base = float(rig.heads[chain[0]] @ p.up - roles.frame.ground)
        reach = sum(np.linalg.norm(rig.heads[b] - rig.heads[c]) for b, c in zip(chain[1:], chain[:-1]))
        reach += float(np.linalg.norm(bone_tip(rig, chain[-1]) - rig.heads[chain[-1]]))
        deficit = max(base - 0.8 * reach, 0.0)
    else:
        deficit = 0.0
    shoulders = [rig.heads[limb.bones[0]] for limb in _legs(p, "front")]
    reach_back = float((np.mean(shoulders, axis=0) - rig.heads[roles.root]) @ p.forward) if shoulders else 0.0
    dip = np.arcsin(np.clip(deficit / reach_back, 0.0, np.sin(rad(30)))) if reach_back > 1e-9 else 0.0
    p.pitch(roles.root, -dip * s)  # the chest dips about the hips
    bend_torso(p, p.right, -rad(8) * s)
    for limb in p.legs:  # every foot stays where it stood, the front legs folding under the chest
        if is_sprawled(rig, roles, limb):
            continue
        place_foot(p, limb, np.zeros(frames), np.zeros(frames))
    for b in roles.neck:
        p.aim(b, chain, p.forward * 0.3 - p.up, s)
    if roles.head is not None:
        p.pitch(roles.head, -rad(40) * s + nod)
    return p.clip(v.facing)


def rear_up(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Rear up on the hind legs: the body pitches up to ~50° about the hips, the hind legs stay under
    it with the feet where they stood, the front legs fold and paw, the tail stays off the ground; then
    back down."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    start = 0.05 + 0.1 * v.phase
    span = 0.85 / v.speed
    s = bump(p.t, start, start + span, 0.3 * span)
    tilt = rad(50) * min(a, 1.15) * s
    paw = np.sin(2 * np.pi * 3.0 * v.speed * p.t) * s
    p.pitch(roles.root, tilt)
    for limb in _legs(p, "hind"):  # the hind feet stay where they stood, the legs flexing under the hips
        if is_sprawled(rig, roles, limb):
            p.pitch(limb.bones[0], -tilt)
        else:
            place_foot(p, limb, np.zeros(frames), np.zeros(frames))
    for limb in _legs(p, "front"):
        p.pitch(limb.bones[0], rad(20) * s + rad(15) * paw * (1 if limb.side == "left" else -1))
        if len(limb.bones) > 1:
            p.pitch(limb.bones[1], -knee_sign(rig, roles, limb) * -rad(70) * s)
    if roles.head is not None:
        p.pitch(roles.head, -0.5 * tilt)
    lay_tail(p, s)
    return p.clip(v.facing)


def stretch(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A play-bow stretch: the chest sinks about the hips (22° × amplitude, the spine sagging 8° more)
    with the front legs folding under it and every foot staying where it stood, the rump stays up,
    the head stays raised and the tail lifts; held, then back up to standing."""
    p = BodyPose(rig, roles, frames, fps)
    start = 0.08 + 0.1 * v.phase
    span = min(0.8 / v.speed, 0.95 - start)
    s = bump(p.t, start, start + span, 0.35 * span)
    p.pitch(roles.root, -rad(22) * min(v.amplitude, 1.15) * s)  # the chest sinks about the hips
    bend_torso(p, p.right, -rad(8) * s)
    for limb in p.legs:
        if is_sprawled(rig, roles, limb):
            continue
        place_foot(p, limb, np.zeros(frames), np.zeros(frames))
    if roles.head is not None:
        p.level(roles.head, s)
        p.pitch(roles.head, rad(10) * s)
    if roles.tail:
        p.aim(roles.tail[0], roles.tail, -p.forward + 1.2 * p.up, 0.7 * s)
    return p.clip(v.facing)


def shake(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """A wet-dog shake: the body twists about its length 4 times (× speed), a wave running from the
    head to the tail — the head rolls ±35° (× amplitude), the spine ±6°, the tail swings ±40° — the
    legs kept upright under it with the feet where they stood; easing in and out."""
    p = BodyPose(rig, roles, frames, fps)
    a = min(v.amplitude, 1.15)
    start = 0.05 + 0.1 * v.phase
    span = min(0.85 / v.speed, 0.95 - start)
    u = np.clip((p.t - start) / span, 0.0, 1.0)
    envelope = smoothstep(u / 0.15) * smoothstep((1.0 - u) / 0.15)
    w = 2 * np.pi * 4.0 * u
    roll = v.direction * envelope * a
    for k, b in enumerate(reversed(roles.spine)):  # chest first, the wave travelling back
        p.rotate(b, p.forward, rad(6) / max(len(roles.spine), 1) * roll * np.sin(w - 0.4 * k))
    for limb in p.legs:  # the legs stay upright under the twisting body
        p.level(limb.bones[0])
    chain = roles.neck + ((roles.head,) if roles.head is not None else ())
    if chain:
        p.bend_chain(chain, p.forward, rad(35) * roll * np.sin(w + 0.5))
    p.wave_chain(roles.tail, p.up, rad(40) * v.direction * a * envelope, w - 0.8)
    return p.clip(v.facing)
