"""Motions played from records: every record on several rigs of each kind it names does what its
``checks`` declare, read from the motion itself (hands at the brow, both hands overhead, feet
planted …), with the craft an animator expects (nothing through the floor, no jumps between frames,
starting from rest); a sided record plays on the other side when asked; the records' specs carry
their parts and phrasings like every other motion; bad records are refused with one clear line."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.errors import InputError
from akd_blender.core.motion.library import LIBRARY, role_motion, sample_variations
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.motion.library.records import PARTS, MotionRecord, load_records, play
from tests.core.library_checks import Measured
from tests.core.record_checks import READINGS, check_craft, check_fact
from tests.core.role_fixtures import family_character

FRAMES, FPS = 24, 12.0


@functools.cache
def rigs(kind: str) -> tuple:
    """Three rigs of ``kind``: the procedural one and two family members of other proportions."""
    if kind == "biped":
        b = biped()
        return ((b, find_roles(b)), family_character("biped", 5), family_character("biped", 2))
    q = quadruped()
    return ((q, find_roles(q)), family_character("quadruped", 0), family_character("quadruped", 4))


CASES = [(kind, r.label) for r in load_records() for kind in r.kinds]


def _record(kind: str, label: str) -> MotionRecord:
    return next(r for r in load_records() if r.label == label and kind in r.kinds)


def _measure(kind: str, label: str, index: int, variation: Variation, side: str = "right") -> Measured:
    rig, roles = rigs(kind)[index]
    spec = role_motion(kind, label)
    extra = {"side": side} if spec.sided else {}
    clip = spec.generate(rig, roles, FRAMES, FPS, variation, **extra)
    assert clip.num_frames == FRAMES and np.isfinite(clip.rotations).all() and np.isfinite(clip.locations).all()
    return Measured(rig, roles, clip, variation.facing)


@pytest.mark.parametrize("kind,label", CASES, ids=[f"{k}-{lab}" for k, lab in CASES])
def test_record_shows_its_checks_on_every_rig(kind, label):
    record = _record(kind, label)
    held = sample_variations(label, "heldout", 1, seed=5)[0]
    plays = [(0, Variation(), "right"), (1, held, "right"), (2, Variation(), "left" if record.sided else "right")]
    for index, variation, side in plays:
        m = _measure(kind, label, index, variation, side)
        speed = max([3.0] + [float(c["max_speed"]) for c in record.checks if "max_speed" in c])
        check_craft(m, speed * max(variation.speed, 1.0), eases=not record.cyclic and variation == Variation())
        for check in record.checks:
            if "max_speed" in check:  # read by the craft check, scaled by the variation's speed
                continue
            try:
                check_fact(m, check, side)
            except AssertionError as error:
                raise AssertionError(f"{label} on rig {index} ({side}, {variation}): {check} not shown: {error}") from None


def test_every_record_is_a_spec_with_parts_phrasings_and_checks():
    for kind, label in CASES:
        spec, record = role_motion(kind, label), _record(kind, label)
        assert spec.from_record and spec.parts == record.parts and spec.sided == record.sided
        assert len(spec.phrasings) == 5 and len(spec.heldout_phrasings) == 2
        assert record.checks and all(next(iter(c)) in READINGS for c in record.checks), label
    for specs in LIBRARY.values():
        for spec in specs:
            assert spec.parts and spec.parts <= PARTS, spec.label
    assert role_motion("biped", "walk").parts >= {"root", "legs"} and role_motion("biped", "wave").parts == {"arm", "head"}
    assert role_motion("biped", "wave").sided and not role_motion("biped", "clap").sided


def test_a_sided_record_mirrors():
    label = "salute"
    right = _measure("biped", label, 0, Variation(), "right")
    left = _measure("biped", label, 0, Variation(), "left")
    for m, moving, still in ((right, "right", "left"), (left, "left", "right")):
        travel = {
            s: np.ptp(m.verts[:, m.of(m.roles.limb("arms", s).bones[-1:])].mean(1), axis=0).max() for s in ("left", "right")
        }
        assert travel[moving] > 3 * travel[still], (label, travel)


def test_bad_records_are_refused_with_one_line():
    base = {"label": "x", "kinds": ["biped"], "parts": ["arm"], "keys": [{"at": 0.0}, {"at": 1.0, "arm": {"hand": "brow"}}]}
    MotionRecord.from_dict(base)
    for bad, words in (
        ({**base, "parts": ["wing"]}, "unknown part"),
        ({**base, "parts": ["head"]}, "not among its parts"),
        ({**base, "keys": [{"at": 0.5}, {"at": 0.2}]}, "key times"),
        ({**base, "keys": [{"at": 0.0, "arm": {"hand": "elbow"}}]}, "unknown landmark"),
        ({**base, "keys": [{"at": 0.0, "ease": "bouncy"}]}, "unknown easing"),
        ({**base, "colour": "red"}, "unknown field"),
        ({k: v for k, v in base.items() if k != "keys"}, "missing field"),
    ):
        with pytest.raises(InputError, match=words) as caught:
            MotionRecord.from_dict(bad, "test.json")
        assert "\n" not in str(caught.value)
    record = MotionRecord.from_dict(base)
    rig = quadruped()
    with pytest.raises(InputError, match="no record for a quadruped"):
        play(record, rig, find_roles(rig), 8, 8.0, Variation())
