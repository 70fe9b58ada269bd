"""A :class:`~.plan.Plan` played as one clip on a rig through its bone roles.

Each part becomes one or more *pieces* (:func:`schedule`): a cyclic motion (walk, wave …) is one piece
whose tempo gives it as many cycles as its repetitions ask for; a one-shot motion (jump, sit …) is
played again for each repetition, and held on its last pose when its duration is longer. Every piece
is the library clip of its motion (:mod:`akd_blender.core.motion.library`) at the part's variation.
The pieces follow each other on one root path: a piece starts where the one before ended, laid across
the ground so the feet on the ground at the seam keep their mean place (the root head for a legless
rig), and faces where the one before ended facing (the root's yaw change is measured on the posed
skeleton), so a walk then a sit sits where the walk stopped. A cyclic piece next to another starts at
the phase whose seams move the grounded feet least. Over the first :data:`BLEND_SECONDS` of each piece
(longer when a grounded foot would otherwise be carried faster than :data:`FOOT_SPEED`) the pose is
slerped from the previous piece's last pose, and the body is raised or lowered so the lowest vertex
follows the blend of the two pieces' own heights above the ground (no dip through the floor, no float).

Parts played together (:attr:`~.plan.Part.together`: "walks while waving") share the leading part's
pieces: each laid-over part is generated over the same frames (a cyclic one at its own tempo, a
one-shot one spread over the piece) and its body parts' bones (:func:`body_part_bones`) replace the
leading clip's; the body is then raised or lowered so its lowest vertex stays where the leading clip
had it.

A part's length: its duration when said; else a cyclic motion lasts :func:`natural_seconds` (2 s, the
library clip as the teacher draws it: 16 frames at 8 fps), or, with repetitions, that many units
(``words.json`` ``units_per_clip``: a wave clip is 2 waves) at its speed; a one-shot motion lasts
``natural / speed`` per repetition, and a duration longer than that holds its last pose (a shorter one
does not squeeze it: "stands tall for a moment" is the whole rear-up). With ``frames`` the pieces are
scaled in time to fill exactly that many frames.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...character.kinematics import Skeleton
from ...character.rig import RigAsset
from ...errors import InputError
from ...motion.clip import MotionClip
from ...motion.library import role_motion
from ...motion.library.ground_contact import lowest_heights
from ...motion.library.pose import BodyPose, location_axes, location_carrier, smoothstep
from .plan import HOLD, LEADING_PARTS, Part, Plan, motion_parts
from .words import words

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = [
    "BLEND_SECONDS",
    "Piece",
    "natural_seconds",
    "schedule",
    "piece_frames",
    "compose_clip",
    "root_yaw",
    "body_part_bones",
]

BLEND_SECONDS: float = 0.25
"""How long each transition blends from the previous piece's last pose into the next piece (seconds;
at most half the piece)."""


def natural_seconds() -> float:
    """The length of one library clip as the teacher draws it, seconds (``words.json``)."""
    return float(words()["natural_seconds"])


@dataclass(frozen=True)
class Piece:
    """One library clip of a plan: ``part`` (index into the plan's parts), its length ``seconds``, the
    :class:`Variation` speed it is generated with (``speed``: the part's tempo × its length over the
    natural length for a cyclic motion, 1 for a one-shot one, whose speed shortens it instead) and
    ``hold``: a held last pose instead of a clip."""

    part: int
    seconds: float
    speed: float
    hold: bool = False


def schedule(plan: Plan) -> list[Piece]:
    """The plan's pieces in order (see the module docstring for their lengths)."""
    classes, units = words()["motions"], words()["motions"]["units_per_clip"]
    natural = natural_seconds()
    pieces: list[Piece] = []
    for k, part in enumerate(plan.parts):
        if part.label == HOLD:
            seconds = part.duration if part.duration is not None else float(words()["hold_seconds"])
            pieces.append(Piece(k, seconds, 1.0, hold=True))
            continue
        if part.label in classes["cyclic"]:
            if part.duration is not None:
                length = part.duration
            elif part.repetitions != 1:
                length = part.repetitions * natural / float(units.get(part.label, 1.0)) / part.speed
            else:
                length = natural
            pieces.append(Piece(k, length, part.speed * length / natural))
            continue
        once = natural / part.speed  # a duration never squeezes a one-shot motion ("rears up for a moment")
        pieces += [Piece(k, once, 1.0)] * part.repetitions
        if part.duration is not None and part.duration > part.repetitions * once:
            pieces.append(Piece(k, part.duration - part.repetitions * once, 1.0, hold=True))
    return pieces


def piece_frames(pieces: list[Piece], fps: float, frames: int | None = None) -> list[int]:
    """Frames of each piece at ``fps``: its seconds × fps rounded (at least 2, a hold at least 1);
    with ``frames``, scaled so they add up to exactly ``frames`` (InputError when too few)."""
    if fps <= 0:
        raise InputError(f"the frame rate must be positive, not {fps}")
    least = [1 if p.hold else 2 for p in pieces]
    if frames is not None and frames < sum(least):
        raise InputError(f"{frames} frames are too few for a plan of {len(pieces)} pieces (needs at least {sum(least)})")
    total = sum(p.seconds for p in pieces)
    rate = fps if frames is None else frames / total
    ends = np.round(np.cumsum([p.seconds * rate for p in pieces])).astype(int)
    counts = [max(m, int(n)) for m, n in zip(least, np.diff(np.concatenate([[0], ends])))]
    while frames is not None and sum(counts) != frames:
        step = 1 if sum(counts) < frames else -1
        room = [i for i, n in enumerate(counts) if step > 0 or n > least[i]]
        i = max(room, key=lambda i: counts[i])
        counts[i] += step
    return counts


def _slerp(a: np.ndarray, b: np.ndarray, w: float) -> np.ndarray:
    """Quaternions [J,4] (wxyz) a → b at weight ``w`` in [0,1], shortest way, unit length."""
    dot = (a * b).sum(-1)
    b = np.where(dot[:, None] < 0, -b, b)
    theta = np.arccos(np.clip(np.abs(dot), -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-6
    safe = np.where(small, 1.0, sin)
    wa = np.where(small, 1 - w, np.sin((1 - w) * theta) / safe)
    wb = np.where(small, w, np.sin(w * theta) / safe)
    q = wa[:, None] * a + wb[:, None] * b
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def root_yaw(rig: RigAsset, roles: BoneRoles, clip: MotionClip) -> np.ndarray:
    """[F] the role root's heading about the body's up axis (radians, + turns left, unwrapped, 0 =
    the rest facing): the posed forward axis projected on the ground plane."""
    return _stance(rig, roles, clip.rotations, clip.locations).yaw


def _yaw(roles: BoneRoles, turn: np.ndarray) -> np.ndarray:
    up, forward = (np.asarray(v, dtype=np.float64) for v in (roles.frame.up, roles.frame.forward))
    posed = turn @ forward
    yaw = np.arctan2(np.cross(forward, posed) @ up, posed @ forward)
    return np.unwrap(yaw)


PHASES: int = 8
"""How many start phases (cycles k / PHASES) a cyclic piece next to another piece is tried at."""


FOOT_SPEED: float = 0.3
"""The fastest (body heights per second) a grounded foot may be carried across the ground by a
transition's blend: a transition whose feet must move farther takes longer than :data:`BLEND_SECONDS`."""

GROUNDED: float = 0.04
"""A foot whose last bone's head is within this many body heights of its rest height is on the ground."""


@dataclass(frozen=True)
class _Stance:
    """Frames' root head [F,3], feet (each leg's last bone head) [F,L,3], heading [F] (radians) and
    feet on the ground bool [F,L], armature space."""

    root: np.ndarray
    feet: np.ndarray
    yaw: np.ndarray
    grounded: np.ndarray


def _stance(rig: RigAsset, roles: BoneRoles, rot: np.ndarray, loc: np.ndarray) -> _Stance:
    """The :class:`_Stance` of channels [F,J,4] / [F,J,3]."""
    skeleton = Skeleton(rig, dtype=torch.float64)
    with torch.no_grad():
        pose = skeleton.pose_matrices(torch.as_tensor(rot), torch.as_tensor(loc)).numpy()
    up = np.asarray(roles.frame.up, dtype=np.float64)
    root = int(roles.root)
    yaw = _yaw(roles, pose[:, root, :3, :3] @ rig.rest_matrices[root, :3, :3].T)
    tips = [limb.bones[-1] for limb in roles.legs if limb.bones]
    feet = pose[:, tips][..., :3, 3] if tips else np.zeros((len(rot), 0, 3))
    grounded = (feet @ up) - (rig.heads[tips] @ up if tips else 0.0) < GROUNDED * float(roles.frame.height)
    return _Stance(pose[:, root, :3, 3], feet, yaw, grounded)


def _across(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    """``v`` [...,3] without its part along ``up``."""
    return v - (v @ up)[..., None] * up


def _body_feet(stance: _Stance, up: np.ndarray) -> np.ndarray:
    """[F,L,3] the feet relative to the root, across the ground, turned back by the heading: the
    stance in the body's own frame."""
    feet = _across(stance.feet - stance.root[:, None], up)
    c, s = np.cos(-stance.yaw)[:, None, None], np.sin(-stance.yaw)[:, None, None]
    return feet * c + np.cross(up, feet) * s


def _stance_gap(a: np.ndarray, b: np.ndarray, grounded: np.ndarray) -> float:
    """Distance between two stances [L,3] summed over the feet, a foot off the ground (``grounded``
    [L] False) counting a quarter: a lifted foot may move."""
    return float((np.linalg.norm(a - b, axis=-1) * np.where(grounded, 1.0, 0.25)).sum())


def _seam(before: _Stance, after: _Stance, up: np.ndarray, height: float) -> tuple[np.ndarray, float]:
    """Where to put a piece after another: the offset [3] across the ground that lays the mean of the
    feet on the ground at both ends of the seam (``before``'s last frame, ``after``'s first) on each
    other (the root heads when the rig has no legs), and how far (body heights) a grounded foot still
    has to move."""
    if before.feet.shape[1] == 0:
        return _across(before.root[-1] - after.root[0], up), 0.0
    both = before.grounded[-1] & after.grounded[0]
    chosen = both if both.any() else np.ones_like(both)
    offset = _across((before.feet[-1, chosen] - after.feet[0, chosen]).mean(0), up)
    moves = np.linalg.norm(_across(before.feet[-1] - after.feet[0] - offset, up), axis=-1)
    return offset, float(moves[both].max() / height) if both.any() else 0.0


def _generate(
    rig: RigAsset,
    roles: BoneRoles,
    part: Part,
    piece: Piece,
    frames: int,
    fps: float,
    facing: float,
    before: _Stance | None = None,
    after: np.ndarray | None = None,
) -> MotionClip:
    """The library clip of one piece, facing ``facing`` (radians), played backwards when the part says
    so. A cyclic piece with a stance to start from (``before``: the previous piece's last frame) or
    to end near (``after``: the rest stance, [L,3] from :func:`_body_feet`) is started at the phase
    (of :data:`PHASES`) whose first and last stances are nearest those, so the grounded feet move
    least through the transitions."""
    spec = role_motion(roles.kind, part.label)
    extra = {"side": part.side} if part.side and "side" in inspect.signature(spec.generate).parameters else {}
    phases = [0.0]
    if part.label in words()["motions"]["cyclic"] and (before is not None or after is not None) and roles.legs:
        phases = list(np.arange(PHASES) / PHASES)
    best, best_cost = None, np.inf
    for phase in phases:
        clip = spec.generate(rig, roles, frames, fps, replace(part.variation(facing, piece.speed), phase=float(phase)), **extra)
        if part.backwards:
            clip = MotionClip(
                clip.bone_names, clip.fps, clip.frame_start, clip.rotations[::-1].copy(), clip.locations[::-1].copy()
            )
        if len(phases) == 1:
            return clip
        up = np.asarray(roles.frame.up, dtype=np.float64)
        ends = _stance(rig, roles, clip.rotations[[0, -1]], clip.locations[[0, -1]])
        body = _body_feet(ends, up)
        cost = 0.0
        if before is not None:
            cost += _stance_gap(body[0], _body_feet(before, up)[-1], ends.grounded[0] & before.grounded[-1])
        if after is not None:
            cost += _stance_gap(body[1], after, ends.grounded[1])
        if cost < best_cost:
            best, best_cost = clip, cost
    return best


def compose_clip(
    rig: RigAsset, roles: BoneRoles, plan: Plan, fps: float, frames: int | None = None, blend: float = BLEND_SECONDS
) -> MotionClip:
    """The plan as one clip [F] at ``fps`` on ``rig`` through ``roles`` (its kind must be the plan's):
    F follows the plan (:func:`schedule`) unless ``frames`` is given. Transitions blend over ``blend``
    seconds (see the module docstring). InputError when the roles' kind is not the plan's."""
    if roles.kind != plan.kind:
        raise InputError(f"the plan is for a {plan.kind} character, the rig's bone roles are a {roles.kind}'s")
    pieces = schedule(plan)
    counts = piece_frames(pieces, fps, frames)
    up = np.asarray(roles.frame.up, dtype=np.float64)
    carrier = location_carrier(rig, int(roles.root))
    axes = location_axes(rig, carrier)
    rotations: list[np.ndarray] = []
    locations: list[np.ndarray] = []
    heading, height = 0.0, float(roles.frame.height)
    last: _Stance | None = None
    last_low = 0.0
    rest = MotionClip.rest(rig, 1)
    rest_stance = _body_feet(_stance(rig, roles, rest.rotations, rest.locations), up)[0]
    for k, (piece, n) in enumerate(zip(pieces, counts)):
        if piece.hold:
            if not rotations:  # the plan starts by standing still: the rest pose on the ground
                stand = BodyPose(rig, roles, 1, fps).clip(heading)
                rotations.append(stand.rotations)
                locations.append(stand.locations)
                n -= 1
            rotations.append(np.repeat(rotations[-1][-1:], n, 0))
            locations.append(np.repeat(locations[-1][-1:], n, 0))
            last = _stance(rig, roles, rotations[-1][-1:], locations[-1][-1:])
            last_low = float(
                lowest_heights(rig, MotionClip(rig.bone_names, fps, 1, rotations[-1][-1:], locations[-1][-1:]), up, carrier)[0]
            )
            continue
        part = plan.parts[piece.part]
        facing = heading + np.deg2rad(part.heading)
        after = rest_stance if k + 1 < len(pieces) and not pieces[k + 1].hold else None
        clip = _generate(rig, roles, part, piece, n, fps, facing, last, after)
        if part.together:
            clip = _laid_over(rig, roles, part, piece, clip, facing, up, carrier, axes)
        rot, loc = clip.rotations.copy(), clip.locations.copy()
        stance = _stance(rig, roles, rot, loc)
        low = lowest_heights(rig, clip, up, carrier)
        if last is not None:
            offset, gap = _seam(last, stance, up, height)
            loc[:, carrier] += offset @ axes
            count = max(round(blend * fps), int(np.ceil(1.5 * gap / FOOT_SPEED * fps)))
            _blend_in(rig, rotations[-1][-1], locations[-1][-1], last_low, rot, loc, low, count, up, carrier, axes)
        heading = facing + float(stance.yaw[-1] - stance.yaw[0])
        last = _stance(rig, roles, rot[-1:], loc[-1:])
        last_low = float(lowest_heights(rig, MotionClip(rig.bone_names, fps, 1, rot[-1:], loc[-1:]), up, carrier)[0])
        rotations.append(rot)
        locations.append(loc)
    out = MotionClip(rig.bone_names, float(fps), 1, np.concatenate(rotations), np.concatenate(locations))
    return out.continuous()


def body_part_bones(rig: RigAsset, roles: BoneRoles, parts: frozenset[str] | set[str]) -> np.ndarray:
    """Indices (int64, sorted) of the bones that play ``parts`` ("root", "legs", "torso", "head", "arms",
    "arm.left", "arm.right", "tail", "wings"): a limb, the head or the tail with every bone below it
    (fingers, jaw, ears), the head with its neck, the torso the spine bones alone."""
    starts: set[int] = set()
    only: set[int] = set()
    arm_sides = {"arms": ("left", "right", "center"), "arm.left": ("left",), "arm.right": ("right",)}
    for part in parts:
        if part == "root":
            only.add(int(roles.root))
        elif part == "torso":
            only.update(int(b) for b in roles.spine)
        elif part == "head":
            only.update(int(b) for b in roles.neck)
            starts.update([int(roles.head)] if roles.head is not None else [])
        elif part == "tail":
            starts.update(int(b) for b in roles.tail[:1])
        elif part in arm_sides:
            starts.update(int(limb.bones[0]) for limb in roles.arms if limb.side in arm_sides[part] and limb.bones)
        elif part in ("legs", "wings"):
            starts.update(int(limb.bones[0]) for limb in getattr(roles, part) if limb.bones)
        else:
            raise ValueError(f"unknown body part {part!r}")
    inside = np.zeros(rig.num_bones, dtype=bool)
    for b, parent in enumerate(rig.parents):
        inside[b] = b in starts or (parent >= 0 and inside[parent])
    inside[list(only)] = True
    return np.flatnonzero(inside)


def _laid_over(
    rig: RigAsset,
    roles: BoneRoles,
    part: Part,
    piece: Piece,
    clip: MotionClip,
    facing: float,
    up: np.ndarray,
    carrier: int,
    axes: np.ndarray,
) -> MotionClip:
    """``clip`` (the leading part's piece) with each of ``part.together`` laid over its body parts, the
    body moved along ``up`` so its lowest vertex stays at the leading clip's height."""
    rot, loc = clip.rotations.copy(), clip.locations.copy()
    natural = natural_seconds()
    cyclic = words()["motions"]["cyclic"]
    for extra in part.together:
        speed = extra.speed * piece.seconds / natural if extra.label in cyclic else 1.0
        laid = _generate(rig, roles, extra, Piece(piece.part, piece.seconds, speed), clip.num_frames, clip.fps, facing)
        bones = body_part_bones(rig, roles, motion_parts(roles.kind, extra.label, extra.side) - LEADING_PARTS)
        rot[:, bones] = laid.rotations[:, bones]
        loc[:, bones] = laid.locations[:, bones]
    out = MotionClip(clip.bone_names, clip.fps, clip.frame_start, rot, loc)
    shift = lowest_heights(rig, clip, up, carrier) - lowest_heights(rig, out, up, carrier)
    loc[:, carrier] += (shift[:, None] * up) @ axes
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, rot, loc)


def _blend_in(
    rig: RigAsset,
    prev_rot: np.ndarray,
    prev_loc: np.ndarray,
    prev_low: float,
    rot: np.ndarray,
    loc: np.ndarray,
    low: np.ndarray,
    frames: int,
    up: np.ndarray,
    carrier: int,
    axes: np.ndarray,
) -> None:
    """Blend a piece's first ``frames`` (at most 60 % of it) in place from the previous piece's last
    pose (``prev_rot`` [J,4], ``prev_loc`` [J,3]): slerped rotations, interpolated locations, and the
    body moved along ``up`` so its lowest vertex is at the blend of ``prev_low`` and the piece's own
    ``low`` [F] (heights above the ground along ``up``)."""
    count = min(frames, int(0.6 * len(rot)))
    if count < 1:
        return
    weights = smoothstep(np.arange(1, count + 1) / (count + 1))
    for f, w in enumerate(weights):
        rot[f] = _slerp(prev_rot, rot[f], float(w))
        loc[f] = (1 - w) * prev_loc + w * loc[f]
    blended = MotionClip(rig.bone_names, 1.0, 1, rot[:count], loc[:count])
    target = (1 - weights) * prev_low + weights * low[:count]
    shift = target - lowest_heights(rig, blended, up, carrier)
    loc[:count, carrier] += (shift[:, None] * up) @ axes
