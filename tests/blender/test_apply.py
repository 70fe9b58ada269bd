"""The apply step (``akd_blender.blender.job.apply``): one door for the panel and the CLI.

The same JobResult applied through :func:`apply_result`, through the panel's Done path and (for a
grounded clip) through ``run_akd.py --ground-action``'s ``run_one`` gives the same keys; the previous
action is kept; the scene's frame range changes only when asked. Real bpy, real MuJoCo grounding.
"""

from __future__ import annotations

import json

import bpy
import numpy as np
import pytest

import akd_blender
from akd_blender.blender.build import armature_from_rig
from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import load_scene
from akd_blender.blender.character.pose_channels import action_fcurves
from akd_blender.blender.cli import distill
from akd_blender.blender.job import settings as job_settings
from akd_blender.blender.job.apply import Applied, apply_clips, apply_result
from akd_blender.blender.panel import run as panel_run
from akd_blender.core.character.procedural import biped
from akd_blender.core.errors import InputError
from akd_blender.core.job import worker as wk
from akd_blender.core.job.request import JobResult
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.settings import DistillConfig

PROMPT = "a person lifts an arm"


@pytest.fixture
def addon():
    akd_blender.register()
    yield
    akd_blender.unregister()


def _biped(name: str, old_action: str | None = "OldAction") -> bpy.types.Object:
    """The procedural biped as ``name``, active, with an old action turning bone 1 over frames 1–8,
    showing the current frame's pose."""
    arm = armature_from_rig(biped(), name=name)
    bpy.context.view_layer.objects.active = arm
    if old_action is not None:
        pb = arm.pose.bones[1]
        pb.rotation_mode = "QUATERNION"
        for frame, angle in ((1, 0.0), (8, 0.6)):
            pb.rotation_quaternion = (np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
        arm.animation_data.action.name = old_action
    bpy.context.scene.frame_set(bpy.context.scene.frame_current)  # the pose shown is the action's (sparse keys read it)
    return arm


def _clip(arm, frames: int = 8, frame_start: int = 3, drift: float = 0.0) -> MotionClip:
    """Bone 2 turns 0.7 rad about X over ``frames`` frames; the root slides ``drift`` along X."""
    names = tuple(b.name for b in arm.data.bones)
    rot = np.zeros((frames, len(names), 4))
    rot[..., 0] = 1.0
    theta = np.linspace(0.0, 0.7, frames)
    rot[:, 2, 0], rot[:, 2, 1] = np.cos(theta / 2), np.sin(theta / 2)
    loc = np.zeros((frames, len(names), 3))
    loc[:, 0, 0] = np.linspace(0.0, drift, frames)
    return MotionClip(names, 24.0, frame_start, rot, loc)


def _result(clip: MotionClip, distilled: MotionClip | None = None, facts: dict | None = None) -> JobResult:
    return JobResult(clip, distilled if distilled is not None else clip, [], 1.0, {}, "cpu", DistillConfig(), facts or {})


def _keys(action_name: str) -> dict[tuple[str, int], np.ndarray]:
    """Every F-curve of the action: (data path, index) → its keys' [K,6] co and handles."""
    out = {}
    for fc in action_fcurves(bpy.data.actions[action_name]):
        points = [(*k.co, *k.handle_left, *k.handle_right) for k in fc.keyframe_points]
        out[(fc.data_path, fc.array_index)] = np.array(points)
    return out


def _same_keys(a: str, b: str) -> None:
    ka, kb = _keys(a), _keys(b)
    assert ka and ka.keys() == kb.keys()
    for path in ka:
        np.testing.assert_array_equal(ka[path], kb[path], err_msg=str(path))


def test_two_copies_get_the_same_keys_the_old_action_kept_the_range_left_alone():
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    first, second = _biped("First"), _biped("Second", old_action="OldSecond")
    result = _result(_clip(first))
    applied = [
        apply_result(arm, rig_from_armature(arm), result, name=PROMPT, keys="sparse", set_scene_range=False)
        for arm in (first, second)
    ]
    _same_keys(applied[0].action, applied[1].action)
    assert isinstance(applied[0], Applied) and applied[0].action_names == [PROMPT] and applied[1].action == f"{PROMPT}.001"
    assert (scene.frame_start, scene.frame_end) == (1, 250)
    for arm, got, old in zip((first, second), applied, ("OldAction", "OldSecond")):
        assert arm.animation_data.action.name == got.action and got.previous_action == old
        assert bpy.data.actions[old].use_fake_user
        assert got.scene_changes == [f"new action '{got.action}' active on '{arm.name}'", f"action '{old}' kept with a fake user"]
    keys = applied[0].keys
    assert keys["mode"] == "sparse" and 0 < keys["keys"] < 8 * keys["channels"] and keys["rotation_error_deg"] < 0.5
    assert applied[0].keys == applied[1].keys and applied[0].motion_metrics == applied[1].motion_metrics


def test_range_set_only_when_asked_and_dense_keys_every_frame():
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    arm = _biped("Biped", old_action=None)
    applied = apply_result(arm, rig_from_armature(arm), _result(_clip(arm)), name=PROMPT, keys="dense", set_scene_range=True)
    assert (scene.frame_start, scene.frame_end) == (3, 10)
    assert applied.previous_action is None and applied.scene_changes[-1] == "frame range 3–10"
    assert {len(k) for k in _keys(applied.action).values()} == {8} and applied.keys["mode"] == "dense"


def test_physics_writes_the_distilled_and_the_grounded_clip_or_only_the_grounded():
    arm = _biped("Biped")
    rig = rig_from_armature(arm)
    grounded, distilled = _clip(arm), _clip(arm, drift=0.5)
    result = _result(grounded, distilled)
    steps = []
    both = apply_result(arm, rig, result, name=PROMPT, keys="dense", set_scene_range=False, physics=True, on_step=steps.append)
    assert both.action_names == [PROMPT, f"{PROMPT} grounded"] and arm.animation_data.action.name == both.action_names[1]
    assert steps == ["actions", "keys"] and both.previous_action == "OldAction"
    assert both.scene_changes[:2] == [f"new action '{PROMPT}' on 'Biped'", f"new action '{PROMPT} grounded' active on 'Biped'"]
    root_x = _keys(PROMPT)[('pose.bones["hips"].location', 0)][:, 1]
    assert root_x[-1] == pytest.approx(0.5, abs=1e-5)  # the distilled clip drifts, the grounded one does not
    assert np.allclose(_keys(both.action)[('pose.bones["hips"].location', 0)][:, 1], 0.0)
    alone = apply_result(arm, rig, result, name=PROMPT, keys="dense", set_scene_range=False, physics=True, keep_distilled=False)
    assert alone.action_names == [f"{PROMPT}.001"] and alone.previous_action == f"{PROMPT} grounded"
    _same_keys(alone.action, both.action)


def test_warnings_read_the_facts_and_the_final_clip():
    arm = _biped("Biped")
    rig = rig_from_armature(arm)
    clip = _clip(arm, drift=3.0 * rig.height)  # the root drifts 3+ heights
    drifting = apply_clips(arm, rig, [(clip, PROMPT)], keys="sparse", set_scene_range=False)
    assert any("drifts" in line for line in drifting.warnings)
    walking = apply_clips(arm, rig, [(clip, PROMPT)], keys="sparse", set_scene_range=False, facts={"motion": "walk"})
    assert not any("drifts" in line for line in walking.warnings)


def test_a_clip_the_armature_cannot_take_changes_nothing():
    arm = _biped("Biped")
    clip = _clip(arm)
    bad = MotionClip(("no such bone", *clip.bone_names[1:]), clip.fps, clip.frame_start, clip.rotations, clip.locations)
    before = len(bpy.data.actions)
    with pytest.raises(InputError, match="no bone named 'no such bone'"):
        apply_clips(arm, rig_from_armature(arm), [(bad, PROMPT)], keys="sparse", set_scene_range=True)
    assert len(bpy.data.actions) == before and arm.animation_data.action.name == "OldAction"
    assert not bpy.data.actions["OldAction"].use_fake_user


def test_the_panel_door_writes_the_keys_the_function_writes(addon):
    panel_arm = _biped("Panel")
    settings = bpy.context.scene.akd
    settings.prompt, settings.model, settings.use_scene_range, settings.device = PROMPT, "FOLDER", False, "cpu"
    settings.auto_steps, settings.steps = False, 2
    run = panel_run.snapshot(bpy.context, panel_arm)
    run.report = lambda level, text: None
    result = _result(_clip(panel_arm))
    assert panel_run.handle_messages(bpy.context, run, [wk.Done(result)]) == "FINISHED"
    other = _biped("Function")
    applied = apply_result(
        other, run.request.rig, result, name=PROMPT, keys=run.keys, set_scene_range=False, keep_distilled=False
    )
    _same_keys(run.action, applied.action)
    assert run.warnings == applied.warnings and panel_arm.animation_data.action.name == run.action


def test_the_cli_door_writes_the_keys_the_function_writes(tmp_path):
    _biped("Biped")
    blend, report_path = tmp_path / "in.blend", tmp_path / "report.json"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    load_scene(str(blend))  # the grounded clip of the file as the CLI opens it
    clip = distill._ground_existing(bpy.data.objects["Biped"], rig_from_armature(bpy.data.objects["Biped"]), "OldAction", 24.0)[0]
    job = job_settings.CliJob(input=str(blend), ground_action="OldAction", report=str(report_path), keys="sparse")
    report = distill.run_one(job, progress=False)  # opens the file again
    assert json.loads(report_path.read_text())["action_names"] == report["action_names"] == ["OldAction grounded"]
    arm = bpy.data.objects["Biped"]
    rig = rig_from_armature(arm)
    applied = apply_clips(arm, rig, [(clip, "OldAction grounded")], keys="sparse", set_scene_range=False)
    assert applied.action_names == ["OldAction grounded.001"] and applied.previous_action == "OldAction grounded"
    _same_keys("OldAction grounded", applied.action)
    assert report["keys"] == applied.keys and report["motion_metrics"] == applied.motion_metrics
    assert report["warnings"] == applied.warnings and report["previous_action"] == "OldAction"
    assert report["scene_changes"] == [
        "new action 'OldAction grounded' active on 'Biped'",
        "action 'OldAction' kept with a fake user",
    ]


def test_the_panel_on_the_rig_a_game_rig_copies_reads_the_game_rig_and_keys_the_rig(addon):
    """The animator selects the rig they animate; the mesh is bound to a game rig over it. The panel's job
    reads the game rig, and the keys land on the selected rig's controls (a new action on it; the game rig
    gets none), the report naming the rig keyed."""
    from akd_blender.blender.controls.check import result_of

    from . import rig_zoo

    src, _ = rig_zoo.ik_biped()
    game = rig_zoo.game_rig(src)
    bpy.context.view_layer.objects.active = src
    settings = bpy.context.scene.akd
    settings.prompt, settings.model, settings.use_scene_range, settings.device = PROMPT, "FOLDER", False, "cpu"
    run = panel_run.snapshot(bpy.context, src)
    assert run.armature == game.name and run.request.rig.name == game.name
    run.report = lambda level, text: None
    rig = run.request.rig
    rotations = np.zeros((8, rig.num_bones, 4))
    rotations[..., 0] = 1.0
    arm = rig.bone_index("upper_arm.R")
    rotations[:, arm, 0], rotations[:, arm, 1] = np.cos(np.linspace(0, 0.4, 8)), np.sin(np.linspace(0, 0.4, 8))
    clip = MotionClip(rig.bone_names, 24.0, 1, rotations, np.zeros((8, rig.num_bones, 3)))
    assert panel_run.handle_messages(bpy.context, run, [wk.Done(_result(clip))]) == "FINISHED"
    action = bpy.data.actions[run.action]
    assert src.animation_data.action == action and result_of(action).armature == src.name
    assert game.animation_data is None or game.animation_data.action is None
    assert run.scene_changes[0] == f"new action '{run.action}' active on '{src.name}' (the armature '{game.name}' copies)"
