"""Prompts that play two motions at once, gait styles read from the words, and subjects that never decide
the motion: the plan a prompt is read as and the clip it plays, checked on the motion itself."""

from __future__ import annotations

import numpy as np
import pytest

from akd_blender.core.errors import InputError
from akd_blender.core.prompt.compose import PartNotUnderstood, compose_clip, motion_facts, plan_prompt
from akd_blender.core.prompt.compose.checks import airborne_spells
from akd_blender.core.prompt.compose.sequence import AFTER, AND, WITH, split_clauses
from akd_blender.core.prompt.compose.words import read_style, without_subject
from akd_blender.core.prompt.understanding import content_stems

from .role_fixtures import procedural_characters

FPS = 12.0


@pytest.fixture(scope="module")
def characters():
    return procedural_characters()


def _links(prompt: str) -> list[tuple[str, str]]:
    return [(c.text, c.link) for c in split_clauses(prompt)]


def test_clauses_say_what_plays_at_the_same_time():
    assert _links("a man walks while waving") == [("a man walks", AFTER), ("waving", WITH)]
    assert _links("While waving, the orc walks forward") == [("the orc walks forward", AFTER), ("waving", WITH)]
    assert _links("she walks as she waves her hand") == [("she walks", AFTER), ("she waves her hand", WITH)]
    assert _links("jumps and claps at the same time") == [("jumps", AFTER), ("claps", WITH)]
    assert _links("runs with both arms up") == [("runs", AFTER), ("both arms up", WITH)]
    assert _links("walks forward, waving his right hand") == [("walks forward", AFTER), ("waving his right hand", WITH)]
    assert _links("jumps and claps") == [("jumps", AFTER), ("claps", AND)]
    assert _links("walks forward, then sits down") == [("walks forward", AFTER), ("sits down", AFTER)]
    # idioms are no clause boundaries
    assert _links("walks for a while") == [("walks for a while", AFTER)]
    assert _links("runs as fast as he can") == [("runs as fast as he can", AFTER)]
    assert _links("waves with the left hand") == [("waves with the left hand", AFTER)]


def test_style_words_and_subjects_are_taken_out():
    assert read_style("a man sneaks forward") == ("a man walks forward", "sneak")
    assert read_style("a tipsy guy staggers along") == ("a guy walks along", "stumble")
    assert read_style("a zombie walks") == ("a walks", "shamble")
    assert read_style("a man runs") == ("a man runs", None)
    assert without_subject("the orc walks forward") == "someone walks forward"
    assert without_subject("my little green goblin jumps") == "someone jumps"
    assert without_subject("she waves") == "someone waves"
    assert without_subject("a walks") == "someone walks"
    assert without_subject("a big dog barks", "quadruped") == "an animal barks"
    assert without_subject("walks forward") == "someone walks forward"
    assert without_subject("both arms up") == "both arms up"
    assert without_subject("the sleeping cat wakes up", "quadruped") == "an animal wakes up"
    assert content_stems("someone waving his hands") == content_stems("waves") == {"wav"}


@pytest.mark.parametrize("subject", ["the orc", "an elf", "a goblin", "the alien", "a dinosaur", "my character", "the astronaut"])
def test_who_the_character_is_never_decides_the_motion(subject):
    for verb, label in (("walks forward", "walk"), ("runs", "run"), ("jumps", "jump")):
        plan = plan_prompt(f"{subject} {verb}", "biped")
        assert [p.label for p in plan.parts] == [label], (subject, verb, plan.describe())


def test_plans_play_parts_together_and_say_so():
    plan = plan_prompt("the knight walks while waving his left hand", "biped")
    assert plan.describe() == "walk + wave (left)"
    (walk,) = plan.parts
    assert [t.label for t in walk.together] == ["wave"] and walk.together[0].side == "left"
    # the part that carries the body leads, whichever is said first
    assert plan_prompt("a dog wags its tail while walking", "quadruped").describe() == "walk + wag_tail"
    # both need the legs: one after the other
    assert [p.label for p in plan_prompt("walks forward and sits down", "biped").parts] == ["walk", "sit"]
    assert plan_prompt("a man sneaks forward", "biped").describe() == "walk (sneaking)"
    assert plan_prompt("a zombie walks slowly", "biped").parts[0].style == "shamble"


def test_a_part_played_together_that_is_not_understood_is_refused():
    with pytest.raises(PartNotUnderstood, match="juggles"):
        plan_prompt("a man walks while he juggles flaming torches", "biped")


def test_an_action_missing_from_the_vocabulary_is_refused_not_played_as_its_neighbour():
    with pytest.raises(InputError):
        plan_prompt("a man reads a newspaper", "biped")


def _hands_apart(rig, roles, clip) -> np.ndarray:
    import torch

    from akd_blender.core.character.kinematics import Skeleton

    joints = Skeleton(rig, torch.float64).joint_positions(*clip.pose_channels(torch.float64), space="armature").numpy()
    left, right = (roles.limb("arms", side) for side in ("left", "right"))
    return np.linalg.norm(joints[:, left.bones[-1]] - joints[:, right.bones[-1]], axis=-1) / roles.frame.height


def test_walking_while_waving_travels_and_raises_the_hand(characters):
    rig, roles = characters["biped"]
    walk = motion_facts(rig, compose_clip(rig, roles, plan_prompt("walks forward", "biped"), FPS), roles)
    both = motion_facts(rig, compose_clip(rig, roles, plan_prompt("walks forward while waving", "biped"), FPS), roles)
    assert both.travel == pytest.approx(walk.travel, rel=0.05) and both.travel > 0.5
    right, left = both.hand_height["right"], both.hand_height["left"]
    assert right.max() > 0.9 and left.max() < 0.6  # the right hand above the head, the left one swinging low
    waving = right[len(right) // 2 :]
    assert np.ptp(waving) > 0.01 and walk.lowest.min() > -0.02 and both.lowest.min() > -0.02


def test_jumping_and_clapping_at_once_leaves_the_ground_and_brings_the_hands_together(characters):
    rig, roles = characters["biped"]
    plan = plan_prompt("jumps and claps at the same time", "biped")
    assert plan.describe() == "jump + clap"
    clip = compose_clip(rig, roles, plan, FPS)
    facts = motion_facts(rig, clip, roles)
    assert airborne_spells(facts.lowest)
    apart = _hands_apart(rig, roles, clip)
    jump_alone = compose_clip(rig, roles, plan_prompt("jumps", "biped"), FPS)
    assert apart.min() < 0.5 * _hands_apart(rig, roles, jump_alone).min()


def test_a_motion_participle_said_after_a_clause_without_a_comma_plays_with_it():
    assert _links("an acrobat springs upward clapping twice") == [("an acrobat springs upward", AFTER), ("clapping twice", WITH)]
    assert _links("a puppy trots around barking loudly") == [("a puppy trots around", AFTER), ("barking loudly", WITH)]
    assert _links("a parrot hops sideways flapping its wings") == [
        ("a parrot hops sideways", AFTER),
        ("flapping its wings", WITH),
    ]
    assert _links("the coach strides off waving and cheering") == [
        ("the coach strides off", AFTER),
        ("waving", WITH),
        ("cheering", WITH),
    ]


def test_an_ing_word_that_names_a_thing_or_follows_a_verb_taking_ing_is_no_part_of_its_own():
    for prompt in (
        "an old man shuffles along holding a walking stick",
        "a boy in running shoes jumps",
        "a sleeping puppy wakes up",
        "a barking terrier sits",
        "the athlete keeps running",
        "a hound comes running",
        "she starts dancing",
        "a clown jumps over a skipping rope",
        "an athlete performs jumping jacks",
        "a girl wears running shoes",
    ):
        assert len(split_clauses(prompt)) == 1, (prompt, _links(prompt))


def test_a_trailing_motion_participle_reads_as_both_motions():
    assert plan_prompt("an acrobat springs upward clapping her hands", "biped").describe() == "jump + clap"
    assert plan_prompt("a puppy runs around barking", "quadruped").describe() == "run + bark"


def test_walking_away_or_leaving_reads_as_a_walk():
    assert [p.label for p in plan_prompt("the butler bows, then walks off", "biped").parts] == ["bow", "walk"]
    assert [p.label for p in plan_prompt("a nurse nods, then leaves", "biped").parts] == ["nod", "walk"]
    assert [p.label for p in plan_prompt("a goat sits, then walks away", "quadruped").parts] == ["sit", "walk"]
