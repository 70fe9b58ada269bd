"""A character read as kind "other" has no library motions: a prompt asking it for a motion its body lacks
stops at once, in one line naming what was read and what the motion needs, before any model is loaded or
any video drawn (it used to fall back to drawing a video and fitting it, minutes that moved nothing)."""

from __future__ import annotations

import pytest

from akd_blender.core.character.roles import find_roles
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.distillation.unplayable import CannotPlay, body_summary, needs_text, refuse_unplayable
from akd_blender.core.errors import InputError
from akd_blender.core.settings import DistillConfig
from tests.core.roles_zoo import bust, spider

CPU = DistillConfig(device="cpu")


@pytest.fixture(scope="module")
def torso():
    return bust()[0]


def test_a_bust_is_kind_other_with_two_arms_and_no_legs(torso):
    roles = find_roles(torso)
    assert roles.kind == "other"
    assert body_summary(roles) == "kind other: 2 arms, no legs, a head"


def test_walks_forward_on_a_body_without_legs_stops_in_one_line(torso):
    with pytest.raises(CannotPlay) as caught:
        distill(torso, "a robot walks forward", CPU)
    message = str(caught.value)
    assert isinstance(caught.value, InputError) and "\n" not in message
    assert message.startswith("kind other: 2 arms, no legs, a head: ")
    assert "/walk" in message and "needs 2, 4, 6 or more legs, or a legless body" in message and "nothing was drawn" in message


def test_a_motion_no_kind_knows_stops_too_with_the_embedded_teacher(torso):
    with pytest.raises(CannotPlay, match="matches no known motion"):
        distill(torso, "plays the violin", CPU)


def test_a_wing_motion_on_a_body_without_wings_needs_wings(torso):
    with pytest.raises(CannotPlay) as caught:
        distill(torso, "a robot flaps its wings", CPU)
    message = str(caught.value)
    assert message.startswith("kind other: 2 arms, no legs, a head: ") and "needs 2 legs and 2 wings" in message


def test_eight_legs_are_the_many_legged_kind_and_are_not_refused():
    """A spider's eight legs read as the many-legged kind, which has motions (tests/core/test_many_legs.py)."""
    roles = find_roles(spider()[0])
    assert body_summary(roles) == "kind hexapod: 8 legs, a head"
    refuse_unplayable("a spider flaps its wings", roles, refuse_unknown=True)  # raises nothing


def test_needs_text_names_leg_counts_once():
    assert needs_text(["biped"]) == "2 legs"
    assert needs_text(["bird"]) == "2 legs and 2 wings"
    assert needs_text(["biped", "quadruped", "bird"]) == "2 or 4 legs"
    assert needs_text(["hexapod"]) == "6 or more legs"  # any even number from 6: spiders, crabs
    assert needs_text(["biped", "hexapod"]) == "2, 6 or more legs"
