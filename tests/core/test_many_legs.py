"""Bodies with eight legs (a tarantula, a crab with claws held up) or ten (the crab's claws on the ground) read as the many-legged kind ("hexapod") and
play its library: the walk travels with every foot stepping in two alternating groups, the turn turns,
the jump leaves the floor, raising the front legs raises the front pair alone. Measured on the skinned
mesh of the played clip."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.library import LIBRARY, make_role_clip, sample_variations
from akd_blender.core.motion.library.limbs import alternate_group, side_rank
from tests.core.library_checks import Measured, checks_for
from tests.core.roles_zoo import ZOO

FRAMES, FPS = 24, 12.0
BODIES = ("tarantula", "crab", "spider")
LIFTED = 0.02  # a foot is off the ground when its lowest vertex is this share of the height above it


@functools.cache
def body(name: str):
    rig, _ = ZOO[name]()
    return rig, find_roles(rig)


@functools.cache
def played(name: str, label: str) -> Measured:
    rig, roles = body(name)
    variation = sample_variations(label, "train", 1, seed=0)[0]
    return Measured(rig, roles, make_role_clip(rig, roles, label, variation, FRAMES, FPS), variation.facing)


def foot_lowest(m: Measured) -> np.ndarray:
    """[L,F] the lowest point of each leg's last bone above the ground, legs in ``roles.legs`` order."""
    return np.stack([m.height(m.of(limb.bones[-1:])).min(1) for limb in m.roles.legs])


@pytest.mark.parametrize("name", BODIES)
def test_eight_legs_read_as_the_many_legged_kind_four_a_side(name):
    _, roles = body(name)
    assert roles.kind == "hexapod" and len(roles.legs) == 8
    for side in ("left", "right"):
        legs = [leg for leg in roles.legs if leg.side == side]
        assert [leg.position for leg in legs] == ["front", "middle", "middle", "hind"]
        assert [side_rank(roles, leg) for leg in legs] == [0, 1, 2, 3]


def test_the_alternating_groups_split_each_side_and_mirror_across():
    """Every other leg along a side; a leg's mirror image is in the other group; four legs in each."""
    _, roles = body("tarantula")
    groups = {(leg.side, leg.position, side_rank(roles, leg)): alternate_group(roles, leg) for leg in roles.legs}
    assert [groups[("left", p, r)] for r, p in enumerate(("front", "middle", "middle", "hind"))] == [0, 1, 0, 1]
    assert all(groups[("right", p, r)] != g for (s, p, r), g in groups.items() if s == "left")
    assert sum(groups.values()) == 4


def test_ten_legs_are_five_pairs_in_two_alternating_groups():
    """A crab whose claws rest on the ground: five legs a side, front, three middle, hind; five legs in
    each group."""
    _, roles = body("lobster")
    assert roles.kind == "hexapod" and len(roles.legs) == 10
    left = [leg for leg in roles.legs if leg.side == "left"]
    assert [leg.position for leg in left] == ["front", "middle", "middle", "middle", "hind"]
    assert [alternate_group(roles, leg) for leg in left] == [0, 1, 0, 1, 0]
    assert sum(alternate_group(roles, leg) for leg in roles.legs) == 5


CASES = [(name, spec.label) for name in (*BODIES, "lobster") for spec in LIBRARY["hexapod"] if not spec.from_record]


@pytest.mark.parametrize("name,label", CASES, ids=[f"{n}-{lab}" for n, lab in CASES])
def test_the_many_legged_library_does_what_its_labels_say_on_eight_legs(name, label):
    """The library's own checks (tests/core/library_checks.py): walk and run travel ahead with planted
    feet, turn turns past 90° in place, jump and hop leave the floor, raise_front_legs lifts the front
    feet; nothing sinks through the ground."""
    m = played(name, label)
    assert np.isfinite(m.verts).all()
    assert m.height().min() > -0.03 * m.H
    for check in checks_for("hexapod", label):
        check(m)


@pytest.mark.parametrize("name", ["tarantula", "crab", "lobster"])
@pytest.mark.parametrize("label", ["walk", "run"])
def test_every_foot_steps_and_the_two_groups_take_turns(name, label):
    """Each of the 8 feet leaves the ground at some frame; no frame has a foot of each group near the top
    of its swing (the groups swing in turn), and at every frame some foot stands (the body is carried)."""
    m = played(name, label)
    lowest = foot_lowest(m)
    lifted = lowest > LIFTED * m.H
    assert lifted.any(1).all(), lowest.max(1)
    groups = np.array([alternate_group(m.roles, leg) for leg in m.roles.legs])
    high = lowest > 0.5 * lowest.max(1, keepdims=True)  # each foot near the top of its own swing
    assert not (high[groups == 0].any(0) & high[groups == 1].any(0)).any()
    standing = ~lifted
    assert (standing[groups == 0].any(0) | standing[groups == 1].any(0)).all()


@pytest.mark.parametrize("name", ["tarantula", "crab", "lobster"])
def test_raising_the_front_legs_raises_the_front_pair_alone(name):
    """Both front feet rise above 15 % of the height; the others stay down, the middle ones lifted only
    by the body rearing (under a tenth of the front feet's rise), the hind pair on the ground."""
    m = played(name, "raise_front_legs")
    lowest = foot_lowest(m)
    front = np.array([leg.position == "front" for leg in m.roles.legs])
    hind = np.array([leg.position == "hind" for leg in m.roles.legs])
    assert (lowest[front].max(1) > 0.15 * m.H).all()
    assert lowest[~front].max() < 0.1 * lowest[front].max()
    assert lowest[hind].max() < 0.01 * m.H


@pytest.mark.parametrize("name", ["tarantula", "crab", "lobster"])
def test_the_turn_steps_every_foot_and_the_jump_lifts_them_all(name):
    turn = foot_lowest(played(name, "turn"))
    assert (turn.max(1) > LIFTED * played(name, "turn").H).all()
    jump = played(name, "jump")
    assert foot_lowest(jump).min(0).max() > 0.08 * jump.H  # a frame with every foot in the air
