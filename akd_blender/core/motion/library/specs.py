"""The role-based motion library: which motions each kind of character has, their English phrasings
(training and held-out, kept apart) and their variations.

A :class:`RoleMotionSpec` plays on any rig whose :class:`~akd_blender.core.character.roles.BoneRoles` are of its
kind: ``spec.generate(rig, roles, frames, fps, variation)`` (a sided one takes ``side="left"`` too).
Labels match the named-bone library's (:mod:`akd_blender.core.motion.library.labelled`) where the
motion is the same. Gaits and the motions a record cannot say are generators (:data:`_MOTIONS`); the
rest are records (:mod:`.records`) played by one player, registered after them.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ...errors import InputError
from ..clip import MotionClip
from . import biped, biped_floor, bird, head, hexapod, quadruped, serpent
from .english import PHRASINGS
from .labelled import Variation
from .records import load_records, record_generator

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = [
    "RoleMotionSpec",
    "LIBRARY",
    "KINDS",
    "role_motion",
    "motions_for",
    "make_role_clip",
    "sample_variations",
    "library_phrasings",
]

Generator = Callable[[RigAsset, "BoneRoles", int, float, Variation], MotionClip]


@dataclass(frozen=True)
class RoleMotionSpec:
    """A labelled motion for one kind of character: its generator, 5 training phrasings, 2 held-out
    phrasings (never trained on), whether it looks the same played backwards, the body parts it
    drives (:data:`~.records.PARTS`: "arm" is the one arm on the prompted side), whether "with the
    left hand" applies (``sided``: the generator takes ``side``) and whether it came from a record."""

    label: str
    kind: str
    generate: Generator = field(repr=False)
    phrasings: tuple[str, ...]
    heldout_phrasings: tuple[str, ...]
    time_symmetric: bool = False
    parts: frozenset[str] = frozenset()
    sided: bool = False
    from_record: bool = False


_MOTIONS: tuple[tuple[str, str, Generator, bool], ...] = (
    # kind, label, generator, time-symmetric
    ("biped", "walk", biped.walk, False),
    ("biped", "run", biped.run, False),
    ("biped", "jump", biped.jump_up, True),
    ("biped", "turn", biped.turn, True),
    ("biped", "sit", biped.sit, False),
    ("biped", "wave", biped.wave, True),
    ("biped", "raise_arms", biped.raise_arms, False),
    ("biped", "kick", biped.kick, False),
    ("biped", "bow", biped.bow, True),
    ("biped", "crouch", biped.crouch, False),
    ("biped", "clap", biped.clap, True),
    ("biped", "punch", biped.punch, True),
    ("quadruped", "walk", quadruped.walk, False),
    ("quadruped", "run", quadruped.trot, False),
    ("quadruped", "jump", quadruped.leap, True),
    ("quadruped", "turn", quadruped.turn, True),
    ("quadruped", "sit", quadruped.sit, False),
    ("quadruped", "wag_tail", quadruped.wag_tail, True),
    ("quadruped", "lie_down", quadruped.lie_down, False),
    ("quadruped", "head_down", quadruped.head_down, False),
    ("quadruped", "rear_up", quadruped.rear_up, True),
    ("quadruped", "gallop", quadruped.gallop, False),
    ("bird", "walk", bird.walk, False),
    ("bird", "run", bird.run, False),
    ("bird", "jump", bird.jump_up, True),
    ("bird", "turn", bird.turn, True),
    ("bird", "sit", bird.sit, False),
    ("bird", "flap_wings", bird.flap_wings, True),
    ("bird", "peck", bird.peck, True),
    ("bird", "hop", bird.hop, False),
    ("hexapod", "walk", hexapod.walk, False),
    ("hexapod", "run", hexapod.run, False),
    ("hexapod", "jump", hexapod.jump_up, True),
    ("hexapod", "turn", hexapod.turn, True),
    ("hexapod", "sit", hexapod.sit, False),
    ("hexapod", "hop", hexapod.hop, False),
    ("hexapod", "raise_front_legs", hexapod.raise_front_legs, True),
    # head motions and the later body motions, after each kind's first ones
    ("biped", "look_around", head.look_around, True),
    ("biped", "nod", head.nod, True),
    ("biped", "shake_head", head.shake_head, True),
    ("biped", "stretch", biped.stretch, True),
    ("biped", "point", biped.point, False),
    ("quadruped", "look_around", head.look_around, True),
    ("quadruped", "nod", head.nod, True),
    ("quadruped", "shake_head", head.shake_head, True),
    ("quadruped", "stretch", quadruped.stretch, True),
    ("quadruped", "shake", quadruped.shake, True),
    ("bird", "look_around", head.look_around, True),
    ("bird", "nod", head.nod, True),
    ("bird", "shake_head", head.shake_head, True),
    ("hexapod", "look_around", head.look_around, True),
    ("biped", "fall", biped_floor.fall, False),
    ("biped", "get_up", biped_floor.get_up, False),
    ("biped", "crawl", biped_floor.crawl, False),
    ("biped", "dance", biped_floor.dance, True),
    ("serpent", "walk", serpent.slither, False),
    ("serpent", "run", serpent.dash, False),
    ("serpent", "turn", serpent.turn, True),
    ("serpent", "rear_up", serpent.rear_up, True),
    ("serpent", "look_around", head.look_around, True),
    ("serpent", "nod", head.nod, True),
    ("serpent", "shake_head", head.shake_head, True),
    ("bird", "take_off", bird.take_off, False),
    ("bird", "land", bird.land, False),
    ("bird", "glide", bird.glide, False),
)


_GAIT = frozenset({"root", "legs", "torso", "arms", "tail"})
_WHOLE = frozenset({"root", "legs", "torso", "arms", "head", "tail"})
_GENERATOR_PARTS: dict[str, frozenset[str]] = {
    "walk": _GAIT,
    "run": _GAIT,
    "gallop": _GAIT,
    "hop": _GAIT,
    "jump": _GAIT,
    "turn": frozenset({"root", "legs", "arms", "head", "tail"}),
    "sit": frozenset({"root", "legs", "torso", "arms", "tail"}),
    "wave": frozenset({"arm", "head"}),
    "point": frozenset({"arm", "head"}),
    "raise_arms": frozenset({"arms", "head"}),
    "kick": frozenset({"legs", "torso", "arms"}),
    "bow": frozenset({"torso", "head", "arms"}),
    "crouch": frozenset({"root", "legs", "torso", "arms"}),
    "clap": frozenset({"arms"}),
    "punch": frozenset({"arms", "torso"}),
    "stretch": frozenset({"root", "legs", "torso", "arms", "head"}),
    "look_around": frozenset({"head", "torso"}),
    "nod": frozenset({"head"}),
    "shake_head": frozenset({"head"}),
    "wag_tail": frozenset({"tail"}),
    "lie_down": frozenset({"root", "legs", "head", "tail"}),
    "head_down": frozenset({"root", "legs", "torso", "head"}),
    "rear_up": frozenset({"root", "legs", "torso", "head", "tail"}),
    "shake": frozenset({"root", "torso", "head", "tail"}),
    "flap_wings": frozenset({"wings"}),
    "take_off": frozenset({"root", "legs", "wings"}),
    "land": frozenset({"root", "legs", "wings"}),
    "glide": frozenset({"root", "legs", "wings"}),
    "peck": frozenset({"head"}),
    "raise_front_legs": frozenset({"root", "legs"}),
    "fall": _WHOLE,
    "get_up": _WHOLE,
    "crawl": _WHOLE,
    "dance": _WHOLE,
}
"""The body parts each generator drives (a serpent's motions drive the whole body: :data:`_SERPENT_PARTS`)."""

_SERPENT_PARTS = frozenset({"root", "torso", "head", "tail"})

_SIDED_GENERATORS = frozenset({"wave", "kick", "punch", "point"})
"""Generators that take ``side`` ("with the left hand")."""


def _generator_parts(kind: str, label: str) -> frozenset[str]:
    if kind == "serpent" and label not in ("look_around", "nod", "shake_head"):
        return _SERPENT_PARTS
    return _GENERATOR_PARTS[label]


def _library() -> dict[str, tuple[RoleMotionSpec, ...]]:
    out: dict[str, list[RoleMotionSpec]] = {}
    for kind, label, generate, symmetric in _MOTIONS:
        train, heldout = PHRASINGS[(kind, label)]
        parts, sided = _generator_parts(kind, label), label in _SIDED_GENERATORS
        out.setdefault(kind, []).append(RoleMotionSpec(label, kind, generate, train, heldout, symmetric, parts, sided))
    for record in load_records():
        for kind in record.kinds:
            if any(spec.label == record.label for spec in out.get(kind, ())):
                raise InputError(f"motion {record.label!r} for {kind} is both a generator and a record")
            if (kind, record.label) not in PHRASINGS:
                raise InputError(f"motion record {record.label!r} for {kind} has no phrasings in phrasings.json")
            train, heldout = PHRASINGS[(kind, record.label)]
            spec = RoleMotionSpec(
                record.label,
                kind,
                record_generator(record),
                train,
                heldout,
                record.time_symmetric,
                record.parts,
                record.sided,
                True,
            )
            out.setdefault(kind, []).append(spec)
    return {kind: tuple(specs) for kind, specs in out.items()}


LIBRARY: dict[str, tuple[RoleMotionSpec, ...]] = _library()
"""kind → its motions. Every kind has walk, run and turn (a serpent's walk and run slither or swim);
every kind with legs jumps and sits; each kind adds its own."""

KINDS: tuple[str, ...] = tuple(LIBRARY)


def motions_for(kind: str) -> tuple[RoleMotionSpec, ...]:
    """The motions of a kind of character (InputError naming it when the library has none)."""
    if kind not in LIBRARY:
        raise InputError(f"the motion library has no motions for a {kind!r} character (known: {', '.join(KINDS)})")
    return LIBRARY[kind]


def role_motion(kind: str, label: str) -> RoleMotionSpec:
    """The spec of ``label`` for ``kind`` (InputError naming both when absent)."""
    for spec in motions_for(kind):
        if spec.label == label:
            return spec
    known = ", ".join(s.label for s in LIBRARY[kind])
    raise InputError(f"no motion {label!r} for a {kind} character (known: {known})")


def make_role_clip(
    rig: RigAsset, roles: BoneRoles, label: str, variation: Variation | None = None, frames: int = 16, fps: float = 8.0
) -> MotionClip:
    """The clip [frames] of motion ``label`` played on ``rig`` through its ``roles`` (kind from the roles)."""
    return role_motion(roles.kind, label).generate(rig, roles, frames, fps, variation or Variation())


def sample_variations(label: str, split: str = "train", n: int = 1, seed: int = 0) -> list[Variation]:
    """``n`` random variations of motion ``label`` (speed 0.8–1.25, amplitude 0.8–1.2, phase, facing
    within ±60°, direction ±1). ``split`` "train" and "heldout" draw from disjoint seed streams, and
    each label has its own stream."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', not {split!r}")
    rng = np.random.default_rng([seed, zlib.crc32(label.encode()), 1 if split == "train" else 2])
    return [
        Variation(
            speed=float(rng.uniform(0.8, 1.25)),
            amplitude=float(rng.uniform(0.8, 1.2)),
            phase=float(rng.uniform(0, 1)),
            facing=float(rng.uniform(-np.pi / 3, np.pi / 3)),
            direction=int(rng.choice([-1, 1])),
        )
        for _ in range(n)
    ]


def library_phrasings(split: str = "train") -> list[tuple[str, str, str]]:
    """(phrasing, kind, label) for every ``"train"`` or ``"heldout"`` phrasing, library order."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', not {split!r}")
    return [
        (text, spec.kind, spec.label)
        for specs in LIBRARY.values()
        for spec in specs
        for text in (spec.phrasings if split == "train" else spec.heldout_phrasings)
    ]
