"""A labelled motion library for the procedural characters (teacher data, judge data, tests).

Every motion is a function of a :class:`Variation` (speed, amplitude, phase, facing, direction)
that returns a :class:`~akd_blender.core.motion.clip.MotionClip` of Blender pose channels for
:func:`~akd_blender.core.character.procedural.biped` or
:func:`~akd_blender.core.character.procedural.quadruped`, so ``Skeleton(rig)(clip)`` poses the
character exactly as Blender would.

Angles are written in the character's rest frame (Z up, facing -Y, X to its left side's opposite:
the biped's left arm points to +X): a bone's rotation "about world axis a" is converted to the bone's
local rotation ``R_rest^T a``, so it acts as if the parent were at rest; parents' rotations then
carry it along. Each motion has several English phrasings; some are held out (never trained on) for
the benchmark, and variations drawn with :func:`sample_variations` for ``split="heldout"`` come
from a seed stream disjoint from ``split="train"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .english import EXTRA_WORDINGS, TEACHER_PHRASINGS
from .labelled_pose import LabelledPose, X, Y, Z
from .pose import normalized_time, smoothstep

__all__ = [
    "Variation",
    "MotionSpec",
    "MOTIONS",
    "LABELS",
    "NONE_LABEL",
    "motion_spec",
    "make_clip",
    "rest_clip",
    "neutral_clip",
    "sample_variations",
    "all_phrasings",
    "prompt_vocabulary",
]

NONE_LABEL = "none"


@dataclass(frozen=True)
class Variation:
    """One variation of a motion.

    Attributes:
        speed: multiplies the motion's base tempo (cycles per clip), ~[0.8, 1.25].
        amplitude: multiplies the motion's angles and travel, ~[0.8, 1.2].
        phase: start phase of cyclic motions, in cycles [0, 1).
        facing: yaw of the character about world Z (radians; 0 = facing -Y).
        direction: +1 or -1 (turn left/right; also flips the wave's start).
        bob: how far the body dips with each step of a role-based gait, in leg lengths (0 = level).
        rock: how far the body rocks nose-up / nose-down once per stride of a role-based gait, degrees.
        body_phase: where in the stride the dip and the rock peak, in cycles [0, 1).
        style: how a role-based gait is played (``"sneak"``, ``"limp"``, ``"march"`` …; the styles
            each kind plays: :data:`~.gait_styles.GAIT_STYLES`); None: the gait as it is.
    """

    speed: float = 1.0
    amplitude: float = 1.0
    phase: float = 0.0
    facing: float = 0.0
    direction: int = 1
    bob: float = 0.0
    rock: float = 0.0
    body_phase: float = 0.0
    style: str | None = None


@dataclass(frozen=True)
class MotionSpec:
    """A labelled motion: its label, which character, a generator, phrasings (train / held out),
    whether it looks the same played backwards (then "reversed" is no hard negative), and extra
    wordings the prompt matcher knows but nothing trains on or benchmarks (:mod:`.wordings`)."""

    label: str
    character: str
    generate: Callable[[RigAsset, int, float, Variation], MotionClip] = field(repr=False)
    phrasings: tuple[str, ...]
    heldout_phrasings: tuple[str, ...]
    time_symmetric: bool = False
    extra_phrasings: tuple[str, ...] = ()


def _deg(x: float) -> float:
    return float(np.deg2rad(x))


# --------------------------------------------------------------------------- biped


def _biped_arms_down(p: LabelledPose, degrees: np.ndarray | float = 75.0) -> None:
    p.rotate("upper_arm.R", Y, -np.deg2rad(degrees))
    p.rotate("upper_arm.L", Y, np.deg2rad(degrees))


def _biped_gait(
    rig, frames, fps, v: Variation, cycles: float, swing: float, knee: float, elbow: float, stride: float, lean: float
):
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (cycles * v.speed * normalized_time(frames) + v.phase)
    _biped_arms_down(p)
    for side in "LR":
        ph = w + (0 if side == "L" else np.pi)
        p.pre_rotate(f"upper_arm.{side}", X, _deg(swing * 0.8) * a * np.sin(ph))
        p.rotate(f"forearm.{side}", X, -_deg(elbow) * a)
        p.rotate(f"thigh.{side}", X, -_deg(swing) * a * np.sin(ph))
        p.rotate(f"shin.{side}", X, _deg(knee) * a * np.clip(np.sin(ph - np.pi / 2), 0, None) + _deg(5))
        p.rotate(f"foot.{side}", X, -_deg(10) * a * np.sin(ph))
    p.rotate(rig.bone_names[0], X, -_deg(lean) * a)
    p.rotate("spine", Z, _deg(6) * a * np.sin(w))
    p.root_delta[:, 1] = -stride * a * v.speed * cycles * normalized_time(frames)
    p.root_delta[:, 2] = -0.03 * a * np.abs(np.cos(w))
    return p.clip(v.facing)


def biped_walk(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    return _biped_gait(rig, frames, fps, v, cycles=1.5, swing=28, knee=40, elbow=15, stride=1.0, lean=2)


def biped_run(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    clip = _biped_gait(rig, frames, fps, v, cycles=2.5, swing=45, knee=85, elbow=85, stride=1.8, lean=14)
    return clip


def biped_jump(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    ph = (v.speed * normalized_time(frames) + v.phase * 0.25) % 1.0
    crouch = np.exp(-(((ph - 0.15) / 0.09) ** 2)) + np.exp(-(((ph - 0.92) / 0.07) ** 2))
    air = np.where((ph > 0.25) & (ph < 0.82), np.sin(np.pi * (ph - 0.25) / 0.57), 0.0)
    _biped_arms_down(p, 75 - 150 * air)
    for side in "LR":
        p.rotate(f"thigh.{side}", X, -_deg(55) * a * crouch - _deg(15) * air)
        p.rotate(f"shin.{side}", X, _deg(95) * a * crouch + _deg(30) * air)
        p.rotate(f"foot.{side}", X, -_deg(35) * a * crouch + _deg(20) * air)
    p.rotate(rig.bone_names[0], X, -_deg(20) * a * crouch)
    p.root_delta[:, 2] = 0.45 * a * air - 0.25 * a * crouch
    return p.clip(v.facing)


def biped_wave(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (2.0 * v.speed * normalized_time(frames) + v.phase)
    rise = smoothstep(normalized_time(frames) / 0.2)
    p.rotate("upper_arm.L", Y, _deg(75))
    p.rotate("upper_arm.R", Y, -_deg(75) + rise * _deg(135))
    p.rotate("forearm.R", Y, rise * (_deg(30) + _deg(35) * a * v.direction * np.sin(w)))
    p.rotate("hand.R", Y, rise * _deg(20) * a * np.sin(w))
    p.rotate("head", Z, -_deg(15) * rise)
    return p.clip(v.facing)


def biped_raise_arms(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    start = 0.15 + 0.2 * v.phase
    up = smoothstep((normalized_time(frames) - start) / (0.45 / v.speed))
    angle = -_deg(75) + up * _deg(75 + 80 * a)
    p.rotate("upper_arm.R", Y, angle)
    p.rotate("upper_arm.L", Y, -angle)
    p.rotate("head", X, _deg(12) * up)
    return p.clip(v.facing)


def biped_turn(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    t = normalized_time(frames)
    yaw = v.direction * _deg(150) * a * smoothstep((t - 0.05) / (0.85 / v.speed))
    steps = 2 * np.pi * (2.0 * v.speed * t + v.phase)
    _biped_arms_down(p)
    for side, off in (("L", 0.0), ("R", np.pi)):
        lift = np.clip(np.sin(steps + off), 0, None)
        p.rotate(f"thigh.{side}", X, -_deg(30) * lift)
        p.rotate(f"shin.{side}", X, _deg(50) * lift)
    return p.clip(v.facing, yaw)


# --------------------------------------------------------------------------- quadruped

_QUAD_LEGS = ("front", "back")


def _quad_gait(
    rig, frames, fps, v: Variation, cycles: float, swing: float, knee: float, stride: float, offsets: dict, spine: float
):
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (cycles * v.speed * normalized_time(frames) + v.phase)
    for leg in _QUAD_LEGS:
        for side in "LR":
            ph = w + 2 * np.pi * offsets[(leg, side)]
            p.rotate(f"{leg}_upper.{side}", X, -_deg(swing) * a * np.sin(ph))
            bend = np.clip(np.sin(ph + np.pi / 2), 0, None)
            p.rotate(f"{leg}_lower.{side}", X, (_deg(knee) if leg == "back" else -_deg(knee)) * a * bend)
    p.rotate("spine", X, _deg(spine) * a * np.sin(2 * w))
    p.rotate("neck", X, _deg(6) * a * np.sin(2 * w))
    p.rotate("tail.1", Z, _deg(12) * a * np.sin(w))
    p.root_delta[:, 1] = -stride * a * v.speed * cycles * normalized_time(frames)
    p.root_delta[:, 2] = -0.03 * a * np.abs(np.sin(2 * w))
    return p.clip(v.facing)


def quad_walk(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    offsets = {("back", "L"): 0.0, ("front", "L"): 0.25, ("back", "R"): 0.5, ("front", "R"): 0.75}
    return _quad_gait(rig, frames, fps, v, cycles=1.5, swing=25, knee=35, stride=0.9, offsets=offsets, spine=2)


def quad_run(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    offsets = {("back", "L"): 0.0, ("back", "R"): 0.08, ("front", "L"): 0.5, ("front", "R"): 0.58}
    return _quad_gait(rig, frames, fps, v, cycles=2.5, swing=45, knee=60, stride=1.7, offsets=offsets, spine=8)


def quad_jump(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    ph = (v.speed * normalized_time(frames) + v.phase * 0.25) % 1.0
    crouch = np.exp(-(((ph - 0.15) / 0.09) ** 2)) + np.exp(-(((ph - 0.92) / 0.07) ** 2))
    air = np.where((ph > 0.25) & (ph < 0.82), np.sin(np.pi * (ph - 0.25) / 0.57), 0.0)
    for side in "LR":
        p.rotate(f"front_upper.{side}", X, -_deg(50) * air + _deg(25) * a * crouch)
        p.rotate(f"front_lower.{side}", X, _deg(70) * air - _deg(40) * a * crouch)
        p.rotate(f"back_upper.{side}", X, _deg(45) * air - _deg(35) * a * crouch)
        p.rotate(f"back_lower.{side}", X, _deg(40) * air + _deg(60) * a * crouch)
    p.rotate("pelvis", X, _deg(15) * a * (air * np.cos(np.pi * (ph - 0.25) / 0.57)))
    p.rotate("tail.1", X, _deg(30) * air)
    p.root_delta[:, 2] = 0.45 * a * air - 0.2 * a * crouch
    p.root_delta[:, 1] = -0.5 * a * air
    return p.clip(v.facing)


def quad_wag_tail(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    w = 2 * np.pi * (2.5 * v.speed * normalized_time(frames) + v.phase)
    p.rotate("tail.1", X, -_deg(35))
    for k, bone in enumerate(("tail.1", "tail.2", "tail.3")):
        p.rotate(bone, Z, v.direction * _deg(35 + 10 * k) * a * np.sin(w - 0.6 * k))
    p.rotate("pelvis", Z, _deg(5) * a * np.sin(w + np.pi))
    p.rotate("head", X, _deg(5) * np.sin(w))
    return p.clip(v.facing)


def quad_sit(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    s = smoothstep((normalized_time(frames) - 0.1 - 0.2 * v.phase) / (0.5 / v.speed)) * a
    tilt = _deg(32) * s
    p.rotate("pelvis", X, -tilt)  # rear goes down, chest up
    for side in "LR":
        p.rotate(f"front_upper.{side}", X, tilt * 1.0)
        p.rotate(f"back_upper.{side}", X, tilt - _deg(60) * s)
        p.rotate(f"back_lower.{side}", X, _deg(110) * s)
        p.rotate(f"back_foot.{side}", X, -_deg(50) * s)
    p.rotate("neck", X, _deg(10) * s)
    p.rotate("tail.1", X, _deg(25) * s)
    p.root_delta[:, 2] = -0.38 * s
    return p.clip(v.facing)


def quad_turn(rig: RigAsset, frames: int, fps: float, v: Variation) -> MotionClip:
    p = LabelledPose(rig, frames, fps)
    a = v.amplitude
    t = normalized_time(frames)
    yaw = v.direction * _deg(150) * a * smoothstep((t - 0.05) / (0.85 / v.speed))
    steps = 2 * np.pi * (2.0 * v.speed * t + v.phase)
    for k, (leg, side) in enumerate((("front", "L"), ("back", "R"), ("front", "R"), ("back", "L"))):
        lift = np.clip(np.sin(steps + np.pi * (k % 2)), 0, None)
        p.rotate(f"{leg}_upper.{side}", X, -_deg(20) * lift)
        p.rotate(f"{leg}_lower.{side}", X, (_deg(40) if leg == "back" else -_deg(40)) * lift)
    p.rotate("neck", Z, v.direction * _deg(15) * smoothstep(t / 0.3))
    return p.clip(v.facing, yaw)


# --------------------------------------------------------------------------- the library

_B, _Q = "biped", "quadruped"


def _spec(label: str, character: str, fn, symmetric: bool = False) -> MotionSpec:
    """The motion ``label`` of ``character`` played by ``fn``, its phrasings and wordings from the data files."""
    phrasings, heldout = TEACHER_PHRASINGS[(character, label)]
    return MotionSpec(label, character, fn, phrasings, heldout, symmetric, EXTRA_WORDINGS.get((character, label), ()))


MOTIONS: dict[str, list[MotionSpec]] = {
    _B: [
        _spec("walk", _B, biped_walk),
        _spec("run", _B, biped_run),
        _spec("jump", _B, biped_jump, symmetric=True),
        _spec("wave", _B, biped_wave, symmetric=True),
        _spec("raise_arms", _B, biped_raise_arms),
        _spec("turn", _B, biped_turn, symmetric=True),
    ],
    _Q: [
        _spec("walk", _Q, quad_walk),
        _spec("run", _Q, quad_run),
        _spec("jump", _Q, quad_jump, symmetric=True),
        _spec("wag_tail", _Q, quad_wag_tail, symmetric=True),
        _spec("sit", _Q, quad_sit),
        _spec("turn", _Q, quad_turn, symmetric=True),
    ],
}

LABELS: tuple[str, ...] = tuple(dict.fromkeys(s.label for specs in MOTIONS.values() for s in specs)) + (NONE_LABEL,)
"""All judge labels: every motion label once, then ``"none"`` (no recognisable motion)."""


def motion_spec(character: str, label: str) -> MotionSpec:
    """The MotionSpec of ``label`` for ``character``; KeyError naming both when absent."""
    for spec in MOTIONS.get(character, []):
        if spec.label == label:
            return spec
    raise KeyError(f"no motion {label!r} for character {character!r}")


def make_clip(
    rig: RigAsset, character: str, label: str, variation: Variation | None = None, frames: int = 16, fps: float = 8.0
) -> MotionClip:
    """The clip [frames] of motion ``label`` for the ``character`` rig (biped / quadruped)."""
    return motion_spec(character, label).generate(rig, frames, fps, variation or Variation())


def rest_clip(rig: RigAsset, frames: int = 16, fps: float = 8.0, facing: float = 0.0) -> MotionClip:
    """The rest pose held for ``frames`` frames, turned by ``facing`` (radians about Z)."""
    return LabelledPose(rig, frames, fps).clip(facing)


def neutral_clip(rig: RigAsset, frames: int = 1, fps: float = 8.0) -> MotionClip:
    """The library's standing pose held for ``frames`` frames: every motion starts from it (the
    biped's arms down at its sides instead of its T-pose rest; the quadruped's rest pose)."""
    p = LabelledPose(rig, frames, fps)
    if "upper_arm.L" in rig.bone_names:
        _biped_arms_down(p)
    return p.clip(0.0)


def sample_variations(n: int, seed: int = 0, split: str = "train") -> list[Variation]:
    """``n`` random variations. ``split`` "train" and "heldout" use disjoint seed streams."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', not {split!r}")
    rng = np.random.default_rng([seed, 0 if split == "train" else 7919])
    out = []
    for _ in range(n):
        out.append(
            Variation(
                speed=float(rng.uniform(0.8, 1.25)),
                amplitude=float(rng.uniform(0.8, 1.2)),
                phase=float(rng.uniform(0, 1)),
                facing=float(rng.uniform(-np.pi / 3, np.pi / 3)),
                direction=int(rng.choice([-1, 1])),
            )
        )
    return out


def all_phrasings(split: str = "train") -> list[str]:
    """Every phrasing of every motion (``"train"``, ``"heldout"``, ``"extra"`` or ``"all"`` of them),
    in library order."""
    if split not in ("train", "heldout", "extra", "all"):
        raise ValueError(f"split must be 'train', 'heldout', 'extra' or 'all', not {split!r}")
    out = []
    for specs in MOTIONS.values():
        for s in specs:
            if split in ("train", "all"):
                out += list(s.phrasings)
            if split in ("heldout", "all"):
                out += list(s.heldout_phrasings)
            if split in ("extra", "all"):
                out += list(s.extra_phrasings)
    return out


def prompt_vocabulary() -> list[tuple[str, str, bool]]:
    """What the embedded teacher's prompt matcher knows: (wording, ``"character/label"``, trained)
    for every training phrasing (trained True) and extra wording (False) of every motion."""
    return [
        (p, f"{s.character}/{s.label}", trained)
        for specs in MOTIONS.values()
        for s in specs
        for trained, wordings in ((True, s.phrasings), (False, s.extra_phrasings))
        for p in wordings
    ]
