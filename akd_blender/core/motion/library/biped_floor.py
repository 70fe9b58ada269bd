"""Biped motions that go down to the ground or move along it, and a dance:
``generate(rig, roles, frames, fps, variation) -> MotionClip``.

- ``fall``: topple forward onto the ground and lie there face down.
- ``get_up``: from sitting on the ground, lean forward, push up and stand.
- ``crawl``: on hands and knees, the torso level, crawl forward (diagonal limbs together).
- ``dance``: in place to a beat: the knees bounce, the hips sway, the arms swing up in turn.

Angles in degrees in the body frame (:class:`~.pose.BodyPose`); every clip keeps the lowest vertex
on the ground."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from ...character.rig import RigAsset
from ..clip import MotionClip
from .labelled import Variation
from .limbs import aim_arm, arm_bones, arm_direction, arms_down, bend_torso, flex_leg, mean_leg_length, rad
from .pose import BodyPose, bone_tip, dominant_bone, knee_sign, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = ["fall", "get_up", "crawl", "dance"]


def _tip_forward(p: BodyPose, angle: np.ndarray) -> None:
    """Pitch the whole body ``angle`` (radians [F], positive forward) about its feet: the root turns
    and travels forward by the hips' height · sin(angle) (the ground contact follows by grounding)."""
    p.pitch(p.roles.root, -angle)
    p.travel += np.outer(mean_leg_length(p) * np.sin(angle), p.forward)


def fall(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Fall forward: after a stumble (the knees give 25° × amplitude), the body topples forward about
    its feet, faster as it goes (88° over 0.35 / speed of the clip), the arms reach forward to break
    the fall, and it lies face down, the head lifted a little, to the end."""
    p = BodyPose(rig, roles, frames, fps)
    start = 0.12 + 0.1 * v.phase
    span = min(0.35 / v.speed, 0.9 - start)
    x = np.clip((p.t - start) / span, 0.0, 1.0)
    down = x**2 * (3 - 2 * x) * x**0.5  # slow to leave, fast to land
    stumble = smoothstep((p.t - start + 0.1) / 0.15) * (1 - down) * v.amplitude
    _tip_forward(p, rad(88) * down)
    arms_down(p)
    for limb in roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, -0.2, 0.25, 1.0), weight=smoothstep(2 * x))
    for limb in p.legs:
        flex_leg(p, limb, rad(25) * stumble)
    p.bend_chain(roles.neck, p.right, rad(25) * down)
    return p.clip(v.facing)


def _sitting(p: BodyPose, weight: np.ndarray) -> None:
    """Sit on the ground by ``weight`` [F] in [0,1]: thighs up 100°, shins folded 120°, feet level."""
    for limb in p.legs:
        sign = knee_sign(p.rig, p.roles, limb)
        p.pitch(limb.bones[0], -sign * rad(100) * weight)
        if len(limb.bones) > 1:
            p.pitch(limb.bones[1], sign * rad(120) * weight)
        if len(limb.bones) > 2:
            p.level(limb.bones[2])


def get_up(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Get up from the ground: sitting at first (hands on the knees), the torso leans forward 40°
    and the arms push forward, the legs unfold until the body stands upright (over 0.55 / speed of
    the clip), and it stands to the end."""
    p = BodyPose(rig, roles, frames, fps)
    start = 0.12 + 0.1 * v.phase
    span = min(0.55 / v.speed, 0.92 - start)
    rise = smoothstep((p.t - start) / span)
    sitting = 1 - rise
    lean = np.sin(np.pi * rise) * (rise > 0) * (rise < 1)
    bend_torso(p, p.right, -rad(40) * min(v.amplitude, 1.1) * lean + rad(8) * sitting)
    arms_down(p)
    for limb in roles.arms:
        aim_arm(p, limb, arm_direction(p, limb, 0.5, 0.1, 0.9), weight=np.maximum(sitting, lean))
    _sitting(p, sitting)
    return p.clip(v.facing)


def _limb_radius(rig: RigAsset, bone: int, end: np.ndarray) -> float:
    """How thick a limb segment is: the median distance (armature units) of the vertices ``bone``
    weighs most on from its rest segment, head to ``end`` [3]; 0 when it weighs most on none."""
    owned = rig.vertices[dominant_bone(rig) == bone]
    if len(owned) == 0:
        return 0.0
    head = rig.heads[bone]
    axis = end - head
    t = np.clip((owned - head) @ axis / max(float(axis @ axis), 1e-12), 0.0, 1.0)
    return float(np.median(np.linalg.norm(owned - (head + t[:, None] * axis), axis=1)))


def _arms(p: BodyPose) -> list[tuple[int, ...]]:
    """The arms' bones without clavicles (:func:`~.limbs.arm_bones`)."""
    return [arm_bones(p.rig, limb, p.up) for limb in p.roles.arms]


def _arm_length(p: BodyPose) -> float:
    """The arms' mean rest length, shoulder to hand tip (armature units; 0 without arms)."""
    return float(np.mean([np.linalg.norm(bone_tip(p.rig, b[-1]) - p.rig.heads[b[0]]) for b in _arms(p)] or [0.0]))


def _hand_reach(p: BodyPose) -> float:
    """The angle (radians) ahead of straight down at which a biped's straight arms, from the
    shoulders as posed now (frame 0), reach the ground the knees rest on (the lowest knee joint less
    its shin's thickness, :func:`_limb_radius`): 0 when they cannot reach."""
    knees = [
        p.head_position(limb.bones[1])[0] @ p.up - _limb_radius(p.rig, limb.bones[1], p.rig.heads[limb.bones[2]])
        for limb in p.legs
        if len(limb.bones) > 2
    ]
    arms = _arms(p)
    if not knees or not arms:
        return 0.0
    shoulder = float(np.mean([p.head_position(bones[0])[0] @ p.up for bones in arms])) - min(knees)
    return float(np.arccos(np.clip(shoulder / max(_arm_length(p), 1e-9), 0.0, 1.0)))


def crawl(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Crawl forward on hands and knees from the first frame: the body pitched 80° forward (torso
    near level), thighs hanging down, shins folded back along the ground, straight arms leaning
    forward just enough for the planted hand to meet the ground the knees rest on (the angle from
    the rig's proportions, :func:`_hand_reach`, then corrected once on the skinned mesh,
    :func:`_knee_gap`); 1.5 cycles per clip in which each hand is planted half the cycle and swings
    25° forward with the leg of the other side, the body travelling 0.5 leg lengths per cycle (×
    amplitude); the head lifted to look ahead."""
    p, reach = _crawl_pose(rig, roles, frames, fps, v, None)
    clip = p.clip(v.facing)
    length = _arm_length(p)
    gap = _knee_gap(p, clip)
    if length > 0 and abs(gap) > 0.005 * p.height:
        reach = float(np.arccos(np.clip(np.cos(reach) - gap / length, 0.0, 1.0)))
        clip = _crawl_pose(rig, roles, frames, fps, v, reach)[0].clip(v.facing)
    return clip


def _knee_gap(p: BodyPose, clip: MotionClip) -> float:
    """How far (armature units) the knees' lowest skin is above the planted hand's lowest skin in
    the first frame of ``clip`` (the vertices the thighs and shins weigh most on; those of the arms'
    last bones)."""
    from ...character.kinematics import Skeleton

    first = MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations[:1], clip.locations[:1])
    verts = Skeleton(p.rig, torch.float64)(first, space="armature").numpy()[0] @ p.up
    owner = dominant_bone(p.rig)
    knees = np.isin(owner, [b for limb in p.legs for b in limb.bones[:2]])
    hands = np.isin(owner, [bones[-1] for bones in _arms(p)])
    if not knees.any() or not hands.any():
        return 0.0
    return float(verts[knees].min() - verts[hands].min())


def _crawl_pose(
    rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, reach: float | None
) -> tuple[BodyPose, float]:
    """The crawl's :class:`BodyPose` with the planted arms ``reach`` radians ahead of straight down
    (None: :func:`_hand_reach`), and the angle used."""
    p = BodyPose(rig, roles, frames, fps)
    tilt = rad(80)
    p.pitch(roles.root, -tilt)
    cycles = 1.5 * v.speed
    w = 2 * np.pi * (cycles * p.t + v.phase)
    a = v.amplitude
    stride = 0.5 * mean_leg_length(p) * a
    p.travel += np.outer(stride * cycles * p.t, p.forward)
    for limb in p.legs:
        sign = knee_sign(rig, roles, limb)
        swing = rad(15) * a * np.sin(w + (np.pi if limb.side == "left" else 0.0))
        p.pitch(limb.bones[0], -sign * (tilt - rad(5)) + swing)
        if len(limb.bones) > 1:
            p.pitch(limb.bones[1], sign * rad(90))
        if len(limb.bones) > 2:
            p.pitch(limb.bones[2], sign * rad(90))
    reach = _hand_reach(p) if reach is None else reach
    for limb in roles.arms:
        # the arm of the other side moves with each leg (the right arm with the left leg): planted at
        # the reach for half a cycle, lifted forward by up to 25° for the other half
        swing = reach + rad(25) * a * np.clip(np.sin(w + (0.0 if limb.side == "left" else np.pi)), 0.0, None)
        down = np.cos(swing)[:, None] * -p.up + np.sin(swing)[:, None] * p.forward
        aim_arm(p, limb, down, down)
    p.bend_chain(roles.neck, p.right, rad(45))
    if roles.head is not None:
        p.pitch(roles.head, rad(20))
    return p, reach


def dance(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Dance in place to a beat (4 beats per clip × speed): the knees bounce 20° on every beat, the
    hips sway 8° side to side once per two beats with the torso countering, and the arms swing up in
    turn (each to 130° from down, the other at 40°), the head bobbing with the beat."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    beats = 4.0 * v.speed
    w = 2 * np.pi * (beats * p.t + v.phase)
    start = smoothstep(p.t / 0.1)
    bounce = 0.5 * (1 - np.cos(w)) * start
    sway = np.sin(w / 2) * start
    p.rotate(roles.root, p.forward, rad(8) * a * sway)
    for limb in p.legs:
        p.rotate(limb.bones[0], p.forward, -rad(8) * a * sway)
        flex_leg(p, limb, rad(20) * a * bounce)
    if roles.spine:
        p.bend_chain(roles.spine, p.forward, -rad(14) * a * sway)
    arms_down(p)
    for limb in roles.arms:
        turn = 1.0 if limb.side == "right" else -1.0
        up = 0.5 * (1 + turn * np.sin(w / 2))  # 1: this arm up, 0: down
        angle = rad(40) + rad(90) * a * up
        aim_arm(p, limb, arm_direction(p, limb, np.cos(angle), np.sin(angle), 0.3), weight=start)
    if roles.head is not None:
        p.pitch(roles.head, -rad(8) * bounce)
    return p.clip(v.facing)
