"""Composed prompts: the plan a prompt is read as, and the clip it plays, checked on the motion itself
(travel, airborne spells, turn angle, speed, which hand rose, length) on procedural characters."""

from __future__ import annotations

import numpy as np
import pytest

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library import make_role_clip
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.motion.metrics import main_root, motion_curves, motion_metrics
from akd_blender.core.prompt.compose import PartNotUnderstood, plan_prompt
from akd_blender.core.prompt.compose.checks import airborne_spells, motion_facts, raised_hand
from akd_blender.core.prompt.compose.clip import compose_clip, piece_frames, schedule
from akd_blender.core.prompt.compose.sequence import split_parts
from akd_blender.core.prompt.compose.words import read_modifiers, words

from .role_fixtures import procedural_characters

FPS = 24.0


@pytest.fixture(scope="module")
def characters():
    return procedural_characters()


def _play(characters, kind: str, prompt: str, fps: float = FPS, frames: int | None = None):
    rig, roles = characters[kind]
    plan = plan_prompt(prompt, kind)
    clip = compose_clip(rig, roles, plan, fps, frames)
    return rig, roles, plan, clip


def _part_spans(plan, fps: float, frames: int | None = None) -> list[tuple[int, int]]:
    """(first, end) frames of each part of the plan in its composed clip."""
    pieces = schedule(plan)
    ends = np.cumsum(piece_frames(pieces, fps, frames))
    starts = np.concatenate([[0], ends[:-1]])
    spans: dict[int, list[int]] = {}
    for piece, a, b in zip(pieces, starts, ends):
        spans.setdefault(piece.part, [int(a), int(b)])[1] = int(b)
    return [tuple(spans[k]) for k in range(len(plan.parts))]


def _clip_slice(clip: MotionClip, a: int, b: int) -> MotionClip:
    return MotionClip(clip.bone_names, clip.fps, 1, clip.rotations[a:b], clip.locations[a:b])


# ----------------------------------------------------------------------------- reading the prompt


def test_sequence_words_cut_the_prompt_in_the_order_things_happen():
    assert split_parts("It strolls ahead, and then it takes a seat") == ["it strolls ahead", "it takes a seat"]
    assert split_parts("sits down after walking for a while") == ["walking for a while", "sits down"]
    assert split_parts("Before it sits, it paces around; after that it waves") == ["it paces around", "it sits", "it waves"]
    assert split_parts("spins, followed by a jump. Lastly a bow!") == ["spins", "a jump", "a bow"]
    assert split_parts("walks for one and a half seconds") == ["walks for one and a half seconds"]
    assert split_parts("Runs for 2.5 s. Then jumps up and down") == ["runs for 2.5 s", "jumps up and down"]


def test_modifier_words_are_read_from_the_data_file_and_taken_out():
    core, mods = read_modifiers("the robot marches very slowly to the left for 3 s")
    assert core == "the robot marches"
    assert mods.speed == pytest.approx(words()["speed_words"]["slowly"] ** words()["intensifiers"]["very"])
    assert (mods.direction, mods.duration) == ("left", 3.0)
    core, mods = read_modifiers("kicks with her left foot three times")
    assert (core, mods.side, mods.repetitions) == ("kicks foot", "left", 3)
    core, mods = read_modifiers("a tiny hop")
    assert core == "a hop" and mods.amplitude == words()["amplitude_words"]["tiny"]


def test_plan_reads_each_part_and_describes_it():
    plan = plan_prompt("The man walks slowly, then he sits down", "biped")
    assert [p.label for p in plan.parts] == ["walk", "sit"]
    assert plan.describe() == "walk (slow) → sit"
    assert plan.parts[0].speed < 1 and plan.parts[1].speed == 1
    low = {p.label: p.amplitude for p in plan_prompt("a low jump, then a low crouch", "biped").parts}
    assert low["jump"] < 1 < low["crouch"]  # "low": a small jump, a deep crouch (words.json amplitude_by_motion)
    plan = plan_prompt("a pigeon pecks at the ground twice and then hops", "bird")
    assert [(p.label, p.repetitions) for p in plan.parts] == [("peck", 2), ("hop", 1)]
    plan = plan_prompt("she punches with her left fist, then kicks again", "biped")
    assert [(p.label, p.side) for p in plan.parts] == [("punch", "left"), ("kick", None)]


def test_stopping_holds_the_pose_the_motion_before_ended_in(characters):
    rig, roles, plan, clip = _play(characters, "biped", "she crouches and then stays like that for 3 seconds")
    assert [p.label for p in plan.parts] == ["crouch", "hold"] and plan.parts[1].duration == 3.0
    assert clip.num_frames == round((words()["natural_seconds"] + 3.0) * FPS)
    held = clip.rotations[-round(3.0 * FPS) :]
    np.testing.assert_allclose(held, np.broadcast_to(held[:1], held.shape))
    assert plan_prompt("raises her left arm", "biped").parts[0].label == "raise_arms"  # the limb noun is kept


def test_an_unknown_part_is_refused_naming_that_part():
    with pytest.raises(PartNotUnderstood) as caught:
        plan_prompt("the knight walks forward, then juggles three flaming torches", "biped")
    assert "juggles three flaming torches" in str(caught.value)
    assert caught.value.index == 1 and caught.value.part == "juggles three flaming torches"
    assert isinstance(caught.value, InputError) and "\n" not in str(caught.value)
    with pytest.raises(InputError, match="names no motion"):
        plan_prompt("slowly, twice", "biped")


# ----------------------------------------------------------------------------- the composed clip


def test_a_single_default_part_is_the_library_clip_itself(characters):
    rig, roles, _, clip = _play(characters, "biped", "a person walking", fps=8.0, frames=16)
    library = make_role_clip(rig, roles, "walk", Variation(), 16, 8.0)
    np.testing.assert_allclose(clip.rotations, library.rotations, atol=1e-12)
    np.testing.assert_allclose(clip.locations, library.locations, atol=1e-12)


@pytest.mark.parametrize("kind", ["biped", "quadruped"])
def test_walk_then_sit_travels_then_lowers_the_hips_where_the_walk_stopped(characters, kind):
    rig, roles, plan, clip = _play(characters, kind, "walks forward, then sits down")
    assert [p.label for p in plan.parts] == ["walk", "sit"]
    (a, b), (c, d) = _part_spans(plan, FPS)
    walk = motion_facts(rig, _clip_slice(clip, a, b), roles)
    sit = motion_facts(rig, _clip_slice(clip, c, d), roles)
    assert walk.travel > 0.3
    assert sit.travel < 0.1 * walk.travel  # stays put: sits where the walk stopped
    assert sit.root_height[-1] < sit.root_height[0] - 0.05  # the hips come down
    # the root path is continuous: no step at the seam larger than the walk's own steps
    path = motion_facts(rig, clip, roles)
    assert path.travel == pytest.approx(walk.travel + sit.travel, abs=0.1)
    root = motion_curves(rig, clip)  # feet: skate through the transition no worse than the parts'
    skate = root["skate"].max(1)
    parts = [motion_metrics(rig, make_role_clip(rig, roles, p.label, Variation(), 48, FPS))["foot_skate_max"] for p in plan.parts]
    assert skate[c : c + 8].max() <= max(parts) + 0.1
    assert motion_metrics(rig, clip)["penetration_max"] < 0.01


@pytest.mark.parametrize(
    ("kind", "prompt", "spells"), [("biped", "jumps twice", 2), ("quadruped", "the dog leaps three times", 3)]
)
def test_repeated_jumps_have_that_many_airborne_spells(characters, kind, prompt, spells):
    rig, roles, _, clip = _play(characters, kind, prompt)
    assert len(motion_facts(rig, clip, roles).airborne) == spells


def test_slow_walk_travels_less_per_second_than_a_quick_one(characters):
    rig, roles, _, slow = _play(characters, "hexapod", "the beetle crawls along slowly")
    _, _, _, normal = _play(characters, "hexapod", "the beetle crawls along")
    _, _, _, quick = _play(characters, "hexapod", "the beetle crawls along briskly")
    speeds = [motion_facts(rig, c, roles).travel_per_second for c in (slow, normal, quick)]
    assert speeds[0] < 0.8 * speeds[1] and speeds[1] < 0.8 * speeds[2]


@pytest.mark.parametrize("kind", ["biped", "bird"])
def test_turning_left_and_right_turn_opposite_ways(characters, kind):
    rig, roles, _, left = _play(characters, kind, "turns to its left")
    _, _, _, right = _play(characters, kind, "it turns around clockwise")
    turn_left, turn_right = motion_facts(rig, left, roles).turn_degrees, motion_facts(rig, right, roles).turn_degrees
    assert turn_left > 90 and turn_right < -90


def test_waving_with_the_left_hand_raises_the_left_wrist(characters):
    rig, roles, plan, left = _play(characters, "biped", "waves hello with the left hand")
    assert plan.parts[0].side == "left"
    _, _, _, right = _play(characters, "biped", "she waves using her right arm")
    _, _, _, default = _play(characters, "biped", "waves")
    assert raised_hand(motion_facts(rig, left, roles)) == "left"
    assert raised_hand(motion_facts(rig, right, roles)) == "right"
    assert raised_hand(motion_facts(rig, default, roles)) == "right"


def test_a_small_jump_is_lower_than_a_big_jump(characters):
    rig, roles, _, small = _play(characters, "biped", "a small jump")
    _, _, _, big = _play(characters, "biped", "a big jump")
    _, _, _, plain = _play(characters, "biped", "jumps")
    peaks = [motion_facts(rig, c, roles).peak for c in (small, plain, big)]
    assert peaks[0] < peaks[1] < peaks[2]


def test_duration_sets_the_length_and_frames_override_it(characters):
    _, _, _, clip = _play(characters, "biped", "walks for four seconds")
    assert clip.num_frames == 4 * FPS
    _, _, _, clip = _play(characters, "quadruped", "the horse wags its tail for 3 s", fps=30.0)
    assert clip.num_frames == 90
    rig, roles, plan, clip = _play(characters, "biped", "walks, then sits, then waves", frames=50)
    assert clip.num_frames == 50 and sum(piece_frames(schedule(plan), FPS, 50)) == 50


def test_walking_to_the_left_heads_left_and_backwards_goes_back(characters):
    rig, roles, _, ahead = _play(characters, "biped", "walks")
    _, _, _, left = _play(characters, "biped", "walks to the left")
    _, _, _, back = _play(characters, "biped", "walks backwards")

    def heading(clip):
        roots = motion_facts(rig, clip, roles)
        assert roots.travel > 0.3
        j = Skeleton(rig).joint_positions(*clip.pose_channels()).numpy()[:, main_root(rig), :2]
        d = j[-1] - j[0]
        return d / np.linalg.norm(d)

    forward, to_left, backward = heading(ahead), heading(left), heading(back)
    assert forward @ backward < -0.9
    assert abs(forward @ to_left) < 0.3 and np.cross(forward, to_left) > 0  # 90° counterclockwise: the left


def test_airborne_spells_are_runs_of_frames_off_the_ground():
    lowest = np.array([0, 0.1, 0.2, 0, 0, 0.3, 0.3, 0.0, 0.5])
    assert airborne_spells(lowest, 0.05) == ((1, 2), (5, 6), (8, 8))
