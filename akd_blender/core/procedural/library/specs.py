"""The role-based motion library: which motions each kind of character has, their English phrasings
(training and held-out, kept apart) and their variations.

A :class:`RoleMotionSpec` plays on any rig whose :class:`~akd_blender.core.roles.BoneRoles` are of its
kind: ``spec.generate(rig, roles, frames, fps, variation)``. Labels match the named-bone library's
(:mod:`akd_blender.core.procedural.motions`) where the motion is the same.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InputError
from ...motion import MotionClip
from ...rig import RigAsset
from ..motions import Variation
from . import biped, extra, hexapod, quadruped

if TYPE_CHECKING:
    from ...roles import BoneRoles

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
    phrasings (never trained on), and whether it looks the same played backwards."""

    label: str
    kind: str
    generate: Generator = field(repr=False)
    phrasings: tuple[str, ...]
    heldout_phrasings: tuple[str, ...]
    time_symmetric: bool = False


def _s(kind: str, label: str, fn: Generator, train: list[str], heldout: list[str], symmetric: bool = False) -> RoleMotionSpec:
    return RoleMotionSpec(label, kind, fn, tuple(train), tuple(heldout), symmetric)


_B, _Q, _X, _H = "biped", "quadruped", "bird", "hexapod"

LIBRARY: dict[str, tuple[RoleMotionSpec, ...]] = {
    _B: (
        _s(
            _B,
            "walk",
            biped.walk,
            [
                "a character walks forward",
                "a person walking ahead",
                "someone takes a walk",
                "the humanoid walks at an easy pace",
                "a figure walking forward step by step",
            ],
            ["an individual strolls along calmly", "the two-legged character goes for a walk"],
        ),
        _s(
            _B,
            "run",
            biped.run,
            [
                "a character runs forward",
                "a person running fast",
                "someone sprints ahead",
                "the humanoid breaks into a run",
                "a figure jogging quickly forward",
            ],
            ["an individual races along at full tilt", "the two-legged character dashes off running"],
        ),
        _s(
            _B,
            "jump",
            biped.jump_up,
            [
                "a character jumps up",
                "a person jumping in place",
                "someone leaps into the air",
                "the humanoid hops straight up",
                "a figure springs upward",
            ],
            ["an individual bounds up off the floor", "the two-legged character does a vertical jump"],
            True,
        ),
        _s(
            _B,
            "turn",
            biped.turn,
            [
                "a character turns around",
                "a person turning in place",
                "someone spins around on the spot",
                "the humanoid turns to face the other way",
                "a figure rotating where it stands",
            ],
            ["an individual pivots to look behind", "the two-legged character does an about-face"],
            True,
        ),
        _s(
            _B,
            "sit",
            biped.sit,
            [
                "a character sits down",
                "a person sitting down on the ground",
                "someone takes a seat on the floor",
                "the humanoid sits",
                "a figure lowering itself to sit",
            ],
            ["an individual settles down onto the floor", "the two-legged character plops down to sit"],
        ),
        _s(
            _B,
            "wave",
            biped.wave,
            [
                "a character waves",
                "a person waving hello",
                "someone waves a hand above the head",
                "the humanoid waves its right arm",
                "a figure waving goodbye",
            ],
            ["an individual greets someone with a wave", "the two-legged character signals with a raised hand"],
            True,
        ),
        _s(
            _B,
            "raise_arms",
            biped.raise_arms,
            [
                "a character raises both arms",
                "a person lifting both arms up",
                "someone puts their hands up in the air",
                "the humanoid raises its arms overhead",
                "a figure reaching up with both arms",
            ],
            ["an individual throws both hands skyward", "the two-legged character lifts its arms high"],
        ),
        _s(
            _B,
            "kick",
            biped.kick,
            [
                "a character kicks",
                "a person kicking forward",
                "someone does a front kick",
                "the humanoid kicks with its right leg",
                "a figure kicking a ball",
            ],
            ["an individual strikes out with a foot", "the two-legged character snaps a kick ahead"],
        ),
        _s(
            _B,
            "bow",
            biped.bow,
            [
                "a character bows",
                "a person bowing politely",
                "someone bends forward in a bow",
                "the humanoid takes a bow",
                "a figure bowing to the audience",
            ],
            ["an individual leans down respectfully from the waist", "the two-legged character greets with a deep bow"],
            True,
        ),
        _s(
            _B,
            "crouch",
            biped.crouch,
            [
                "a character crouches down",
                "a person crouching",
                "someone squats low",
                "the humanoid bends its knees and squats",
                "a figure ducking down",
            ],
            ["an individual hunkers down close to the floor", "the two-legged character drops into a squat"],
        ),
        _s(
            _B,
            "clap",
            biped.clap,
            [
                "a character claps",
                "a person clapping hands",
                "someone applauds",
                "the humanoid claps its hands together",
                "a figure clapping in front of its chest",
            ],
            ["an individual gives a round of applause", "the two-legged character brings its palms together repeatedly"],
            True,
        ),
        _s(
            _B,
            "punch",
            biped.punch,
            [
                "a character punches",
                "a person throwing punches",
                "someone boxing the air",
                "the humanoid punches forward",
                "a figure jabbing with both fists",
            ],
            ["an individual shadowboxes", "the two-legged character strikes out with its fists"],
            True,
        ),
    ),
    _Q: (
        _s(
            _Q,
            "walk",
            quadruped.walk,
            [
                "an animal walks forward",
                "a four-legged creature walking",
                "the beast walks ahead",
                "a quadruped walking slowly",
                "an animal taking steps forward",
            ],
            ["a four-footed creature ambles along", "the animal paces forward calmly"],
        ),
        _s(
            _Q,
            "run",
            quadruped.trot,
            [
                "an animal runs forward",
                "a four-legged creature running",
                "the beast trots quickly ahead",
                "a quadruped running",
                "an animal jogging forward",
            ],
            ["a four-footed creature hurries along at a trot", "the animal moves off at a brisk run"],
        ),
        _s(
            _Q,
            "jump",
            quadruped.leap,
            [
                "an animal jumps",
                "a four-legged creature leaping",
                "the beast jumps forward",
                "a quadruped springs into the air",
                "an animal leaping ahead",
            ],
            ["a four-footed creature bounds over an obstacle", "the animal pounces forward"],
            True,
        ),
        _s(
            _Q,
            "turn",
            quadruped.turn,
            [
                "an animal turns around",
                "a four-legged creature turning in place",
                "the beast spins around",
                "a quadruped turning to face the other way",
                "an animal rotating on the spot",
            ],
            ["a four-footed creature wheels about", "the animal pivots where it stands"],
            True,
        ),
        _s(
            _Q,
            "sit",
            quadruped.sit,
            [
                "an animal sits down",
                "a four-legged creature sitting",
                "the beast sits on its haunches",
                "a quadruped sitting down",
                "an animal taking a seat",
            ],
            ["a four-footed creature settles onto its hind legs", "the animal lowers its rump to sit"],
        ),
        _s(
            _Q,
            "wag_tail",
            quadruped.wag_tail,
            [
                "an animal wags its tail",
                "a four-legged creature wagging its tail",
                "the beast swishes its tail",
                "a quadruped wagging happily",
                "an animal swinging its tail from side to side",
            ],
            ["a four-footed creature flicks its tail back and forth", "the animal shakes its tail excitedly"],
            True,
        ),
        _s(
            _Q,
            "lie_down",
            quadruped.lie_down,
            [
                "an animal lies down",
                "a four-legged creature lying down",
                "the beast lies on the ground",
                "a quadruped settling down to rest",
                "an animal lying down on its belly",
            ],
            ["a four-footed creature stretches out on the floor", "the animal flops down to rest"],
        ),
        _s(
            _Q,
            "head_down",
            quadruped.head_down,
            [
                "an animal lowers its head to eat",
                "a four-legged creature grazing",
                "the beast sniffs the ground",
                "a quadruped eating from the ground",
                "an animal putting its head down",
            ],
            ["a four-footed creature noses around in the grass", "the animal bends its neck down to feed"],
        ),
        _s(
            _Q,
            "rear_up",
            quadruped.rear_up,
            [
                "an animal rears up",
                "a four-legged creature rearing on its hind legs",
                "the beast stands up on its back legs",
                "a quadruped rearing up",
                "an animal lifting its front legs off the ground",
            ],
            ["a four-footed creature rises up on its hind legs", "the animal stands tall on two legs for a moment"],
            True,
        ),
        _s(
            _Q,
            "gallop",
            quadruped.gallop,
            [
                "an animal gallops",
                "a four-legged creature galloping fast",
                "the beast gallops ahead",
                "a quadruped at full gallop",
                "an animal galloping forward",
            ],
            ["a four-footed creature charges ahead at a gallop", "the animal bounds along at top speed"],
        ),
    ),
    _X: (
        _s(
            _X,
            "walk",
            extra.walk,
            [
                "a bird walks forward",
                "a bird walking",
                "the bird steps ahead",
                "a feathered creature walking along",
                "a bird strutting forward",
            ],
            ["a fowl wanders forward on foot", "the bird paces along the ground"],
        ),
        _s(
            _X,
            "run",
            extra.run,
            [
                "a bird runs forward",
                "a bird running fast",
                "the bird dashes ahead on foot",
                "a feathered creature running",
                "a bird scurrying forward",
            ],
            ["a fowl sprints along the ground", "the bird hurries away on its legs"],
        ),
        _s(
            _X,
            "jump",
            extra.jump_up,
            [
                "a bird jumps up",
                "a bird jumping in place",
                "the bird leaps into the air",
                "a feathered creature jumping",
                "a bird springing upward",
            ],
            ["a fowl bounces up off the ground", "the bird makes a big jump"],
            True,
        ),
        _s(
            _X,
            "turn",
            extra.turn,
            [
                "a bird turns around",
                "a bird turning in place",
                "the bird spins around",
                "a feathered creature turning to face the other way",
                "a bird rotating on the spot",
            ],
            ["a fowl wheels about where it stands", "the bird swivels around"],
            True,
        ),
        _s(
            _X,
            "sit",
            extra.sit,
            [
                "a bird sits down",
                "a bird settling down",
                "the bird sits on the ground",
                "a feathered creature crouching down to rest",
                "a bird nestling down",
            ],
            ["a fowl hunkers down as if on a nest", "the bird tucks its legs under and rests"],
        ),
        _s(
            _X,
            "flap_wings",
            extra.flap_wings,
            [
                "a bird flaps its wings",
                "a bird flapping",
                "the bird beats its wings",
                "a feathered creature flapping its wings",
                "a bird spreading and flapping its wings",
            ],
            ["a fowl beats its wings up and down", "the bird fans its wings"],
            True,
        ),
        _s(
            _X,
            "peck",
            extra.peck,
            [
                "a bird pecks at the ground",
                "a bird pecking",
                "the bird pecks for food",
                "a feathered creature pecking the ground",
                "a bird jabbing its beak downward",
            ],
            ["a fowl picks at seeds on the floor", "the bird strikes the ground with its beak"],
            True,
        ),
        _s(
            _X,
            "hop",
            extra.hop,
            [
                "a bird hops forward",
                "a bird hopping",
                "the bird hops along",
                "a feathered creature hopping ahead",
                "a bird bouncing forward on both feet",
            ],
            ["a fowl skips along with little jumps", "the bird bounds forward in small hops"],
        ),
    ),
    _H: (
        _s(
            _H,
            "walk",
            hexapod.walk,
            [
                "an insect walks forward",
                "a six-legged creature walking",
                "the bug crawls ahead",
                "a beetle walking along",
                "an insect scuttling forward",
            ],
            ["a six-legged critter creeps across the ground", "the bug marches ahead on its legs"],
        ),
        _s(
            _H,
            "run",
            hexapod.run,
            [
                "an insect runs forward",
                "a six-legged creature running fast",
                "the bug scurries ahead",
                "a beetle rushing along",
                "an insect dashing forward",
            ],
            ["a six-legged critter races across the floor", "the bug skitters away quickly"],
        ),
        _s(
            _H,
            "jump",
            hexapod.jump_up,
            [
                "an insect jumps up",
                "a six-legged creature jumping",
                "the bug leaps into the air",
                "a beetle springing upward",
                "an insect jumping in place",
            ],
            ["a six-legged critter pops up off the ground", "the bug makes a sudden leap"],
            True,
        ),
        _s(
            _H,
            "turn",
            hexapod.turn,
            [
                "an insect turns around",
                "a six-legged creature turning in place",
                "the bug spins around",
                "a beetle turning to face the other way",
                "an insect rotating on the spot",
            ],
            ["a six-legged critter wheels about", "the bug pivots where it stands"],
            True,
        ),
        _s(
            _H,
            "sit",
            hexapod.sit,
            [
                "an insect settles down",
                "a six-legged creature lowering its body",
                "the bug crouches to the ground",
                "a beetle resting its body on the ground",
                "an insect hunkering down",
            ],
            ["a six-legged critter flattens itself against the floor", "the bug sinks down low"],
        ),
        _s(
            _H,
            "hop",
            hexapod.hop,
            [
                "an insect hops forward",
                "a six-legged creature hopping",
                "the bug hops along",
                "a beetle hopping ahead",
                "an insect bouncing forward",
            ],
            ["a six-legged critter skips along in little jumps", "the bug bounds forward in small hops"],
        ),
        _s(
            _H,
            "raise_front_legs",
            hexapod.raise_front_legs,
            [
                "an insect raises its front legs",
                "a six-legged creature rearing up",
                "the bug lifts its front legs in the air",
                "a beetle doing a threat display",
                "an insect waving its front legs",
            ],
            ["a six-legged critter holds its forelegs up menacingly", "the bug rears back with its front legs high"],
            True,
        ),
    ),
}
"""kind → its motions. Every kind has walk, run, jump, turn and sit; bipeds, quadrupeds, birds and
hexapods add their own."""

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
