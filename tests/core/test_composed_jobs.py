"""The default job reads composed prompts part by part and plays the plan on the rig (start "library"):
what it does is read from the motion itself (travel, airborne spells, which hand rose, length)."""

from __future__ import annotations

import pytest

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.prompt.compose.checks import motion_facts, raised_hand
from akd_blender.core.prompt.compose.plan import PartNotUnderstood
from akd_blender.core.settings import DistillConfig


def _job(rig, prompt: str, **config):
    result = distill(rig, prompt, DistillConfig(device="cpu", **config))
    return result, motion_facts(rig, result.clip, find_roles(rig))


def test_a_sequence_travels_then_sits_where_the_walk_stopped():
    rig = quadruped()
    result, facts = _job(rig, "the hound runs ahead a little way and then sits down on its haunches")
    assert result.extra["start"] == "library" and "→" in result.extra["understood_as"]
    assert result.extra["motion"].split(" → ")[-1] == "quadruped/sit"
    clip, half = result.clip, result.clip.num_frames // 2
    walked = motion_facts(rig, MotionClip(clip.bone_names, clip.fps, 1, clip.rotations[:half], clip.locations[:half]))
    assert facts.travel > 0.3  # heights: the first part travels
    assert walked.travel > 0.8 * facts.travel  # in the first half
    assert facts.root_height[-1] < facts.root_height[0] - 0.03  # and the body ends lower, seated


def test_repetitions_make_as_many_airborne_spells():
    rig = biped()
    _, once = _job(rig, "someone leaps up")
    _, thrice = _job(rig, "someone leaps up three times")
    assert len(once.airborne) == 1 and len(thrice.airborne) == 3


def test_the_side_chooses_the_hand():
    rig = biped()
    _, left = _job(rig, "a girl greets us waving her left hand")
    _, right = _job(rig, "a girl greets us waving her right hand")
    assert raised_hand(left) == "left" and raised_hand(right) == "right"


def test_a_duration_sets_the_length_unless_frames_are_given():
    rig = biped()
    result, _ = _job(rig, "a man strolls for three seconds", fps=24.0)
    assert result.clip.num_frames == 72
    fixed, _ = _job(rig, "a man strolls for three seconds", fps=24.0, frames=30)
    assert fixed.clip.num_frames == 30


def test_a_sequenced_part_that_matches_nothing_is_refused_naming_it():
    with pytest.raises(PartNotUnderstood, match="solves a crossword"):
        _job(biped(), "a man walks over to the desk, then solves a crossword")


def test_one_motion_told_in_clauses_stays_one_motion():
    result, _ = _job(biped(), "a woman hops up and lands")
    assert "→" not in result.extra["understood_as"] and result.extra["motion"] == "biped/jump"


def test_one_motion_told_in_steps_stays_that_motion():
    result, _ = _job(biped(), "he folds forward at the waist, then stands back up")
    assert "→" not in result.extra["understood_as"] and result.extra["motion"] == "biped/bow"


def test_a_motion_named_after_before_or_after_is_played_in_its_order():
    result, facts = _job(biped(), "a woman claps her hands after jogging")
    assert result.extra["motion"] == "biped/run → biped/clap", result.extra["understood_as"]
    assert facts.travel > 0.3  # the jog travels first
    result, _ = _job(biped(), "a man bows before the queen")  # a person, not a motion: one bow
    assert result.extra["motion"] == "biped/bow"


def test_a_direction_that_only_a_turn_takes_makes_the_turn():
    result, facts = _job(quadruped(), "the deer turns towards the left")
    assert result.extra["motion"] == "quadruped/turn", result.extra["understood_as"]
    assert facts.turn_degrees > 45  # to its left: counterclockwise seen from above
