"""Limb-level building blocks over bone roles: arms aimed from their actual rest direction, feet
placed by two-bone IK (sagittal for hanging legs, 3D for an insect's sprawled legs), legs folded
with the foot kept level, torsos bent over spines of any length, and the gait, jump and turn that
every legged kind shares (the legs' phases make it a biped's, quadruped's, bird's or hexapod's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .footfalls import Path, Steps, body_path, flight_arc, path_heading, plan_steps, uneven_timing
from .gait_styles import GaitStyle, gait_style
from .labelled import Variation
from .pose import BodyPose, bone_tip, is_sprawled, knee_sign, limb_length, segment_directions, smoothstep, untied

if TYPE_CHECKING:
    from ...character.roles import BoneRoles, Limb

__all__ = [
    "rad",
    "side_axis",
    "arm_bones",
    "arm_direction",
    "aim_arm",
    "arms_down",
    "body_arms",
    "flex_leg",
    "place_foot",
    "step_sprawled",
    "lift_axis",
    "swing_axis",
    "leg_reach",
    "bend_torso",
    "lay_tail",
    "mean_leg_length",
    "gait",
    "jump",
    "turn_in_place",
    "walk_phase_offsets",
    "side_rank",
    "alternate_group",
]


def rad(degrees: float | np.ndarray) -> np.ndarray | float:
    """Degrees → radians."""
    return np.deg2rad(degrees)


def side_axis(p: BodyPose, limb: Limb) -> np.ndarray:
    """[3] the body axis pointing out of the limb's side (left, right; up for a centre limb)."""
    return {"left": p.left, "right": p.right}.get(limb.side, p.up)


def arm_bones(rig: RigAsset, limb: Limb, up: np.ndarray | None = None) -> tuple[int, ...]:
    """The arm without its clavicle: (upper arm, forearm, hand …). The first bone is taken for a
    clavicle when the arm has 4+ bones, when its first segment is under 60 % of the second's length,
    or when it runs roughly level (less than 30° from horizontal, ``up`` given) and the arm turns by
    more than 50° after it (a clavicle above an arm hanging down). Tied segments are left out
    (:func:`~.pose.untied`)."""
    bones = untied(rig, limb.bones)
    if len(bones) >= 3:
        points = [rig.heads[b] for b in bones[:3]]
        first, second = points[1] - points[0], points[2] - points[1]
        short = np.linalg.norm(first) < 0.6 * np.linalg.norm(second)
        turn = first @ second < np.cos(np.deg2rad(50)) * np.linalg.norm(first) * np.linalg.norm(second)
        level = up is not None and abs(first @ up) < np.sin(np.deg2rad(30)) * np.linalg.norm(first)
        if len(bones) >= 4 or short or (turn and level):
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
    bones = arm_bones(p.rig, limb, p.up)
    p.aim(bones[0], bones, upper, weight)
    if lower is not None and len(bones) > 1:
        p.aim(bones[1], bones, lower, weight)


def body_arms(p: BodyPose) -> tuple[Limb, ...]:
    """A biped's arms (other kinds' "arms" are antennae or feelers, left as they are)."""
    return p.roles.arms if p.roles.kind == "biped" else ()


def arms_down(p: BodyPose, spread: float = 8.0) -> None:
    """Hang a biped's arms down at its sides, ``spread`` degrees out from vertical (forearm following)."""
    for limb in body_arms(p):
        aim_arm(p, limb, arm_direction(p, limb, np.cos(rad(spread)), np.sin(rad(spread))))


def _reach(p: BodyPose, limb: Limb) -> np.ndarray:
    """[3] hip to foot tip at rest (armature space)."""
    return bone_tip(p.rig, limb.bones[-1]) - p.rig.heads[limb.bones[0]]


def lift_axis(p: BodyPose, limb: Limb) -> np.ndarray:
    """[3] the axis that turns a leg's hip-to-foot line up towards the body's up axis."""
    axis = np.cross(_reach(p, limb), p.up)
    return axis / max(np.linalg.norm(axis), 1e-12)


def swing_axis(p: BodyPose, limb: Limb) -> np.ndarray:
    """[3] the axis that turns a leg's hip-to-foot line towards the body's forward axis."""
    axis = np.cross(_reach(p, limb), p.forward)
    return axis / max(np.linalg.norm(axis), 1e-12)


def step_sprawled(p: BodyPose, limb: Limb, forward: np.ndarray, up: np.ndarray) -> None:
    """Two-bone IK in 3D for a sprawled leg: its ankle goes ``forward`` and ``up`` [F] (armature units)
    from its rest place. The knee opens or closes until the hip-to-ankle distance is right (bending
    the leg's shin downwards when it is straight), then the first bone swings without twist to point
    the leg at the target; the third bone keeps its rest orientation."""
    if len(limb.bones) < 2:
        p.rotate(limb.bones[0], swing_axis(p, limb), np.arcsin(np.clip(forward / np.linalg.norm(_reach(p, limb)), -1, 1)))
        return
    hip, knee, ankle = _leg_points(p, limb)
    thigh, shin = p.posed(limb.bones[0]) @ (knee - hip), p.posed(limb.bones[1]) @ (ankle - knee)
    l1, l2 = np.linalg.norm(knee - hip), np.linalg.norm(ankle - knee)
    target = ankle + np.multiply.outer(forward, p.forward) + np.multiply.outer(up, p.up) - p.head_position(limb.bones[0])
    d = np.clip(np.linalg.norm(target, axis=-1), abs(l1 - l2) + 1e-9 * l1, (l1 + l2) * (1 - 1e-6))
    interior_now = np.arccos(np.clip(-(thigh * shin).sum(-1) / (l1 * l2), -1, 1))
    interior_wanted = np.arccos(np.clip((l1 * l1 + l2 * l2 - d * d) / (2 * l1 * l2), -1, 1))
    axis = np.cross(thigh, shin)
    straight = np.linalg.norm(axis, axis=-1) < 1e-6 * l1 * l2
    axis = np.where(straight[:, None], np.cross(thigh, -p.up), axis)
    axis /= np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-12)
    bend = interior_now - interior_wanted
    p.rotate(limb.bones[1], axis, bend)
    shin = (
        shin * np.cos(bend)[:, None]
        + np.cross(axis, shin) * np.sin(bend)[:, None]
        + axis * ((axis * shin).sum(-1) * (1 - np.cos(bend)))[:, None]
    )
    p.aim_vector(limb.bones[0], thigh + shin, target)
    if len(limb.bones) > 2:
        p.level(limb.bones[2])


def flex_leg(p: BodyPose, limb: Limb, angle: np.ndarray | float, level: bool = True) -> None:
    """Fold a leg like a squat by ``angle`` (radians, [F] or scalar) at its first joint: the first bone
    turns by ∓angle, the second by ±2·angle the way its knee bends (:func:`~.pose.knee_sign`), and
    the third bone (foot / metatarsus) is kept at its rest orientation when ``level``. A sprawled leg
    (:func:`~.pose.is_sprawled`) instead raises its first bone by ``angle`` and keeps its second
    bone's rest direction, so its foot comes up towards the body."""
    angle = np.asarray(angle, dtype=np.float64)
    if is_sprawled(p.rig, p.roles, limb):  # an insect's leg: raise the knee, keep the shin's direction
        p.rotate(limb.bones[0], lift_axis(p, limb), angle)
        if len(limb.bones) > 1:
            p.level(limb.bones[1])
        return
    sign = knee_sign(p.rig, p.roles, limb)
    p.pitch(limb.bones[0], -sign * angle)
    if len(limb.bones) > 1:
        p.pitch(limb.bones[1], 2 * sign * angle)
    if level and len(limb.bones) > 2:
        p.level(limb.bones[2])


def bend_torso(p: BodyPose, axis: np.ndarray, angle: np.ndarray | float, at_hips: float = 0.0) -> None:
    """Bend the upper body by ``angle`` about ``axis``: the share ``at_hips`` (0–1) turns the root with
    the legs turned back so they stay where they were, the rest is spread over the spine (1–4
    bones); a rig with no spine bends all of it at the hips."""
    angle = np.asarray(angle, dtype=np.float64)
    hips = angle if not p.roles.spine else at_hips * angle
    if np.any(hips != 0):
        p.rotate(p.roles.root, axis, hips)
        for limb in p.legs:
            p.rotate(limb.bones[0], axis, -hips)
    if p.roles.spine:
        p.bend_chain(p.roles.spine, axis, angle - hips)


def lay_tail(p: BodyPose, weight: np.ndarray | float, rise: float = 0.15) -> None:
    """Stretch the tail out behind the body, ``rise`` above horizontal (so a hanging tail does not dig
    into the ground when the rump comes down or the body rears); ``weight`` in [0,1] ([F] or scalar)."""
    tail = untied(p.rig, p.roles.tail)
    for b in tail:
        p.aim(b, tail, -p.forward + rise * p.up, weight)


def mean_leg_length(p: BodyPose) -> float:
    """Mean :func:`~.pose.limb_length` of the legs (10 % of the height for a legless rig)."""
    if not p.legs:
        return 0.1 * p.height
    return float(np.mean([limb_length(p.rig, p.roles, limb) for limb in p.legs]))


def walk_phase_offsets(roles: BoneRoles, limb: Limb) -> float:
    """Phase (cycles) of a leg in a walk: left/right alternate; a quadruped's lateral sequence
    (hind-left, front-left, hind-right, front-right); six legs or more move in two alternating groups
    (:func:`alternate_group`, in :func:`gait`)."""
    left = limb.side == "left"
    if limb.position in ("front", "hind"):
        order = {("hind", True): 0.0, ("front", True): 0.25, ("hind", False): 0.5, ("front", False): 0.75}
        return order[(limb.position, left)]
    return 0.0 if left else 0.5


def side_rank(roles: BoneRoles, limb: Limb) -> int:
    """The leg's place among the legs on its side, front to back (0 the front pair; ``roles.legs``
    lists each side's legs front to back). ``limb`` may be a leg of ``roles`` with bones left out (a
    pose's legs, :func:`~.pose.leg_bones`): it is the leg it shares bones with."""
    same = [leg for leg in roles.legs if leg.side == limb.side]
    return next(i for i, leg in enumerate(same) if set(leg.bones) & set(limb.bones))


def alternate_group(roles: BoneRoles, limb: Limb) -> int:
    """0 or 1: the leg's group on a many-legged body, every other leg along a side and the other side
    the other way round (six legs: the two tripods, front and hind left with middle right; eight: the
    two tetrapods; any number of pairs alike)."""
    return (side_rank(roles, limb) + (limb.side != "left")) % 2


def _tripod_or(offsets: Callable[[BoneRoles, Limb], float], roles: BoneRoles, limb: Limb) -> float:
    if any(leg.position == "middle" for leg in roles.legs):  # six legs or more: alternating groups
        return 0.5 * alternate_group(roles, limb)
    return offsets(roles, limb)


def _leg_points(p: BodyPose, limb: Limb) -> np.ndarray:
    """[3,3] rest hip, knee and ankle of a leg (armature space): the first three joints of its chain
    (the ankle of a 2-bone leg is the lower bone's tip)."""
    bones = limb.bones
    hip, knee = p.rig.heads[bones[0]], p.rig.heads[bones[1]]
    ankle = (
        p.rig.heads[bones[2]]
        if len(bones) > 2
        else knee + segment_directions(p.rig, bones)[1] * np.linalg.norm(bone_tip(p.rig, bones[1]) - knee)
    )
    return np.stack([hip, knee, ankle])


def leg_reach(p: BodyPose, limb: Limb) -> tuple[float, float]:
    """(hip-to-ankle distance below the hip at rest, thigh + shin length), both in the body's
    sagittal plane (armature units); a 1-bone leg gives its own length twice."""
    if len(limb.bones) < 2:
        length = limb_length(p.rig, p.roles, limb)
        return length, length
    hip, knee, ankle = _leg_points(p, limb)
    sag = lambda v: np.array([v @ p.forward, v @ p.up])  # noqa: E731
    return float(-(ankle - hip) @ p.up), float(np.linalg.norm(sag(knee - hip)) + np.linalg.norm(sag(ankle - knee)))


def place_foot(p: BodyPose, limb: Limb, forward: np.ndarray, up: np.ndarray) -> None:
    """Two-bone planar IK in the body's sagittal plane: pitch the leg's first two bones so its ankle
    moves ``forward`` and ``up`` [F] (armature units) from its rest place, wherever the spine has
    carried the hip and whatever the thigh's current angle, the knee
    bending the way :func:`~.pose.knee_sign` says; the third bone (foot) is kept at its rest
    orientation. Targets out of reach are pulled back onto the reachable ring."""
    if len(limb.bones) < 2:
        p.pitch(limb.bones[0], np.arctan2(forward, limb_length(p.rig, p.roles, limb)))
        return
    hip, knee, ankle = _leg_points(p, limb)
    f1, u1 = (knee - hip) @ p.forward, (knee - hip) @ p.up
    f2, u2 = (ankle - knee) @ p.forward, (ankle - knee) @ p.up
    l1, l2 = np.hypot(f1, u1), np.hypot(f2, u2)
    thigh, shin = p.posed(limb.bones[0]) @ (knee - hip), p.posed(limb.bones[1]) @ (ankle - knee)
    a1 = np.arctan2(thigh @ p.forward, -(thigh @ p.up))  # current angles from straight down, forward positive
    a2 = np.arctan2(shin @ p.forward, -(shin @ p.up))
    moved = p.head_position(limb.bones[0]) - hip  # the hip carried by a bending spine
    forward, up = forward - moved @ p.forward, up - moved @ p.up
    tf, tu = f1 + f2 + forward, u1 + u2 + up
    d = np.clip(np.hypot(tf, tu), abs(l1 - l2) + 1e-9, (l1 + l2) * (1 - 1e-9))
    phi = np.arctan2(tf, -tu)
    gamma = np.arccos(np.clip((l1 * l1 + d * d - l2 * l2) / (2 * l1 * d), -1.0, 1.0))
    b1 = phi - knee_sign(p.rig, p.roles, limb) * gamma
    rf, ru = d * np.sin(phi) - l1 * np.sin(b1), -d * np.cos(phi) + l1 * np.cos(b1)
    b2 = np.arctan2(rf, -ru)
    p.pitch(limb.bones[0], b1 - a1)
    p.pitch(limb.bones[1], (b2 - a2) - (b1 - a1))
    if len(limb.bones) > 2:
        p.level(limb.bones[2])


def gait(
    rig: RigAsset,
    roles: BoneRoles,
    frames: int,
    fps: float,
    v: Variation,
    *,
    cycles: float,
    swing: float,
    duty: float = 0.6,
    clearance: float = 0.12,
    offsets: Callable[[BoneRoles, Limb], float] = walk_phase_offsets,
    lean: float = 0.0,
    elbow: float = 15.0,
    spine_flex: float = 0.0,
    head_bob: float = 4.0,
    tail_lift: float = 0.0,
    bob_rate: float = 2.0,
    overreach: float = 0.0,
    reach_shift: float = 0.0,
    max_reach: float | None = None,
    lift_peak: float = 0.5,
    front_lift_peak: float | None = None,
) -> MotionClip:
    """A cyclic gait travelling along the body's forward axis with planted feet.

    Each leg's foot is placed by :func:`place_foot`: on the ground for ``duty`` of the cycle, sliding
    back under the hip exactly as fast as the body travels, then lifted ``clearance`` leg lengths and
    carried forward, highest ``lift_peak`` of the way through its time in the air (front legs:
    ``front_lift_peak``; the same when None); its phase comes from ``offsets``. The foot reaches
    ``leg length·sin(swing)`` ahead of and behind the hip, so the body travels
    ``2·leg length·sin(swing)/duty`` per cycle, and the hips are lowered just enough for the stance
    legs to reach that far (the root height from the leg geometry; with ``max_reach``, at most as far
    as that share of the leg's hip-to-ankle length needs, the foot leaving the ground beyond). In the
    air the foot swings ``overreach`` leg lengths further back after it lifts and as far further
    forward before it lands; ``reach_shift`` leg lengths move the front legs' whole sweep forward and
    the hind legs' back (a gallop's reach and push).

    Arms hang and swing opposite to their leg with ``elbow`` degrees of bend; the torso leans ``lean``
    degrees forward and flexes ``spine_flex`` degrees each cycle (a bound); the tail is raised
    ``tail_lift`` of the way to just above horizontal. The variation's ``bob`` dips the body by up to
    that many leg lengths ``bob_rate`` times per cycle with the stance feet kept planted, and its
    ``rock`` pitches the body about its root once per cycle (degrees), both peaking ``body_phase``
    cycles into the stride. Nothing sinks below the ground (the body is lifted where something would).
    Angles in degrees; ``cycles`` per clip at speed 1; the defaults keep the body level and the feet's
    sweep symmetric.

    The variation's ``style`` (:class:`~.gait_styles.GaitStyle`, read from ``gait_styles.json``)
    scales the cadence, reach, duty and clearance, adds lean, sway, crouch, hops in the spells with no
    foot down, and poses the arms, head and feet; a style whose steps are uneven (a weaving or
    uneven path, sideways travel, a favoured leg) places every footfall on the body's path
    (:func:`~.footfalls.plan_steps`), so planted feet stay planted. No style: the gait as above.
    ValueError naming the style when the character's kind does not play it.
    """
    style = gait_style(roles.kind, v.style)
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    cycles, duty, clearance = cycles * style.cadence, duty * style.duty, clearance * style.clearance
    if style.lift_peak is not None:
        lift_peak = front_lift_peak = style.lift_peak
    cycle = cycles * v.speed * p.t + v.phase
    warp = uneven_timing(cycles * v.speed * p.t, style.timing) if style.timing else None
    if warp is not None:
        cycle = cycle + warp
    w = 2 * np.pi * cycle
    body = 2 * np.pi * (cycle - v.body_phase)
    if v.rock:
        p.pitch(roles.root, rad(v.rock) * np.cos(body))
    bend_torso(p, p.right, -rad(lean + style.lean) * a - rad(spine_flex) * a * np.sin(w))
    if style.sway:  # over the standing leg
        bend_torso(p, p.forward, -rad(style.sway) * a * np.sin(w))
    arms_down(p, 8.0 + style.arm_out)
    legs = list(p.legs)
    lengths = np.array([limb_length(rig, roles, limb) for limb in legs]) if legs else np.zeros(0)
    half = float(np.mean(lengths) * np.sin(rad(swing) * a)) if legs else 0.0  # foot reach ahead of the hip
    half = half * style.stride
    spacing = _hip_spacing(p, legs) if legs else 0.0
    if style.sideways:  # a step aside stays clear of the other foot
        half = min(half, style.side_reach * spacing)
    shift = reach_shift * (float(np.mean(lengths)) if legs else 0.0)
    stride = 2 * half / duty
    phases = [_tripod_or(offsets, roles, limb) for limb in legs]
    duties = [min(duty * _favoured(style, limb), 0.95) for limb in legs]
    path = heading = None
    plans: list[Steps | None] = [None] * len(legs)
    far = half + shift  # the stance foot's farthest reach from under its hip
    if style.uneven:  # every footfall placed on the body's path
        late = 0.5 * (min(duty * style.good_duty, 0.95) - duty * style.hurt_duty)
        phases = [o - late if _is_favoured(style, limb) else o for o, limb in zip(phases, legs)]
        mean = float(np.mean(lengths)) if legs else 0.0
        path = body_path(stride, style.jitter, style.weave * mean, style.weave_rate, v.direction if style.sideways else 0)
        if style.weave_turn and not style.sideways:
            heading = _heading(path, style.weave_turn)
        plans = _footfalls(p, legs, cycle, phases, duties, [overreach * length for length in lengths], path, heading)
        far = max([0.0] + [plan.reach for plan in plans if plan is not None]) + shift
    if style.spread:
        far = float(np.hypot(far, style.spread * spacing))
    reach = [leg_reach(p, limb) for limb in legs if not is_sprawled(rig, roles, limb)]
    cap = (lambda full: min(far, max_reach * full)) if max_reach is not None else (lambda full: far)
    drop = max([0.0] + [below - np.sqrt(max((0.97 * full) ** 2 - cap(full) ** 2, 1e-12)) for below, full in reach])
    dip = v.bob * (float(np.mean(lengths)) if legs else 0.0) * 0.5 * (1 - np.cos(bob_rate * body))  # [F] ≥ 0
    if style.crouch and legs:
        dip = dip + style.crouch * float(np.mean(lengths))
    if style.hurt_dip and legs:  # the body sinks onto the favoured leg while it stands on it
        dip = dip + style.hurt_dip * float(np.mean(lengths)) * _favoured_load(style, legs, cycle, phases, duties)
    swings = {}
    for limb, length, o, d, plan in zip(legs, lengths, phases, duties, plans):
        aside = turn = None
        if plan is not None:
            ahead, aside, turn, stance, s = plan.ahead, plan.aside, plan.turn, plan.down, plan.swing
        else:
            ph = (cycle + o) % 1.0
            stance = ph < duty
            s = np.clip((ph - duty) / (1 - duty), 0, 1)
            ahead = np.where(
                stance, half * (1 - 2 * ph / duty), half * (2 * smoothstep(s) - 1) - overreach * length * np.sin(2 * np.pi * s)
            )
        ahead = ahead + shift * {"front": 1.0, "hind": -1.0}.get(limb.position, 0.0)
        if style.spread:  # a wider stance
            out = style.spread * spacing * {"left": 1.0, "right": -1.0}.get(limb.side, 0.0)
            aside = (aside if aside is not None else np.zeros(frames)) + out
        peak = front_lift_peak if limb.position == "front" and front_lift_peak is not None else lift_peak
        lift = np.where(stance, 0.0, clearance * length * a * np.sin(np.pi * s ** (np.log(0.5) / np.log(peak))))
        if d <= 0:  # a carried leg: held up under the body
            ahead, aside, turn, lift = np.zeros(frames), None, None, np.full(frames, style.carry * length)
        if is_sprawled(rig, roles, limb):
            step_sprawled(p, limb, ahead, lift + dip)
        else:
            _step(p, limb, ahead, aside, lift + drop + dip, turn, style.tiptoe)
        swings[limb.side] = np.arcsin(np.clip(ahead / max(length, 1e-9), -1, 1))
    for limb in body_arms(p):
        bones = arm_bones(rig, limb, p.up)
        p.pitch(bones[0], (-0.8 * style.arm_swing) * swings.get(limb.side, 0.0) + rad(style.arm_forward))
        if len(bones) > 1:
            p.pitch(bones[1], rad(elbow + style.elbow) * a)
    p.bend_chain(roles.neck, p.right, rad(head_bob) * a * np.sin(2 * w))
    if style.head_pitch or style.head_roll:
        neck = roles.neck or ((roles.head,) if roles.head is not None else ())
        p.bend_chain(neck, p.right, rad(style.head_pitch))
        p.bend_chain(neck, p.forward, rad(style.head_roll))
    if roles.tail and tail_lift > 0:
        p.aim(roles.tail[0], roles.tail, -p.forward + 0.4 * p.up, tail_lift)
    p.wave_chain(roles.tail, p.up, rad(12) * a, w)
    if path is None:
        travelled = stride * cycles * v.speed * p.t
        if warp is not None:
            travelled = travelled + stride * warp
        p.travel = np.outer(travelled, p.forward) - np.outer(drop + dip, p.up)
    else:
        moved = path(cycle) - path(cycle[:1])
        p.travel = np.outer(moved[:, 0], p.forward) + np.outer(moved[:, 1], p.left) - np.outer(drop + dip, p.up)
        if heading is not None:
            p.yaw = heading(cycle)
    if style.hop and legs:  # airborne between the steps
        p.travel = p.travel + np.outer(style.hop * a * float(np.mean(lengths)) * flight_arc(cycle, phases, duties), p.up)
    return p.clip(v.facing, grounded="floor")


def _hip_spacing(p: BodyPose, legs: list[Limb]) -> float:
    """Mean distance of the legs' hips from the body's midline, sideways (armature units)."""
    root = p.rig.heads[p.roles.root]
    return float(np.mean([abs((p.rig.heads[limb.bones[0]] - root) @ p.left) for limb in legs]))


def _footfalls(
    p: BodyPose,
    legs: list[Limb],
    cycle: np.ndarray,
    phases: list[float],
    duties: list[float],
    overreach: list[float],
    path: Path,
    heading: Callable[[np.ndarray], np.ndarray] | None,
) -> list[Steps | None]:
    """Each leg's footfalls on the body's ``path`` (:func:`~.footfalls.plan_steps`), its hip seen from
    the point the body turns about; None for a leg that never comes down (``duties`` 0: carried). A
    favoured leg's short stance comes in the middle of the others' swing (its phase set by the caller)."""
    centre = _turning_centre(p)
    return [
        plan_steps(cycle, o, d, path, reach, heading, _in_body_frame(p, p.rig.heads[limb.bones[0]] - centre)) if d > 0 else None
        for limb, o, d, reach in zip(legs, phases, duties, overreach)
    ]


def _turning_centre(p: BodyPose) -> np.ndarray:
    """[3] the point a gait's yaw turns the body about (:meth:`~.pose.BodyPose.clip`: the rest centre
    of the skinned vertices; the root's head for a rig without vertices)."""
    rig = p.rig
    return rig.vertices[rig.weights.sum(1) > 0].mean(0) if rig.num_vertices else rig.heads[p.roles.root]


def _in_body_frame(p: BodyPose, vector: np.ndarray) -> np.ndarray:
    """[2] an armature-space vector's (forward, left) components."""
    return np.array([vector @ p.forward, vector @ p.left])


def _heading(path: Path, share: float) -> Callable[[np.ndarray], np.ndarray]:
    """cycles → the body's yaw [n] (radians, to the left): ``share`` of the path's own heading."""
    return lambda when: share * path_heading(path, when)


def _is_favoured(style: GaitStyle, limb: Limb) -> bool:
    """Whether ``limb`` is the style's favoured (hurt) leg (never, when the style favours none)."""
    if style.hurt_duty == 1.0 and style.good_duty == 1.0:
        return False
    return limb.side == style.hurt_side and (not style.hurt_position or limb.position == style.hurt_position)


def _favoured(style: GaitStyle, limb: Limb) -> float:
    """The factor on ``limb``'s share of the cycle on the ground: the favoured leg's or the others'."""
    if style.hurt_duty == 1.0 and style.good_duty == 1.0:
        return 1.0
    return style.hurt_duty if _is_favoured(style, limb) else style.good_duty


def _favoured_load(style: GaitStyle, legs: list[Limb], cycle: np.ndarray, phases: list[float], duties: list[float]) -> np.ndarray:
    """[F] 0 → 1 → 0 (a sine arch) over each stance of the favoured leg(s); 0 otherwise."""
    load = np.zeros(len(cycle))
    for limb, o, d in zip(legs, phases, duties):
        if _is_favoured(style, limb) and d > 0:
            ph = (cycle + o) % 1.0
            load = np.maximum(load, np.where(ph < d, np.sin(np.pi * ph / d), 0.0))
    return load


def _step(
    p: BodyPose,
    limb: Limb,
    ahead: np.ndarray,
    aside: np.ndarray | None,
    up: np.ndarray,
    turn: np.ndarray | None = None,
    tiptoe: float = 0.0,
) -> None:
    """Place a hanging leg's ankle ``ahead``, ``aside`` (to the body's left; None: not at all) and
    ``up`` [F] from its rest place (armature units): :func:`place_foot` in the sagittal plane with the
    leg lengthened so that, swung out about the body's forward axis at the hip, the ankle is as high
    as ``up`` says; the foot turned ``turn`` [F] radians about up (to the left; None: not at all) and
    tipped ``tiptoe`` degrees onto its toes."""
    if aside is None:
        place_foot(p, limb, ahead, up)
    else:
        below = leg_reach(p, limb)[0]
        depth = below - up  # hip over ankle
        place_foot(p, limb, ahead, below - np.hypot(depth, aside))
        p.rotate(limb.bones[0], np.cross(-p.up, p.left), np.arctan2(aside, depth))
        if len(limb.bones) > 2:
            p.level(limb.bones[2])
    if turn is not None and len(limb.bones) > 2:
        p.rotate(limb.bones[2], p.up, turn)
    if tiptoe and len(limb.bones) > 2:
        p.pitch(limb.bones[2], -rad(tiptoe))


def jump(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, forward: float = 0.0) -> MotionClip:
    """Crouch, spring up, land, crouch again: legs fold (:func:`flex_leg`), the lowest vertex rises
    ``amplitude`` × 0.4 leg lengths (at least 12 % of the height) at the top; arms swing up in the air; ``forward`` leg lengths of
    travel during the flight (0: in place)."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    ph = (v.speed * p.t + v.phase * 0.25) % 1.0
    crouch = np.exp(-(((ph - 0.15) / 0.09) ** 2)) + np.exp(-(((ph - 0.92) / 0.07) ** 2))
    air = np.where((ph > 0.25) & (ph < 0.82), np.sin(np.pi * np.clip(ph - 0.25, 0, None) / 0.57), 0.0)
    bend_torso(p, p.right, -rad(20) * a * crouch)
    for limb in body_arms(p):
        up = np.clip(air, 0, 1)
        aim_arm(p, limb, arm_direction(p, limb, np.cos(rad(8 + 140 * up)), np.sin(rad(8 + 140 * up)) + 0.05, 0.3 * up))
    for limb in p.legs:
        flex_leg(p, limb, rad(40) * a * crouch + rad(12) * air)
    p.wave_chain(roles.tail, p.right, rad(25) * a, 2 * np.pi * ph)
    length = mean_leg_length(p)
    p.lift = max(0.4 * length, 0.12 * p.height) * a * air
    progress = smoothstep((ph - 0.25) / 0.57)
    p.travel = np.outer(forward * length * a * progress, p.forward)
    return p.clip(v.facing)


def turn_in_place(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn about the body's centre by ``160°·amplitude`` (left for direction +1), stepping: the legs
    lift in two alternating groups (left/right; a quadruped's diagonal pairs; from four legs a side on,
    every other leg along a side, :func:`alternate_group`); the neck leads."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    p.yaw = v.direction * rad(160) * a * smoothstep((p.t - 0.05) / (0.85 / v.speed))
    steps = 2 * np.pi * (2.0 * v.speed * p.t + v.phase)
    arms_down(p)
    many = sum(leg.side == "left" for leg in roles.legs) >= 4
    for limb in p.legs:
        group = alternate_group(roles, limb) if many else (limb.side == "left") != (limb.position == "hind")
        lift = np.clip(np.sin(steps + np.pi * group), 0, None)
        flex_leg(p, limb, rad(20) * lift)
    p.bend_chain(roles.neck, p.up, v.direction * rad(15) * smoothstep(p.t / 0.3) * (1 - smoothstep((p.t - 0.8) / 0.2)))
    return p.clip(v.facing)
