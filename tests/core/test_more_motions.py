"""The head motions (look around, nod, shake head), stretch, point, the wet-dog shake and a biped's
fall, get up, crawl and dance of the role motion library: each does what it says on every procedural
kind that has it, read from the motion itself (the head's turn from its vertices, the pointing hand's
place, the feet), and its held-out phrasings are read as it the way the default job reads a prompt."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from akd_blender.core.errors import InputError
from akd_blender.core.motion.library import make_role_clip, role_motion, sample_variations
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.prompt.reading import choose_library_motion
from tests.core.library_checks import (
    CHECKS,
    Measured,
    check_feet_planted,
    check_in_place,
    check_point,
    head_turn,
)
from tests.core.role_fixtures import procedural_characters

FRAMES, FPS = 24, 12.0
NEW = {
    "biped": ("look_around", "nod", "shake_head", "stretch", "point"),
    "quadruped": ("look_around", "nod", "shake_head", "stretch", "shake"),
    "bird": ("look_around", "nod", "shake_head"),
    "hexapod": ("look_around",),
}
CASES = [(kind, label) for kind, labels in NEW.items() for label in labels]
FLOOR = ("fall", "get_up", "crawl", "dance")


@functools.cache
def _characters():
    return procedural_characters()


def measured(kind: str, label: str, variation: Variation, **extra) -> Measured:
    rig, roles = _characters()[kind]
    clip = role_motion(kind, label).generate(rig, roles, FRAMES, FPS, variation, **extra)
    return Measured(rig, roles, clip, variation.facing)


@pytest.mark.parametrize("kind,label", CASES, ids=[f"{k}-{lab}" for k, lab in CASES])
def test_new_motion_does_what_it_says_with_the_feet_planted(kind, label):
    for variation in [Variation(), *sample_variations(label, "heldout", 2, seed=3)]:
        m = measured(kind, label, variation)
        assert np.isfinite(m.verts).all() and m.height().min() > -0.03 * m.H
        check_feet_planted(m)
        check_in_place(m)
        for check in CHECKS[label]:
            check(m)


@pytest.mark.parametrize("label", FLOOR)
def test_floor_motion_does_what_it_says_in_every_variation(label):
    for variation in [Variation(), *sample_variations(label, "heldout", 3, seed=4)]:
        m = measured("biped", label, variation)
        assert np.isfinite(m.verts).all() and m.height().min() > -0.03 * m.H
        assert m.height().min(1).max() < 0.03 * m.H  # something stays on the ground, every frame
        for check in CHECKS[label]:
            check(m)


def test_fall_lies_still_and_get_up_starts_where_a_sit_ends():
    fall = measured("biped", "fall", Variation())
    chest = fall.joints[:, fall.roles.spine[-1]] - fall.joints[:, fall.roles.root]
    assert abs(chest[-1] @ fall.up) < 0.35 * np.linalg.norm(chest[-1])  # the body lies along the ground
    sit = measured("biped", "sit", Variation())
    up = measured("biped", "get_up", Variation())
    head_sit, head_up = (x.height(x.of([x.roles.head])).mean(1) for x in (sit, up))
    assert abs(head_up[0] - head_sit[-1]) < 0.12 * sit.H  # down on the ground at first, as a sit ends


@pytest.mark.parametrize("kind", ["biped", "quadruped", "bird", "hexapod"])
def test_look_around_swings_the_head_both_ways_in_the_order_of_the_direction(kind):
    yaw, _ = head_turn(measured(kind, "look_around", Variation()))
    assert yaw.max() > 40 and yaw.min() < -40, (yaw.min(), yaw.max())
    assert yaw.argmax() < yaw.argmin()  # left first
    yaw, _ = head_turn(measured(kind, "look_around", Variation(direction=-1)))
    assert yaw.argmin() < yaw.argmax()  # right first
    assert np.abs(yaw[[0, -1]]).max() < 5  # ahead again at the ends


@pytest.mark.parametrize("kind", ["biped", "quadruped", "bird"])
def test_nod_dips_the_head_twice_and_shake_head_swings_it_side_to_side(kind):
    yaw, pitch = head_turn(measured(kind, "nod", Variation()))
    dip = pitch[0] - pitch
    down = dip > 0.5 * dip.max()
    assert dip.max() > 15 and int(down[0]) + int(np.sum(down[1:] & ~down[:-1])) == 2, dip
    assert np.abs(yaw).max() < 2
    yaw, pitch = head_turn(measured(kind, "shake_head", Variation()))
    crossings = np.sum(np.diff(np.sign(yaw[np.abs(yaw) > 8])) != 0)
    assert crossings >= 4 and np.abs(yaw).max() > 20, yaw
    assert np.ptp(pitch) < 5


def test_amplitude_scales_the_head_turn_and_speed_shortens_it():
    small, _ = head_turn(measured("biped", "shake_head", Variation(amplitude=0.8)))
    big, _ = head_turn(measured("biped", "shake_head", Variation(amplitude=1.15)))
    assert np.abs(big).max() > 1.3 * np.abs(small).max()
    slow, _ = head_turn(measured("quadruped", "look_around", Variation(speed=0.8)))
    fast, _ = head_turn(measured("quadruped", "look_around", Variation(speed=1.25)))
    assert np.argmin(fast) < np.argmin(slow)


@pytest.mark.parametrize("side", ["right", "left"])
def test_point_holds_the_chosen_arm_straight_ahead_at_shoulder_height(side):
    m = measured("biped", "point", Variation(facing=0.5), side=side)
    check_point(m, side)
    check_feet_planted(m)
    rig, roles = _characters()["biped"]
    arm = roles.limb("arms", side)
    joints = m.joints[-1, list(arm.bones)]
    reach = joints[-1] - joints[0]
    assert reach @ m.forward > 0.95 * np.linalg.norm(reach)  # the arm in one straight line, forward


def test_stretch_reaches_up_for_a_biped_and_bows_a_quadruped():
    biped = measured("biped", "stretch", Variation())
    hands = biped.of([b for limb in biped.roles.arms for b in limb.bones[-1:]])
    assert biped.height(hands).max(1).max() > biped.rest_height(hands).max() + 0.25 * biped.H
    dog = measured("quadruped", "stretch", Variation())
    head = dog.of([dog.roles.head])
    assert dog.height(head).min() > 0.5 * dog.rest_height(head).min()  # the head stays up (not head_down)


def test_shake_rolls_the_head_and_swings_the_tail_many_times():
    m = measured("quadruped", "shake", Variation())
    tip = m.of(m.roles.tail[-1:])
    aside = m.verts[:, tip].mean(1) @ m.left
    aside = aside - np.median(aside)
    assert np.sum(np.diff(np.sign(aside[np.abs(aside) > 0.2 * np.abs(aside).max()])) != 0) >= 4


def test_kinds_without_the_motion_name_it():
    with pytest.raises(InputError, match="no motion 'nod' for a hexapod"):
        role_motion("hexapod", "nod")
    with pytest.raises(InputError, match="no motion 'point' for a quadruped"):
        role_motion("quadruped", "point")


def test_new_motions_are_deterministic():
    rig, roles = _characters()["bird"]
    v = sample_variations("nod", "train", 1, seed=5)[0]
    a = make_role_clip(rig, roles, "nod", v, FRAMES, FPS)
    b = make_role_clip(rig, roles, "nod", dataclasses.replace(v), FRAMES, FPS)
    np.testing.assert_array_equal(a.rotations, b.rotations)
    np.testing.assert_array_equal(a.locations, b.locations)


HELDOUT = [
    (kind, label, text)
    for kind, label in [*CASES, *(("biped", f) for f in FLOOR)]
    for text in role_motion(kind, label).heldout_phrasings
]


@pytest.mark.parametrize("kind,label,text", HELDOUT, ids=[f"{k}-{lab}-{i % 2}" for i, (k, lab, _) in enumerate(HELDOUT)])
def test_heldout_phrasings_are_read_as_the_motion(kind, label, text):
    choice, reading = choose_library_motion(text, kind)
    assert choice is not None and choice.label == label, (text, reading.motion if reading else None)


def test_composed_prompts_name_the_side_and_count_the_nods():
    choice, _ = choose_library_motion("a man points with his left hand", "biped")
    assert choice is not None and choice.label == "point" and choice.plan is not None
    assert choice.plan.parts[0].side == "left"
    choice, _ = choose_library_motion("a horse nods its head twice", "quadruped")
    assert choice is not None and choice.label == "nod"
