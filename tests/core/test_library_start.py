"""The library start (start "library", the default whenever the prompt is understood): the understood
motion's library clip on the rig's bone roles, its variation read from the prompt; the embedded
teacher's job is that clip alone and loads no model; a real video model continues with SDS steps."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.distillation.library_reader import LibraryReader
from akd_blender.core.distillation.plan import resolve_start
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library import make_role_clip
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.prompt.reading import SPEED_RANGE, LibraryChoice, choose_library_motion, prompt_variation
from akd_blender.core.prompt.understanding import PromptNotUnderstood
from akd_blender.core.settings import START_MODES, DistillConfig, RedrawSettings

CPU = DistillConfig(device="cpu")


@pytest.fixture(scope="module")
def rigs():
    return {"biped": biped(), "quadruped": quadruped()}


def joints(rig, clip: MotionClip) -> np.ndarray:
    """World joint positions [F,J,3] of ``clip`` on ``rig``."""
    return Skeleton(rig).joint_positions(*clip.pose_channels(torch.float64)).numpy()


def travel(rig, clip: MotionClip) -> float:
    """How far the root joint moves over the clip along the ground (world units)."""
    j = joints(rig, clip)
    return float(np.linalg.norm(j[-1, 0, :2] - j[0, 0, :2]))


@pytest.mark.parametrize(
    ("kind", "prompt", "label"),
    [("biped", "a man walks forward", "walk"), ("quadruped", "the dog sits down on the floor", "sit")],
)
def test_the_default_job_is_the_library_clip_played_on_the_roles(rigs, kind, prompt, label):
    rig = rigs[kind]
    result = distill(rig, prompt, CPU)
    assert (result.config.start, result.config.steps, result.config.redraw.noise) == ("library", 0, ())
    assert result.history == [] and result.prior_name == "tiny"
    assert result.extra["start"] == "library" and result.extra["library_motion"] == label
    assert result.extra["motion"] == f"{kind}/{label}" and result.extra["library_variation"] == "default"
    direct = make_role_clip(rig, find_roles(rig), label, Variation(), result.clip.num_frames, result.clip.fps)
    assert result.clip.num_frames == 48 and result.clip.fps == 24.0  # the teacher's 2 s at 24 fps
    gap = np.abs(joints(rig, result.clip) - joints(rig, direct)).max()
    assert gap < 1e-5 * rig.height, gap
    assert np.abs(joints(rig, direct) - joints(rig, MotionClip.rest(rig, 48, 24.0))).max() > 0.05 * rig.height


def test_the_prompt_chooses_the_speed(rigs):
    rig = rigs["biped"]
    slow = distill(rig, "a man walks slowly forward", CPU)
    quick = distill(rig, "a man walks quickly forward", CPU)
    plain = distill(rig, "a man walks forward", CPU)
    slow_speed, quick_speed = (prompt_variation(p, "biped", "walk")[0].speed for p in ("walks slowly", "walks quickly"))
    assert (slow_speed, quick_speed) == SPEED_RANGE  # the library's own range holds the words' factors
    assert slow.extra["library_variation"].startswith(f"speed {slow_speed:g} (slowly")
    assert quick.extra["library_variation"].startswith(f"speed {quick_speed:g} (quickly")
    assert travel(rig, slow.clip) < travel(rig, plain.clip) < travel(rig, quick.clip)
    direct = make_role_clip(rig, find_roles(rig), "walk", replace(Variation(), speed=slow_speed), 48, 24.0)
    assert np.abs(joints(rig, slow.clip) - joints(rig, direct)).max() < 1e-5 * rig.height


def test_prompt_words_choose_the_variation():
    assert prompt_variation("turns to its left", "biped", "turn")[0] == replace(Variation(), direction=1)
    assert prompt_variation("turns to the right", "biped", "turn")[0] == replace(Variation(), direction=-1)
    assert prompt_variation("waves its right arm", "biped", "wave")[0] == Variation()  # no side in the library
    big, small = prompt_variation("a big jump", "biped", "jump")[0], prompt_variation("a small hop", "bird", "hop")[0]
    assert big.amplitude > 1 > small.amplitude
    assert prompt_variation("walks forward, then sits down", "biped", "walk") == (Variation(), ())  # a sequence


def test_an_unknown_prompt_is_refused_naming_it(rigs):
    with pytest.raises(PromptNotUnderstood) as caught:
        distill(rigs["biped"], "plays the violin", CPU)
    message = str(caught.value)
    assert '"plays the violin"' in message and "\n" not in message
    nearest = distill(rigs["biped"], "plays the violin", replace(CPU, allow_nearest=True))
    assert nearest.config.start == "library" and nearest.extra["understood"] is False


def test_another_kind_of_characters_motion_is_refused_naming_it(rigs):
    """ "Flaps its wings" asks a four-legged animal for a bird's motion: it is not read as the nearest
    quadruped motion (a jump) but refused in one line naming the bird's motion, with the embedded teacher
    too, and in a part of a composed prompt; a motion both kinds have is read as before."""
    from akd_blender.core.prompt.compose import PartNotUnderstood
    from akd_blender.core.video_models import load_prior

    teacher = load_prior("tiny", device="cpu")
    for prior in (None, teacher):
        with pytest.raises(PromptNotUnderstood) as caught:
            distill(rigs["quadruped"], "a horse flaps its wings", CPU, prior=prior)
        message = str(caught.value)
        assert "bird/flap_wings" in message and "another kind of character" in message and "\n" not in message
    with pytest.raises(PartNotUnderstood, match="part 2 of 2.*bird/flap_wings"):
        distill(rigs["quadruped"], "the dog walks forward, then flaps its wings", CPU)
    nearest = distill(rigs["quadruped"], "a horse flaps its wings", replace(CPU, allow_nearest=True))
    assert nearest.extra["understood"] is False and nearest.extra["other_kind"] == "bird/flap_wings"
    assert nearest.extra["motion"].startswith("quadruped/")
    choice, reading = choose_library_motion("a horse walks forward", "quadruped")
    assert choice.label == "walk" and reading.understood and reading.other_kind is None
    choice, reading = choose_library_motion("a bird flaps its wings", "bird")
    assert choice.label == "flap_wings" and reading.other_kind is None


def test_no_wording_of_a_kinds_own_motion_reads_as_another_kinds():
    """Every phrasing the library holds out, read for its own kind without the held-out phrasings (as the
    unseen-rig benchmark reads them: no wording matches exactly), names no other kind's motion: a
    quadruped's "bounds over an obstacle" is its jump, not the hexapod's hop."""
    from akd_blender.core.motion.library import KINDS, motions_for
    from akd_blender.core.prompt.reading import library_understanding

    wrong = [
        (kind, p, reading.other_kind.motion)
        for kind in KINDS
        for spec in motions_for(kind)
        for p in spec.heldout_phrasings
        if (reading := library_understanding(p, kind, heldout=False)).other_kind is not None
    ]
    assert not wrong


def test_the_loaded_teacher_resolves_to_the_library_and_gives_the_same_clip(rigs):
    from akd_blender.core.video_models import load_prior

    teacher = load_prior("tiny", device="cpu")
    rig = rigs["quadruped"]
    loaded = distill(rig, "the dog sits down on the floor", CPU, prior=teacher)
    reader = distill(rig, "the dog sits down on the floor", CPU)
    assert (loaded.config.start, loaded.config.steps) == ("library", 0)
    np.testing.assert_allclose(loaded.clip.rotations, reader.clip.rotations, atol=1e-6)
    sample = resolve_start(replace(CPU, start="sample"), teacher, LibraryChoice("quadruped", "sit", Variation()), True)
    assert (sample.start, sample.steps) == ("sample", 0)  # the drawing path stays on request


def test_resolve_start_rules(rigs):
    choice = LibraryChoice("biped", "walk", Variation())

    class Draws:
        name = "draws"

        def sample(self, *args, **kwargs): ...

        def redraw(self, *args, **kwargs): ...

    embedded = resolve_start(DistillConfig(), Draws(), choice, reads_motions=True)
    assert (embedded.start, embedded.steps, embedded.redraw.noise) == ("library", 0, ())
    video_model = resolve_start(DistillConfig(), Draws(), choice, reads_motions=False)
    assert (video_model.start, video_model.steps, video_model.redraw.noise) == ("library", 200, ())
    assert resolve_start(DistillConfig(), Draws(), None).start == "sample"  # not understood: as before
    with pytest.raises(InputError, match="start 'library'"):
        resolve_start(DistillConfig(start="library"), Draws(), None)
    assert "library" in START_MODES


def test_a_video_model_starts_from_the_library_clip_then_steps(rigs):
    from akd_blender.core.video_models.cogvideox import CogVideoXPrior
    from tests.core.dummy_priors import cogvideox_pipeline

    prior = CogVideoXPrior(cogvideox_pipeline(), name="tiny-cogvideox", device="cpu")
    rig = rigs["biped"]
    config = replace(CPU, frames=5, height=32, width=32, steps=1, preview_every=0, redraw=RedrawSettings(noise=()))
    result = distill(rig, "a man walks forward", config, prior=prior)
    assert (result.config.start, len(result.history)) == ("library", 1)
    assert result.extra["library_motion"] == "walk" and result.extra["motion"] == "biped/walk"
    zero = distill(rig, "a man walks forward", replace(config, steps=0), prior=prior)  # the clip itself, keyed
    direct = make_role_clip(rig, find_roles(rig), "walk", Variation(), 5, 24.0)
    assert np.abs(joints(rig, zero.clip) - joints(rig, direct)).max() < 0.02 * rig.height
    posed = distill(rig, "plays the violin", config, prior=prior)  # not understood: from the pose, as before
    assert posed.config.start == "pose" and "library_motion" not in posed.extra


def test_the_reader_reads_as_the_teacher(rigs):
    reader = LibraryReader()
    assert (reader.frames, reader.fps, reader.height, reader.width) == (16, 8.0, 32, 32)
    text = reader.encode_text("a dog wags its tail", kind="quadruped")
    assert text.extra["motion"] == "quadruped/wag_tail"
    choice, reading = choose_library_motion("a dog wags its tail", "quadruped", text.extra["understanding"], reader)
    assert choice == LibraryChoice("quadruped", "wag_tail", Variation()) and reading is text.extra["understanding"]


def _standing_with_a_bent_knee(rig) -> MotionClip:
    """The library's standing pose (the biped's arms down) with the left shin bent 30° about its own
    x axis: a held pose that is not the rest pose, in the arms the motions aim and in a bone they leave alone."""
    from akd_blender.core.character.rotations import rotvec_to_quat
    from akd_blender.core.motion.library.labelled import neutral_clip

    held = neutral_clip(rig)
    rotations = held.rotations.copy()
    rotations[0, rig.bone_index("shin.L")] = rotvec_to_quat(torch.tensor([np.deg2rad(30.0), 0.0, 0.0])).numpy()
    return MotionClip(rig.bone_names, held.fps, 1, rotations, held.locations)


def test_the_library_clip_starts_from_the_held_pose(rigs):
    """The motion is played from the held pose, not from the rest pose and then composed on it: bones
    the wave leaves alone keep the held pose, and the arms it aims reach the same places (relative to
    the shoulders) from the held pose as from the rest pose (they are not turned twice)."""
    from tests.core.library_checks import Measured, check_wave

    rig = rigs["biped"]
    roles = find_roles(rig)
    held = _standing_with_a_bent_knee(rig)
    result = distill(rig, "a man waves hello", CPU, init_pose=held)
    rest = distill(rig, "a man waves hello", CPU)
    assert result.extra["library_motion"] == "wave"
    legs = [i for i, name in enumerate(rig.bone_names) if "thigh" in name or "shin" in name]
    got = result.clip.rotations[:, legs]
    want = np.repeat(held.rotations[:1, legs], 48, axis=0)
    assert np.minimum(np.abs(got - want), np.abs(got + want)).max() < 1e-6
    arms = [b for limb in roles.arms for b in limb.bones]
    shoulders = [limb.bones[0] for limb in roles.arms for _ in limb.bones]
    reach = {}
    for name, clip in (("held", result.clip), ("rest", rest.clip)):
        j = joints(rig, clip)
        reach[name] = j[:, arms] - j[:, shoulders]
    assert np.abs(reach["held"] - reach["rest"]).max() < 1e-6 * rig.height
    check_wave(Measured(rig, roles, result.clip, 0.0))


def test_arms_raised_from_the_standing_pose_end_above_the_head(rigs):
    """`make demo`'s biped job: "a figure stretches both arms up to the sky" from the library's
    standing pose (arms down) ends with both hands above the head."""
    from akd_blender.core.motion.library.labelled import neutral_clip
    from tests.core.library_checks import Measured, check_raise_arms

    rig = rigs["biped"]
    result = distill(rig, "a figure stretches both arms up to the sky", CPU, init_pose=neutral_clip(rig))
    assert result.extra["library_motion"] == "raise_arms"
    check_raise_arms(Measured(rig, find_roles(rig), result.clip, 0.0))


def turned_pose(rig, frames: int = 1) -> MotionClip:
    """The rest pose with the whole body turned 90° about up by its root bone (held for ``frames``)."""
    from akd_blender.core.character.rotations import rotvec_to_quat
    from akd_blender.core.motion.library.labelled import rest_clip

    root = int(rig.root_indices[0])
    held = rest_clip(rig, frames=frames)
    rotations = held.rotations.copy()
    local_up = rig.rest_matrices[root, :3, :3].T @ find_roles(rig).frame.up
    rotations[:, root] = rotvec_to_quat(torch.as_tensor(0.5 * np.pi * local_up)).numpy()
    return MotionClip(rig.bone_names, held.fps, 1, rotations, held.locations)


@pytest.mark.parametrize("kind", ["biped", "quadruped"])
def test_a_turned_character_walks_the_way_it_faces(rigs, kind):
    """The held pose turns the whole body 90° about up (the animator turned its root): the library walk
    travels along the body's new forward, as far as from the rest pose."""
    rig = rigs[kind]
    roles = find_roles(rig)
    held = turned_pose(rig)
    turned = distill(rig, f"a {'man' if kind == 'biped' else 'dog'} walks forward", CPU, init_pose=held)
    straight = distill(rig, f"a {'man' if kind == 'biped' else 'dog'} walks forward", CPU)
    assert turned.extra["library_motion"] == straight.extra["library_motion"] == "walk"
    step = joints(rig, turned.clip)[-1, 0] - joints(rig, turned.clip)[0, 0]
    ahead = np.cross(roles.frame.up, roles.frame.forward)  # the rest forward turned 90° about up (to the left)
    assert step @ ahead > 0.9 * travel(rig, straight.clip)
    assert abs(step @ roles.frame.forward) < 0.1 * travel(rig, straight.clip)


def test_the_library_start_of_a_refined_job_travels_the_way_a_turned_body_faces(rigs):
    """The library start written into a job's parameters (the start SDS steps refine) on a body turned 90°
    travels along its new forward."""
    from akd_blender.core.distillation.library_start import write_library_start
    from akd_blender.core.motion.clip import MotionParams

    rig = rigs["quadruped"]
    roles = find_roles(rig)
    params = MotionParams(rig, 48, 24.0, keys=24, base=turned_pose(rig, frames=48))
    write_library_start(rig, roles, LibraryChoice("quadruped", "walk", Variation()), params)
    with torch.no_grad():
        j = Skeleton(rig).joint_positions(*params.pose_channels(torch.float64)).numpy()
    step = j[-1, 0] - j[0, 0]
    ahead = np.cross(roles.frame.up, roles.frame.forward)
    assert step @ ahead > 0.5 and abs(step @ roles.frame.forward) < 0.1 * (step @ ahead)


def test_the_ranked_starts_of_a_turned_body_travel_the_way_it_faces(rigs):
    """The motion-prior starts a video model's job ranks (and the pose search begins from) on a body
    turned 90° travel along its new forward, as its library start does."""
    from akd_blender.core.distillation.ranked_start import candidates_for
    from akd_blender.core.motion.clip import MotionParams

    rig = rigs["quadruped"]
    roles = find_roles(rig)
    ahead = np.cross(roles.frame.up, roles.frame.forward)
    params = MotionParams(rig, 48, 24.0, keys=24, base=turned_pose(rig, frames=48))
    candidates = candidates_for(rig, params, CPU)
    walks = [s for s, name in enumerate(candidates.names[1:]) if name.startswith("walk")]
    assert walks
    for s in walks:
        step = (candidates.drift[s, -1] - candidates.drift[s, 0]).numpy()
        assert abs(step @ ahead) > 0.3 and abs(step @ roles.frame.forward) < 0.1 * abs(step @ ahead), (s, step)


def test_the_cli_default_job_is_the_library_start(tmp_path):
    from tests.e2e.akd_cli import make_blends, run_cli

    blend = make_blends(tmp_path)["biped"]
    report = tmp_path / "walk.json"
    result = run_cli("--input", blend, "--prompt", "a man walks slowly forward", "--report", report, "--device", "cpu")
    assert result.returncode == 0, result.stderr[-3000:]
    facts = json.loads(report.read_text())
    assert facts["config"]["start"] == "library" and facts["steps"] == 0
    assert facts["distill"]["library_motion"] == "walk" and facts["distill"]["library_variation"].startswith("speed 0.8 (slowly")


def test_parts_joined_by_and_are_played_when_the_whole_reading_misses_one():
    """The whole prompt reads as the motion of one of its parts; another part that reads as a motion
    of its own is played too, even where it reads less well than the whole."""
    choice, whole = choose_library_motion("a dancer bows to the crowd and leaves", "biped")
    assert whole.motion == "biped/bow" and choice.plan is not None
    assert [p.label for p in choice.plan.parts] == ["bow", "walk"]
    # a second clause with no motion of its own is a step of the one motion
    choice, _ = choose_library_motion("a kid hops up and lands", "biped")
    assert choice.plan is None and choice.label == "jump"
