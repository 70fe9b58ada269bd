"""Motions as records: data files (``records/*.json``) played by one player through the bone roles.

A record says what a motion does in the body's own terms, never with a bone name:

- ``label``, ``kinds`` (the kinds of character it plays on), ``parts`` (the body parts it drives, from
  :data:`PARTS`; ``"arm"`` is the one arm on the prompted side), ``sided`` ("with the left hand"
  applies), ``cyclic`` (its keys make one cycle, played ``repeats`` times per clip at speed 1);
- ``keys``: key poses at times ``at`` (fractions of the clip, or of one cycle), each reached from the
  one before with its ``ease`` (:data:`EASINGS`). A key names a pose per slot (:data:`SLOT_PARTS`):
  an arm reaches a landmark (``{"hand": "brow"}``, :data:`LANDMARKS`, ``offset`` [forward, out, up] in
  body heights, ``elbow`` the [down, out, forward] way the elbow points) by analytic two-bone IK, or
  points along directions (``{"upper": [down, out, forward], "fore": [...]}``; offsets and
  directions in the chest's frame as posed, a floor offset along the ground); a leg places its foot
  (``{"foot": [forward, up]}`` in leg lengths, two-bone IK with the feet kept on the ground) or folds
  (``{"thigh": degrees forward, "knee": degrees folded, "spread": degrees out}``); the torso bends
  (``bend`` forward, ``lean`` and ``twist`` toward the prompted side, ``at_hips`` the share at the
  hips), the head turns (``pitch`` up, ``yaw`` and ``roll`` toward the prompted side), the root tips
  (``pitch`` backward, ``roll`` toward the side), travels (``forward`` leg lengths), lifts (``lift``
  body heights above the ground) and turns (``yaw`` degrees toward the side); the tail aims (``lift``
  degrees above straight back). A slot a key leaves out is at rest there (arms hanging).
- ``oscillations``: swings laid over the keys (a forearm waving, shoulders shaking): ``part``,
  ``axis`` (``right``, ``up``, ``forward``, ``side``), ``degrees``, ``cycles`` per clip, ``phase``,
  ``window`` [from, to] of the key time; a ``lift`` oscillation bounces the body by ``height`` body
  heights;
- ``intro`` / ``outro``: for a cyclic record, the clip fractions over which it blends in from and out
  to standing;
- ``checks``: facts the played motion must show, read from the motion by the tests.

Phrasings live in ``phrasings.json`` and extra wordings in ``wordings.json`` like every other motion's.

The player (:func:`play`) takes the same :class:`~.labelled.Variation` as the generators: ``speed``
scales the tempo, ``phase`` shifts the start (cycles for a cyclic
record, up to a tenth of the clip otherwise), ``amplitude`` scales the swings and, within 0.9–1.1
(so that a reach still arrives), the key poses' angles, ``facing`` turns the body, ``direction``
flips the swings' start; ``side`` picks the prompted arm or leg.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...character.rig import RigAsset
from ...errors import InputError
from ..clip import MotionClip
from .head import turn_head
from .labelled import Variation
from .limbs import arm_bones, arms_down, bend_torso, body_arms, leg_reach, place_foot, rad
from .pose import BodyPose, bone_tip, bump, dominant_bone, is_sprawled, knee_sign, limb_length, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles, Limb

__all__ = [
    "RECORDS_DIR",
    "PARTS",
    "SLOT_PARTS",
    "LANDMARKS",
    "EASINGS",
    "MotionRecord",
    "load_records",
    "records_for",
    "play",
    "landmark_points",
    "record_generator",
    "arm_joints",
]

RECORDS_DIR = Path(__file__).resolve().parent / "records"

PARTS = frozenset({"root", "legs", "torso", "head", "arms", "arm", "tail", "wings"})
"""The body parts a motion can drive (``"arm"``: the one arm on the prompted side)."""

SLOT_PARTS = {
    "arm": "arm",
    "other_arm": "arms",
    "arms": "arms",
    "legs": "legs",
    "leg": "legs",
    "other_leg": "legs",
    "front_legs": "legs",
    "hind_legs": "legs",
    "front_leg": "legs",
    "hind_leg": "legs",
    "other_front_leg": "legs",
    "other_hind_leg": "legs",
    "torso": "torso",
    "head": "head",
    "root": "root",
    "tail": "tail",
}
"""A key's slot → the part it drives (a record using a slot must name its part)."""

LANDMARKS = (
    "brow",
    "eyes",
    "mouth",
    "chin",
    "ear",
    "top_of_head",
    "back_of_head",
    "chest",
    "belly",
    "hip",
    "overhead",
    "forward",
    "ahead",
    "floor",
)
"""Where a hand can reach, relative to the body as posed (the head's, the chest's, the hips', the
shoulder's frame; ``ahead``: on the body's midline in front of the shoulders, where two hands meet;
``floor``: the ground ahead of the shoulder)."""

EASINGS = {
    "smooth": smoothstep,
    "linear": lambda x: np.clip(x, 0.0, 1.0),
    "snap": lambda x: 1.0 - (1.0 - smoothstep(x)) ** 2,  # quick to go, slow to settle: a strike
    "in": lambda x: np.clip(x, 0.0, 1.0) ** 2,  # slow out, fast in: a fall
}
"""A segment's easing: progress [0,1] → eased progress [0,1]."""

_ARM_SLOTS = ("arm", "other_arm", "arms")
_LEG_SLOTS = ("legs", "front_legs", "hind_legs", "leg", "other_leg", "front_leg", "hind_leg", "other_front_leg", "other_hind_leg")
_NUMERIC_SLOTS = {
    "torso": ("bend", "lean", "twist"),
    "head": ("pitch", "yaw", "roll"),
    "root": ("pitch", "roll", "yaw", "forward", "lift"),
    "tail": ("lift",),
}
_AXES = ("right", "up", "forward", "side")
_MARGIN = 0.03
"""How far off the skin a hand reaching a landmark stays (body heights)."""


@dataclass(frozen=True)
class MotionRecord:
    """One motion as data (see the module docstring for the fields)."""

    label: str
    kinds: tuple[str, ...]
    parts: frozenset[str]
    sided: bool
    cyclic: bool
    keys: tuple[dict[str, Any], ...]
    repeats: float = 1.0
    oscillations: tuple[dict[str, Any], ...] = ()
    intro: float = 0.0
    outro: float = 0.0
    time_symmetric: bool = False
    checks: tuple[dict[str, Any], ...] = ()
    source: str = field(default="", compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "") -> MotionRecord:
        """A record from its JSON object (InputError naming the record and the problem)."""
        where = f"motion record {data.get('label', '?')!r} in {source or 'a record file'}"
        known = {
            "label",
            "kinds",
            "parts",
            "sided",
            "cyclic",
            "keys",
            "repeats",
            "oscillations",
            "intro",
            "outro",
            "time_symmetric",
            "checks",
            "about",
        }
        unknown = set(data) - known
        if unknown:
            raise InputError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        try:
            record = cls(
                label=str(data["label"]),
                kinds=tuple(data["kinds"]),
                parts=frozenset(data["parts"]),
                sided=bool(data.get("sided", False)),
                cyclic=bool(data.get("cyclic", False)),
                keys=tuple(data["keys"]),
                repeats=float(data.get("repeats", 1.0)),
                oscillations=tuple(data.get("oscillations", ())),
                intro=float(data.get("intro", 0.0)),
                outro=float(data.get("outro", 0.0)),
                time_symmetric=bool(data.get("time_symmetric", False)),
                checks=tuple(data.get("checks", ())),
                source=source,
            )
        except KeyError as exc:
            raise InputError(f"{where}: missing field {exc.args[0]!r}") from None
        record.validate(where)
        return record

    def validate(self, where: str) -> None:
        """InputError naming the first inconsistency: an unknown part, slot, landmark, easing or axis,
        a slot whose part the record does not name, keys out of order or outside [0, 1]."""
        if not self.parts <= PARTS:
            raise InputError(f"{where}: unknown part(s) {', '.join(sorted(self.parts - PARTS))}")
        if not self.keys:
            raise InputError(f"{where}: no keys")
        times = [float(k.get("at", -1)) for k in self.keys]
        if any(t < 0 or t > 1 for t in times) or times != sorted(times):
            raise InputError(f"{where}: key times must rise within [0, 1], not {times}")
        for key in self.keys:
            for slot, pose in key.items():
                if slot in ("at", "ease"):
                    continue
                if slot not in SLOT_PARTS:
                    raise InputError(f"{where}: unknown slot {slot!r}")
                if SLOT_PARTS[slot] not in self.parts and not (slot == "arm" and "arms" in self.parts):
                    raise InputError(f"{where}: slot {slot!r} drives {SLOT_PARTS[slot]!r}, not among its parts")
                if slot in _ARM_SLOTS and isinstance(pose, dict) and pose.get("hand") not in (None, *LANDMARKS):
                    raise InputError(f"{where}: unknown landmark {pose['hand']!r}")
            if key.get("ease", "smooth") not in EASINGS:
                raise InputError(f"{where}: unknown easing {key['ease']!r}")
        for osc in self.oscillations:
            if osc.get("part") != "lift" and osc.get("axis") not in _AXES:
                raise InputError(f"{where}: oscillation axis must be one of {_AXES}")


@cache
def load_records() -> tuple[MotionRecord, ...]:
    """Every record of :data:`RECORDS_DIR` (files in name order, records in file order)."""
    out: list[MotionRecord] = []
    for path in sorted(RECORDS_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out += [MotionRecord.from_dict(r, path.name) for r in data["records"]]
    seen: set[tuple[str, str]] = set()
    for record in out:
        for kind in record.kinds:
            if (kind, record.label) in seen:
                raise InputError(f"motion record {record.label!r} for {kind} is defined twice")
            seen.add((kind, record.label))
    return tuple(out)


def records_for(kind: str) -> tuple[MotionRecord, ...]:
    """The records that play on ``kind``."""
    return tuple(r for r in load_records() if kind in r.kinds)


# ---------------------------------------------------------------------------------------------- time


def _key_time(record: MotionRecord, t: np.ndarray, v: Variation) -> np.ndarray:
    """[F] the record's time at each clip time ``t`` [F] (frame k at k / F): one cycle's fraction for
    a cyclic record, else the clip fraction (the last frame at 1) scaled by the speed and delayed by
    up to a tenth of the clip by the phase."""
    if record.cyclic:
        return (record.repeats * v.speed * t + v.phase) % 1.0
    last = t * len(t) / max(len(t) - 1, 1)  # the last frame at the record's end
    return np.clip((last - 0.1 * v.phase) * v.speed, 0.0, 1.0)


def _segments(record: MotionRecord, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index of the key before [F], of the key after [F], eased progress between them [F])."""
    times = np.array([float(k["at"]) for k in record.keys])
    after = np.searchsorted(times, u, side="right")
    before = np.clip(after - 1, 0, len(times) - 1)
    after = np.clip(after, 0, len(times) - 1)
    if record.cyclic:  # past the last key the cycle goes on to the first
        wrap = u >= times[-1]
        after = np.where(wrap, 0, after)
        before = np.where(u < times[0], len(times) - 1, before)
    span = (times[after] - times[before]) % 1.0 if record.cyclic else times[after] - times[before]
    raw = np.where(span > 1e-9, ((u - times[before]) % 1.0 if record.cyclic else u - times[before]) / np.maximum(span, 1e-9), 1.0)
    eased = np.empty_like(raw)
    for k, key in enumerate(record.keys):
        mask = after == k
        eased[mask] = EASINGS[key.get("ease", "smooth")](raw[mask])
    return before, after, eased


def _envelope(record: MotionRecord, t: np.ndarray) -> np.ndarray:
    """[F] the cyclic record's blend from standing (``intro``) and back (``outro``); ones otherwise."""
    e = np.ones_like(t)
    if record.intro > 0:
        e = e * smoothstep(t / record.intro)
    if record.outro > 0:
        e = e * smoothstep((1.0 - t) / record.outro)
    return e


# ----------------------------------------------------------------------------------------- landmarks


def _owned(rig: RigAsset, bones: list[int]) -> np.ndarray:
    return rig.vertices[np.isin(dominant_bone(rig), bones)]


def _head_bone(roles: BoneRoles) -> int | None:
    return roles.head if roles.head is not None else (roles.neck[-1] if roles.neck else None)


def _chest_bone(roles: BoneRoles) -> int:
    return roles.spine[-1] if roles.spine else roles.root


def _rest_landmarks(rig: RigAsset, roles: BoneRoles, side: str) -> dict[str, tuple[np.ndarray, int]]:
    """Rest landmark → (point [3], carrying bone) for the hand on ``side`` (skin margins included)."""
    f = roles.frame
    up, fwd = np.asarray(f.up, float), np.asarray(f.forward, float)
    out_axis = -np.asarray(f.left, float) if side == "right" else np.asarray(f.left, float)
    h = float(f.height)
    m = _MARGIN * h
    points: dict[str, tuple[np.ndarray, int]] = {}
    head = _head_bone(roles)
    if head is not None:
        verts = _owned(rig, [head])
        centre = verts.mean(0) if len(verts) else rig.heads[head] + 0.05 * h * up
        rel = verts - centre if len(verts) else np.zeros((1, 3)) + 0.05 * h
        front = max(float((rel @ fwd).max()), 0.03 * h)
        back = max(float(-(rel @ fwd).min()), 0.03 * h)
        top = max(float((rel @ up).max()), 0.04 * h)
        width = max(float(np.abs(rel @ out_axis).max()), 0.03 * h)
        points.update(
            brow=(centre + 0.4 * top * up + (front + m) * fwd, head),
            eyes=(centre + 0.15 * top * up + (front + m) * fwd, head),
            mouth=(centre - 0.4 * top * up + (front + m) * fwd, head),
            chin=(centre - 0.8 * top * up + (0.7 * front + m) * fwd, head),
            ear=(centre + (width + m) * out_axis, head),
            top_of_head=(centre + (top + m) * up, head),
            back_of_head=(centre + 0.2 * top * up - (back + m) * fwd, head),
        )
    chest_bone = _chest_bone(roles)
    shoulders = [rig.heads[limb.bones[0]] for limb in roles.arms] or [rig.heads[chest_bone]]
    mid = np.mean(shoulders, axis=0)
    torso = _owned(rig, [roles.root, *roles.spine])
    chest = mid - 0.07 * h * up
    if len(torso):
        near = torso[np.abs((torso - chest) @ up) < 0.06 * h]
        near = near if len(near) else torso
        chest = chest + (max(float(((near - chest) @ fwd).max()), 0.0) + m) * fwd
    points["chest"] = (chest, chest_bone)
    belly_bone = roles.spine[0] if roles.spine else roles.root
    root_head = rig.heads[roles.root]
    belly = root_head + 0.25 * (mid - root_head) @ up * up
    if len(torso):
        near = torso[np.abs((torso - belly) @ up) < 0.05 * h]
        near = near if len(near) else torso
        belly = belly + (max(float(((near - belly) @ fwd).max()), 0.0) + m) * fwd
    points["belly"] = (belly, belly_bone)
    leg = roles.limb("legs", side)
    hip = rig.heads[leg.bones[0]] if leg is not None else root_head
    hip_point = hip + 0.04 * h * up
    if len(torso):
        near = torso[np.abs((torso - hip_point) @ up) < 0.06 * h]
        near = near if len(near) else torso
        hip_point = hip_point + (max(float(((near - hip_point) @ out_axis).max()), 0.0) + m) * out_axis
    points["hip"] = (hip_point, roles.root)
    return points


@cache
def _landmark_cache(rig: RigAsset, roles: BoneRoles, side: str) -> dict[str, tuple[np.ndarray, int]]:
    return _rest_landmarks(rig, roles, side)


def _carried(p: BodyPose, point: np.ndarray, bone: int) -> np.ndarray:
    """[F,3] a rest point [3] carried by ``bone`` as posed now."""
    return p.head_position(bone) + p.posed(bone) @ (point - p.rig.heads[bone])


def arm_joints(rig: RigAsset, bones: tuple[int, ...]) -> tuple[int, int, int | None]:
    """(upper arm, forearm, hand) of an arm's bones without its clavicle (:func:`~.limbs.arm_bones`):
    the forearm is the bone whose head lies nearest half way along the chain from the shoulder to the
    hand's head, so twist segments (Rigify's ``upper_arm.001``, ``forearm.001``) ride with the bone
    before them; the hand is the last bone (None for an arm of two bones)."""
    if len(bones) <= 3:
        return bones[0], bones[1], (bones[2] if len(bones) > 2 else None)
    along = np.concatenate([[0.0], np.cumsum([np.linalg.norm(rig.heads[b] - rig.heads[a]) for a, b in zip(bones, bones[1:])])])
    middle = 1 + int(np.argmin(np.abs(along[1:-1] - 0.5 * along[-1])))
    return bones[0], bones[middle], bones[-1]


def _arm_lengths(p: BodyPose, bones: tuple[int, ...]) -> tuple[float, float]:
    """(upper arm, forearm + half the hand) rest lengths of an arm (armature units)."""
    rig = p.rig
    upper, fore, hand = arm_joints(rig, bones)
    l1 = float(np.linalg.norm(rig.heads[fore] - rig.heads[upper]))
    if hand is not None:
        l2 = float(np.linalg.norm(rig.heads[hand] - rig.heads[fore]))
        l2 += 0.5 * float(np.linalg.norm(bone_tip(rig, hand) - rig.heads[hand]))
    else:
        l2 = float(np.linalg.norm(bone_tip(rig, fore) - rig.heads[fore]))
    return l1, l2


def landmark_points(p: BodyPose, limb: Limb, name: str, floor: np.ndarray | None = None) -> np.ndarray:
    """[F,3] where landmark ``name`` (:data:`LANDMARKS`) is for ``limb``'s hand as ``p`` is posed now
    (armature space, before the facing): a head or torso landmark carried by its bone, ``overhead`` and
    ``forward`` at 95 % of the arm's reach from the shoulder (up; ahead at shoulder height, in the
    chest's frame), ``ahead`` on the midline 80 % of the reach in front of the shoulders, ``floor`` on the ground (``floor`` [F]: its height along up) a quarter leg ahead of
    the shoulder."""
    side = limb.side if limb.side in ("left", "right") else "right"
    rest = _landmark_cache(p.rig, p.roles, side)
    if name in rest:
        point, bone = rest[name]
        return _carried(p, point, bone)
    bones = arm_bones(p.rig, limb, p.up)
    shoulder = p.head_position(bones[0])
    reach = 0.95 * sum(_arm_lengths(p, bones))
    chest = p.posed(_chest_bone(p.roles))
    if name == "overhead":
        return shoulder + reach * (chest @ p.up)
    if name == "forward":
        return shoulder + reach * (chest @ p.forward)
    if name == "ahead":  # the shoulders' midpoint, carried by the chest, and 80 % of the reach ahead
        mid = np.mean([p.rig.heads[arm_bones(p.rig, a, p.up)[0]] for a in body_arms(p)] or [p.rig.heads[bones[0]]], axis=0)
        return _carried(p, mid, _chest_bone(p.roles)) + 0.8 * reach * (chest @ p.forward)
    if name == "floor":
        ground = floor if floor is not None else np.full(p.frames, p.roles.frame.ground)
        ahead = shoulder + 0.25 * mean_length(p) * p.forward
        return ahead + np.outer(ground + _MARGIN * p.height - ahead @ p.up, p.up)
    raise InputError(f"unknown landmark {name!r} (known: {', '.join(LANDMARKS)})")


def mean_length(p: BodyPose) -> float:
    """The legs' mean :func:`~.pose.limb_length` (10 % of the height without legs)."""
    return float(np.mean([limb_length(p.rig, p.roles, limb) for limb in p.legs])) if p.legs else 0.1 * p.height


# ------------------------------------------------------------------------------------------- helpers


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def _slerp(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """[F,3] unit directions part ``s`` [F] of the way from ``a`` to ``b`` (unit [F,3]) on the sphere."""
    cos = np.clip((a * b).sum(-1), -1.0, 1.0)
    theta = np.arccos(cos)
    sin = np.sin(theta)
    small = sin < 1e-6
    wa = np.where(small, 1.0 - s, np.sin((1.0 - s) * theta) / np.where(small, 1.0, sin))
    wb = np.where(small, s, np.sin(s * theta) / np.where(small, 1.0, sin))
    return _unit(wa[:, None] * a + wb[:, None] * b)


def _two_bone(shoulder: np.ndarray, target: np.ndarray, l1: float, l2: float, pole: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Analytic two-bone IK: (upper [F,3], lower [F,3]) unit directions from ``shoulder`` [F,3] to
    reach ``target`` [F,3] (pulled onto the reachable shell) with the elbow bent toward ``pole`` [F,3]."""
    to = target - shoulder
    d = np.linalg.norm(to, axis=-1)
    u = _unit(to)
    d = np.clip(d, abs(l1 - l2) + 1e-6 * (l1 + l2), 0.999 * (l1 + l2))
    cos_a = np.clip((l1 * l1 + d * d - l2 * l2) / (2 * l1 * d), -1.0, 1.0)
    sin_a = np.sqrt(1.0 - cos_a**2)
    n = pole - (pole * u).sum(-1, keepdims=True) * u
    fallback = np.cross(u, np.array([0.0, 0.0, 1.0]))
    fallback = np.where(np.linalg.norm(fallback, axis=-1, keepdims=True) > 1e-6, fallback, np.cross(u, [1.0, 0.0, 0.0]))
    n = _unit(np.where(np.linalg.norm(n, axis=-1, keepdims=True) > 1e-6, n, fallback))
    elbow = shoulder + l1 * (cos_a[:, None] * u + sin_a[:, None] * n)
    return _unit(elbow - shoulder), _unit(shoulder + d[:, None] * u - elbow)


def _body_direction(p: BodyPose, limb: Limb, triple, frame: np.ndarray | None = None) -> np.ndarray:
    """[3] or [F,3] a unit [down, out, forward] direction from the limb's side (``frame`` [F,3,3]: the
    rotation carrying the body axes, e.g. the chest as posed)."""
    down, out, fwd = (float(x) for x in triple)
    side = {"left": p.left, "right": p.right}.get(limb.side, p.up)
    d = -down * p.up + out * side + fwd * p.forward
    d = d / max(np.linalg.norm(d), 1e-12)
    return frame @ d if frame is not None else d


def _limbs_for(p: BodyPose, slot: str, side: str) -> list[Limb]:
    """The limbs a slot drives on side ``side`` (the prompted one)."""
    other = "left" if side == "right" else "right"
    roles = p.roles
    if slot in _ARM_SLOTS:
        arms = list(body_arms(p))
        if slot == "arms":
            return arms
        want = side if slot == "arm" else other
        return [a for a in arms if a.side == want] or (arms[:1] if slot == "arm" and len(arms) == 1 else [])
    legs = list(p.legs)
    if slot == "legs":
        return legs
    if slot in ("front_legs", "hind_legs"):
        return [leg for leg in legs if leg.position == slot.split("_")[0]]
    if slot in ("front_leg", "hind_leg", "other_front_leg", "other_hind_leg"):
        position, want = slot.split("_")[-2], other if slot.startswith("other") else side
        return [leg for leg in legs if leg.position == position and leg.side == want]
    want = side if slot == "leg" else other
    if roles.kind == "biped":
        return [leg for leg in legs if leg.side == want]
    return [leg for leg in legs if leg.side == want and leg.position == "hind"]


def _value(pose, name: str, default: float = 0.0) -> float:
    return float(pose.get(name, default)) if isinstance(pose, dict) else default


def _track(record: MotionRecord, slot: str, name: str, before, after, eased, default: float = 0.0) -> np.ndarray:
    """[F] a numeric field of a slot interpolated between the keys (absent: ``default``)."""
    values = np.array([_value(k.get(slot), name, default) for k in record.keys])
    return values[before] + (values[after] - values[before]) * eased


# -------------------------------------------------------------------------------------------- player


def play(
    record: MotionRecord, rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, side: str = "right"
) -> MotionClip:
    """The clip [frames] of ``record`` played on ``rig`` through its ``roles`` (any kind the record
    lists), ``side`` the prompted arm / leg. Order: root, torso, head, tail, legs, arms, swings."""
    if roles.kind not in record.kinds:
        raise InputError(f"motion {record.label!r} has no record for a {roles.kind} character")
    if side not in ("left", "right"):
        raise InputError(f"side must be 'left' or 'right', not {side!r}")
    p = BodyPose(rig, roles, frames, fps)
    a = float(np.clip(v.amplitude, 0.9, 1.1))  # the key poses' angles: a reach must still arrive
    u = _key_time(record, p.t, v)
    before, after, eased = _segments(record, u)
    envelope = _envelope(record, p.t) if record.cyclic else np.ones(frames)
    track = lambda slot, name, default=0.0: _track(record, slot, name, before, after, eased, default) * envelope  # noqa: E731

    # root: tip, roll, turn, travel, lift
    side_axis = p.right if side == "right" else p.left
    pitch, roll, yaw = track("root", "pitch"), track("root", "roll"), track("root", "yaw")
    if np.any(pitch):
        p.rotate(roles.root, p.right, rad(pitch) * a)
    if np.any(roll):
        p.rotate(roles.root, np.cross(p.up, side_axis), rad(roll) * a)
    p.yaw = float(np.cross(p.forward, side_axis) @ p.up) * rad(yaw) * a
    length = mean_length(p)
    p.travel = np.outer(track("root", "forward") * length * a, p.forward)
    p.lift = track("root", "lift") * p.height * a

    # torso and head
    bend, lean, twist = (track("torso", n) for n in ("bend", "lean", "twist"))
    at_hips = float(np.mean([_value(k.get("torso"), "at_hips", 0.0) for k in record.keys if "torso" in k] or [0.0]))
    if np.any(bend):
        bend_torso(p, p.right, -rad(bend) * a, at_hips)
    if np.any(lean):
        bend_torso(p, np.cross(p.up, side_axis), rad(lean) * a)
    if np.any(twist):
        bend_torso(p, np.cross(p.forward, side_axis), rad(twist) * a)
    pitch_h, yaw_h, roll_h = (track("head", n) for n in ("pitch", "yaw", "roll"))
    if np.any(pitch_h):
        turn_head(p, p.right, rad(pitch_h) * a)
    if np.any(yaw_h):
        turn_head(p, np.cross(p.forward, side_axis), rad(yaw_h) * a)
    if np.any(roll_h):
        turn_head(p, np.cross(p.up, side_axis), rad(roll_h) * a)
    if roles.tail and any("tail" in k for k in record.keys):
        lift = track("tail", "lift")
        weights = np.array([1.0 if "tail" in k else 0.0 for k in record.keys])
        weight = (weights[before] + (weights[after] - weights[before]) * eased) * envelope
        direction = -p.forward[None] * np.cos(rad(lift))[:, None] + p.up[None] * np.sin(rad(lift))[:, None]
        for b in roles.tail:
            p.aim(b, roles.tail, direction, weight)
    tipped = bool(np.any(pitch) or np.any(roll))  # the whole body turns: its feet go with it
    _pose_legs(p, record, side, before, after, eased, envelope, a, plant=not tipped)

    # arms: hanging first, then each key's reach, blended on the sphere
    arms_down(p)
    floor = _floor_heights(p)
    for limb in body_arms(p):
        _pose_arm(p, record, limb, side, before, after, eased, envelope, floor)
    _oscillate(p, record, side, u, v, envelope)
    return p.clip(v.facing)


def _floor_heights(p: BodyPose) -> np.ndarray:
    """[F] the lowest foot tip's height along up as posed now (where the clip will put the ground)."""
    tips = []
    for limb in p.legs:
        last = limb.bones[-1]
        tips.append(_carried(p, bone_tip(p.rig, last), last) @ p.up)
    return np.min(tips, axis=0) if tips else np.full(p.frames, p.roles.frame.ground)


def _arm_pose(p: BodyPose, limb: Limb, pose, bones, hang: tuple[np.ndarray, np.ndarray], floor) -> tuple:
    """(upper [F,3], lower [F,3]) directions of an arm for one key's pose (None or "hang": hanging)."""
    if not isinstance(pose, dict):
        return hang
    chest = p.posed(_chest_bone(p.roles))
    if "hand" in pose:
        target = landmark_points(p, limb, pose["hand"], floor)
        offset = pose.get("offset", (0.0, 0.0, 0.0))
        out = {"left": p.left, "right": p.right}.get(limb.side, p.up)
        shift = (float(offset[0]) * p.forward + float(offset[1]) * out + float(offset[2]) * p.up) * p.height
        target = target + (shift if pose["hand"] == "floor" else chest @ shift)  # the floor's offsets along the ground
        pole = _body_direction(p, limb, pose.get("elbow", (1.0, 0.6, -0.3)), chest)
        shoulder = p.head_position(bones[0])
        l1, l2 = _arm_lengths(p, bones)  # from the upper arm's head, over any twist segments
        return _two_bone(shoulder, target, l1, l2, pole)
    upper = _body_direction(p, limb, pose.get("upper", (1.0, 0.15, 0.0)), chest)
    lower = _body_direction(p, limb, pose["fore"], chest) if "fore" in pose else upper
    return upper, lower


def _pose_arm(p: BodyPose, record: MotionRecord, limb: Limb, side: str, before, after, eased, envelope, floor) -> None:
    bones = arm_bones(p.rig, limb, p.up)
    if len(bones) < 2:
        return
    upper_bone, fore_bone, hand_bone = arm_joints(p.rig, bones)
    hang = (_segment(p, upper_bone, fore_bone), _segment(p, fore_bone, hand_bone))
    slots = [s for s in _ARM_SLOTS if limb in _limbs_for(p, s, side)]
    if not any(s in k for k in record.keys for s in slots):
        return
    poses = []
    for key in record.keys:
        pose = next((key[s] for s in slots if s in key), None)
        poses.append(_arm_pose(p, limb, pose, bones, hang, floor))
    rows = np.arange(p.frames)
    upper_a = np.stack([q[0] for q in poses])[before, rows]
    upper_b = np.stack([q[0] for q in poses])[after, rows]
    lower_a = np.stack([q[1] for q in poses])[before, rows]
    lower_b = np.stack([q[1] for q in poses])[after, rows]
    upper = _slerp(hang[0], _slerp(upper_a, upper_b, eased), envelope)
    lower = _slerp(hang[1], _slerp(lower_a, lower_b, eased), envelope)
    p.aim_vector(upper_bone, _segment(p, upper_bone, fore_bone), upper)
    p.aim_vector(fore_bone, _segment(p, fore_bone, hand_bone), lower)
    if hand_bone is not None:
        p.aim(hand_bone, bones, lower)


def _segment(p: BodyPose, start: int, end: int | None) -> np.ndarray:
    """[F,3] the posed unit direction from bone ``start``'s head to bone ``end``'s head (to
    ``start``'s tip when ``end`` is None)."""
    head = p.head_position(start)
    if end is not None:
        return _unit(p.head_position(end) - head)
    return _unit(_carried(p, bone_tip(p.rig, start), start) - head)


def _pose_legs(p: BodyPose, record: MotionRecord, side: str, before, after, eased, envelope, a: float, plant: bool) -> None:
    """Legs, after the torso: feet placed by IK or folded by angles; with ``plant`` (the body not
    tipped over), a leg no key names keeps its foot where it stood by IK too when any foot is placed or
    any hip was carried by the torso (a quadruped's front legs under a bending spine), and every foot
    placed by IK shares one drop of the body, enough for the farthest to reach its place."""
    ik: list[tuple[Limb, np.ndarray, np.ndarray]] = []
    free: list[Limb] = []  # legs no key names, kept standing where they stood
    for limb in p.legs:
        slots = [s for s in _LEG_SLOTS if limb in _limbs_for(p, s, side)]
        if not any(s in k for k in record.keys for s in slots):
            if plant and len(limb.bones) > 1 and not is_sprawled(p.rig, p.roles, limb):
                free.append(limb)
            continue
        # the most specific slot a key names wins
        slots.sort(key=lambda s: s in ("legs", "front_legs", "hind_legs"))

        def pick(key, slots=slots):
            return next((key[s] for s in slots if s in key), None)

        poses = [pick(k) for k in record.keys]

        def field_track(name, poses=poses):
            values = np.array([_value(q, name) for q in poses])
            return (values[before] + (values[after] - values[before]) * eased) * envelope

        mode_ik = any(isinstance(q, dict) and "foot" in q for q in poses)
        length = limb_length(p.rig, p.roles, limb)
        spread = field_track("spread")
        if np.any(spread):
            out = {"left": p.left, "right": p.right}.get(limb.side, p.up)
            p.rotate(limb.bones[0], np.cross(-p.up, out), rad(spread) * a)
        if mode_ik:
            fwd = np.array([float(q["foot"][0]) if isinstance(q, dict) and "foot" in q else 0.0 for q in poses])
            up = np.array([float(q["foot"][1]) if isinstance(q, dict) and "foot" in q else 0.0 for q in poses])
            f = (fwd[before] + (fwd[after] - fwd[before]) * eased) * envelope * length
            h = (up[before] + (up[after] - up[before]) * eased) * envelope * length
            ik.append((limb, f, h))
        else:
            thigh, knee = field_track("thigh"), field_track("knee")
            sign = knee_sign(p.rig, p.roles, limb)
            p.pitch(limb.bones[0], rad(thigh) * a)
            if len(limb.bones) > 1:
                p.pitch(limb.bones[1], sign * rad(knee) * a)
            if len(limb.bones) > 2:
                p.level(limb.bones[2])
    carried = [np.abs(p.head_position(limb.bones[0]) - p.rig.heads[limb.bones[0]]).max() > 1e-6 * p.height for limb in free]
    if not ik and not any(carried):
        return
    ik += [(limb, np.zeros(p.frames), np.zeros(p.frames)) for limb in free]  # every standing foot shares the drop
    drop = np.zeros(p.frames)  # how far every foot comes up (the body down) for the farthest to reach
    for limb, f, h in ik:
        below, full = leg_reach(p, limb)
        carried = p.head_position(limb.bones[0]) - p.rig.heads[limb.bones[0]]
        reach = f - carried @ p.forward
        drop = np.maximum(drop, below + carried @ p.up - h - np.sqrt(np.maximum((0.97 * full) ** 2 - reach**2, 1e-12)))
    for limb, f, h in ik:
        place_foot(p, limb, f, h + drop)
        _keep_aside(p, limb)


def _keep_aside(p: BodyPose, limb: Limb) -> None:
    """Swing a placed leg about its hip so its ankle is back where it stood sideways (the sagittal IK
    of :func:`~.limbs.place_foot` cannot follow a hip the torso carried aside); the foot kept level."""
    bones = limb.bones
    if len(bones) < 3:
        return
    ankle_rest = p.rig.heads[bones[2]]
    hip = p.head_position(bones[0])
    ankle = p.head_position(bones[2])
    error = (ankle_rest - ankle) @ p.left
    if np.abs(error).max() < 1e-3 * p.height:
        return
    current = ankle - hip
    p.aim_vector(bones[0], current, current + np.outer(error, p.left))
    p.level(bones[2])


def _oscillate(p: BodyPose, record: MotionRecord, side: str, u: np.ndarray, v: Variation, envelope: np.ndarray) -> None:
    """Lay the record's swings over the pose (after the keys)."""
    side_axis = p.right if side == "right" else p.left
    axes = {"right": p.right, "up": p.up, "forward": p.forward, "side": np.cross(p.up, side_axis)}
    for osc in record.oscillations:
        window = osc.get("window", (0.0, 1.0))
        ramp = float(osc.get("ramp", 0.08))
        weight = envelope * (bump(u, float(window[0]), float(window[1]), ramp) if not record.cyclic else 1.0)
        w = 2 * np.pi * (float(osc.get("cycles", 1.0)) * v.speed * p.t + float(osc.get("phase", 0.0)) + v.phase)
        wave = np.sin(w) if osc.get("shape", "sine") == "sine" else 0.5 * (1 - np.cos(w))
        part = osc["part"]
        if part == "lift":
            p.lift = p.lift + float(osc["height"]) * p.height * v.amplitude * weight * 0.5 * (1 - np.cos(w))
            continue
        angle = rad(float(osc["degrees"])) * v.amplitude * v.direction * wave * weight
        axis = axes[osc["axis"]]
        if part == "torso":
            bend_torso(p, axis, angle)
        elif part == "head":
            turn_head(p, axis, angle)
        elif part == "root":
            p.rotate(p.roles.root, axis, angle)
        elif part == "tail":
            p.wave_chain(p.roles.tail, axis, angle, w)
        elif part.split(".")[0] in _ARM_SLOTS:
            slot, _, segment = part.partition(".")
            index = {"upper": 0, "fore": 1, "hand": 2}[segment or "upper"]
            for limb in _limbs_for(p, slot, side):
                joints = arm_joints(p.rig, arm_bones(p.rig, limb, p.up))
                if joints[index] is not None:
                    p.rotate(joints[index], _limb_axis(p, limb, osc["axis"], axes), angle)
        elif part.split(".")[0] in _LEG_SLOTS:
            slot, _, segment = part.partition(".")
            index = {"thigh": 0, "shin": 1, "foot": 2}[segment or "thigh"]
            for limb in _limbs_for(p, slot, side):
                if index < len(limb.bones):
                    p.rotate(limb.bones[index], _limb_axis(p, limb, osc["axis"], axes), angle)
        else:
            raise InputError(f"motion record {record.label!r}: unknown oscillation part {part!r}")


def _limb_axis(p: BodyPose, limb: Limb, name: str, axes: dict[str, np.ndarray]) -> np.ndarray:
    """[3] a swing axis for a limb: ``side`` raises it out from its own side, the others as named."""
    if name != "side":
        return axes[name]
    out = {"left": p.left, "right": p.right}.get(limb.side, p.up)
    return np.cross(-p.up, out)


def record_generator(record: MotionRecord):
    """``generate(rig, roles, frames, fps, variation, side="right") -> MotionClip`` for ``record`` (the
    ``side`` parameter only for a sided record, as the sided generators have it)."""
    if record.sided:

        def generate_sided(
            rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation, side: str = "right"
        ) -> MotionClip:
            return play(record, rig, roles, frames, fps, v, side)

        generate_sided.__doc__ = f"The {record.label!r} record played (:func:`play`), ``side`` the prompted arm or leg."
        return generate_sided

    def generate(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
        return play(record, rig, roles, frames, fps, v)

    generate.__doc__ = f"The {record.label!r} record played (:func:`play`)."
    return generate
