"""The add-on inside Blender (bpy module): registration, poll, the drain logic, a synchronous run, undo.

Real Blender data, real threads; the video prior is a tiny random CogVideoX pipeline saved with
``save_pretrained`` (tests/core/dummy_priors.py) and loaded through ``--model PATH``-style specs.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading

import bpy
import numpy as np
import pytest

import akd_blender
from akd_blender.blender import registration
from akd_blender.blender.panel import operators
from akd_blender.blender.panel import run as panel_run
from akd_blender.core.character.procedural import biped
from akd_blender.core.errors import InputError
from akd_blender.core.job import worker as wk
from akd_blender.core.job.model_cache import cached_priors
from akd_blender.core.job.request import JobRequest, JobResult
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.settings import DistillConfig

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.fixture
def addon():
    akd_blender.register()
    yield
    akd_blender.unregister()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    sys.path.insert(0, str(ROOT))
    from tests.core.dummy_priors import cogvideox_pipeline, save_pipeline

    return str(save_pipeline(cogvideox_pipeline(), tmp_path_factory.mktemp("tiny-cogvideox")))


def _character(with_old_action: bool = True):
    """The procedural biped in Blender, active and selected, optionally with an old action."""
    from akd_blender.blender.build import armature_from_rig

    arm = armature_from_rig(biped())
    arm.select_set(True)
    bpy.context.view_layer.objects.active = arm
    if with_old_action:
        arm.pose.bones[1].rotation_mode = "QUATERNION"
        arm.pose.bones[1].rotation_quaternion = (0.9, 0.3, 0.0, 0.0)
        arm.pose.bones[1].keyframe_insert("rotation_quaternion", frame=1)
        arm.animation_data.action.name = "OldAction"
    return arm


def _settings(prompt="a person walks forward", model="FOLDER", folder="", frames=(1, 4)):
    s = bpy.context.scene.akd
    s.prompt, s.model, s.model_folder = prompt, model, folder
    s.use_scene_range = False
    s.frame_start, s.frame_end = frames
    s.auto_steps, s.steps, s.resolution, s.device, s.preview_every = False, 2, 16, "cpu", 1
    return s


def _clip(arm, frames=4, angle=0.5, frame_start=1) -> MotionClip:
    names = tuple(b.name for b in arm.data.bones)
    rot = np.zeros((frames, len(names), 4))
    rot[..., 0] = 1.0
    theta = np.linspace(0.0, angle, frames)
    rot[:, 2, 0], rot[:, 2, 1] = np.cos(theta / 2), np.sin(theta / 2)
    return MotionClip(names, 24.0, frame_start, rot, np.zeros((frames, len(names), 3)))


def _basis(arm) -> np.ndarray:
    return np.stack([np.array(pb.matrix_basis) for pb in arm.pose.bones])


# --- registration and poll ---------------------------------------------------------------------


def test_register_unregister_twice():
    for _ in range(2):
        akd_blender.register()
        akd_blender.register()  # a second register is harmless
        assert registration.is_registered()
        assert hasattr(bpy.types, "AKD_OT_distill") and hasattr(bpy.types, "VIEW3D_PT_akd")
        assert bpy.context.scene.akd.model == "TINY"
        assert bpy.context.window_manager.akd_run.running is False
        akd_blender.unregister()
        akd_blender.unregister()  # and so is a second unregister
        assert not hasattr(bpy.types, "AKD_OT_distill") and not hasattr(bpy.types, "VIEW3D_PT_akd")
        assert not hasattr(bpy.types.Scene, "akd")


def test_registration_imports_no_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # importing torch would raise
        "import akd_blender.blender.registration, akd_blender.blender.panel.sidebar\n"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_worker_and_job_modules_need_neither_bpy_nor_torch():
    code = (
        "import sys; sys.modules['bpy'] = None; sys.modules['mathutils'] = None; sys.modules['torch'] = None\n"
        "import akd_blender.core.job.worker, akd_blender.core.job.request, akd_blender.core.settings\nprint('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_poll(addon):
    assert not bpy.ops.akd.distill.poll()  # empty scene
    mesh = bpy.data.objects.new("M", bpy.data.meshes.new("M"))
    bpy.context.scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    assert not bpy.ops.akd.distill.poll()
    arm = _character(with_old_action=False)
    assert bpy.ops.akd.distill.poll()
    assert not bpy.ops.akd.ground_action.poll()  # no action to ground yet
    assert not bpy.ops.akd.cancel.poll()  # nothing running
    assert bpy.ops.akd.free_gpu.poll()
    assert operators.AKD_OT_distill.poll(bpy.context) and arm.type == "ARMATURE"


def test_operator_reports_bad_input_and_changes_nothing(addon):
    arm = _character()
    _settings(prompt="   ")
    before = (_basis(arm), len(bpy.data.actions))
    with pytest.raises(RuntimeError, match="prompt is empty"):
        bpy.ops.akd.distill()
    _settings(frames=(5, 5))
    with pytest.raises(RuntimeError, match="Frames must be at least 2"):
        bpy.ops.akd.distill()
    settings = _settings()
    settings.steps, settings.start, settings.redraw = 0, "pose", "none"  # 0 steps without rounds: from the pose it does nothing
    with pytest.raises(RuntimeError, match="Steps must be at least 1, or 0 with start 'sample'"):
        bpy.ops.akd.distill()
    assert np.allclose(_basis(arm), before[0]) and len(bpy.data.actions) == before[1]


def test_snapshot_carries_the_panel_settings(addon):
    arm = _character()
    settings = _settings()
    settings.camera, settings.start = "orbit", "sample"
    request = panel_run.snapshot(bpy.context, arm).request
    config = request.config
    assert (config.camera, config.start, config.steps, config.height, config.frames) == ("orbit", "sample", 2, 16, 4)
    assert request.prompt == "a person walks forward" and request.rig.num_bones == len(arm.data.bones)
    assert request.init_pose is not None and request.init_pose.matches(request.rig)
    settings.camera, settings.start = "follow", "pose"


def _finish_with(clip, facts=None, **settings_values):
    """Run handle_messages' Done path for ``clip`` with these panel settings; (run, reports)."""
    arm = _character()
    settings = _settings(prompt="a person drifts")
    for key, value in settings_values.items():
        setattr(settings, key, value)
    run = panel_run.snapshot(bpy.context, arm)
    reports = []
    run.report = lambda level, text: reports.append((level, text))
    result = JobResult(clip, clip, [], 1.0, {}, "cpu", DistillConfig(), facts=dict(facts or {}))
    assert panel_run.handle_messages(bpy.context, run, [wk.Done(result)]) == "FINISHED"
    return run, reports


def _fcurve_keys(action) -> list[int]:
    from akd_blender.blender.character.pose_channels import action_fcurves

    return [len(fc.keyframe_points) for fc in action_fcurves(action)]


def test_finish_keys_sparse_by_default_dense_on_request(addon):
    arm = _character()
    clip = _clip(arm, frames=8)  # one bone turns, the others hold still
    run, _ = _finish_with(clip)
    sparse = _fcurve_keys(bpy.data.actions[run.action])
    assert run.keys == "sparse" and 0 < sum(sparse) < 8 * len(sparse) and max(sparse) < 8
    run, _ = _finish_with(clip, keys="dense")
    dense = _fcurve_keys(bpy.data.actions[run.action])
    assert run.keys == "dense" and set(dense) == {8} and len(dense) == len(clip.bone_names) * 7


def test_finish_leaves_the_scene_range_unless_asked(addon):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    arm = _character()
    run, _ = _finish_with(_clip(arm, frame_start=3))
    assert (scene.frame_start, scene.frame_end) == (1, 250)
    assert tuple(round(v) for v in bpy.data.actions[run.action].frame_range) == (3, 6)
    assert run.scene_changes[0] == f"new action '{run.action}' active on '{run.armature}'"
    assert not any(line.startswith("frame range") for line in run.scene_changes)
    run, _ = _finish_with(_clip(arm, frame_start=3), set_scene_range=True)
    assert (scene.frame_start, scene.frame_end) == (3, 6) and run.scene_changes[-1] == "frame range 3–6"
    scene.frame_start, scene.frame_end = 1, 250


def test_finish_reports_the_motion_warnings(addon):
    arm = _character()
    clip = _clip(arm, frames=6)
    from akd_blender.blender.character.extract import rig_from_armature

    height = rig_from_armature(arm).height
    clip.locations[:, 0, :] = np.linspace(0.0, 3.0 * height, 6)[:, None]  # the root drifts 3+ heights
    run, reports = _finish_with(clip)
    drift = [line for line in run.warnings if "drifts" in line]
    assert drift and ({"WARNING"}, drift[0]) in reports and reports[-1][0] == {"INFO"}
    assert bpy.context.window_manager.akd_run.warnings.splitlines() == run.warnings
    run, reports = _finish_with(clip, facts={"motion": "walk"})  # a travelling motion may travel
    assert not any("drifts" in line for line in run.warnings)
    assert not any("drifts" in text for level, text in reports if level == {"WARNING"})


# --- the drain logic, fed by hand --------------------------------------------------------------


def test_drain_keeps_newest_progress_and_preview():
    q: queue.Queue = queue.Queue()
    for step in range(1, 4):
        q.put(wk.Progress(step, 3, {"total": float(step)}))
        q.put(wk.Preview(clip=f"clip{step}", step=step))
    q.put(wk.Stopped(3))
    got = wk.drain(q)
    assert [type(m).__name__ for m in got] == ["Progress", "Preview", "Stopped"]
    assert got[0].step == 3 and got[1].clip == "clip3"
    assert wk.drain(q) == []


def test_the_panel_bar_names_each_phase(addon):
    arm = _character()
    _settings()
    run = panel_run.snapshot(bpy.context, arm)
    state = bpy.context.window_manager.akd_run
    for message, text, factor in (
        (wk.Progress(0, 1, {}, None, "load", "model tiny"), "Loading model 0/1 · model tiny", 0.0),
        (wk.Progress(3, 30, {}, 9.0, "draw", "step 3/30"), "Drawing 3/30 · step 3/30 · ETA 0:09", 0.1),
        (
            wk.Progress(120, 960, {}, 41.0, "search", "sweep 2/6 · hips"),
            "Pose search 120/960 · sweep 2/6 · hips · ETA 0:41",
            0.125,
        ),
        (wk.Progress(47, 94, {}, 1.0, "physics", "pass 1"), "Physics 47/94 · pass 1 · ETA 0:01", 0.5),
    ):
        assert panel_run.handle_messages(bpy.context, run, [message]) is None
        assert state.status == text and state.progress == pytest.approx(factor), state.status


def test_handle_messages_progress_preview_result(addon):
    arm = _character()
    _settings(prompt="a  person\twaves")
    run = panel_run.snapshot(bpy.context, arm)
    reports = []
    run.report = lambda level, text: reports.append((level, text))
    rest = _basis(arm)

    assert panel_run.handle_messages(bpy.context, run, [wk.Progress(1, 4, {"total": 0.5, "sds": 0.4}, 12.0)]) is None
    state = bpy.context.window_manager.akd_run
    assert (state.step, state.total) == (1, 4) and state.progress == pytest.approx(0.25)
    assert "ETA 0:12" in state.status and "0.5" in state.status

    bpy.context.scene.frame_set(4)
    clip = _clip(arm)
    assert panel_run.handle_messages(bpy.context, run, [wk.Preview(clip, 2)]) is None
    assert not np.allclose(_basis(arm)[2], rest[2])  # the pose shows the preview
    assert arm.animation_data.action.name == "OldAction"  # nothing keyed yet

    result = JobResult(clip=clip, distilled=clip, history=[], seconds=1.0, timings={}, device="cpu", config=DistillConfig())
    assert panel_run.handle_messages(bpy.context, run, [wk.Done(result)]) == "FINISHED"
    action = arm.animation_data.action
    assert action.name == "a person waves"
    assert bpy.data.actions["OldAction"].use_fake_user  # the previous action is kept
    assert reports and reports[-1][0] == {"INFO"} and "a person waves" in reports[-1][1]
    assert not state.running


@pytest.mark.parametrize("terminal", [wk.Failed("video prior 'x' not found", 3), wk.Stopped(2)])
def test_handle_messages_error_and_cancel_restore_the_scene(addon, terminal):
    arm = _character()
    _settings()
    run = panel_run.snapshot(bpy.context, arm)
    reports = []
    run.report = lambda level, text: reports.append((level, text))
    before, actions = _basis(arm), {a.name for a in bpy.data.actions}
    bpy.context.scene.frame_set(3)
    assert panel_run.handle_messages(bpy.context, run, [wk.Preview(_clip(arm), 1)]) is None
    assert not np.allclose(_basis(arm), before)
    assert panel_run.handle_messages(bpy.context, run, [terminal]) == "CANCELLED"
    assert np.allclose(_basis(arm), before, atol=1e-6)  # pose restored
    assert {a.name for a in bpy.data.actions} == actions and arm.animation_data.action.name == "OldAction"
    level, text = reports[-1]
    if isinstance(terminal, wk.Failed):
        assert level == {"ERROR"} and "not found" in text
    else:
        assert level == {"WARNING"} and "cancelled" in text


def test_main_thread_guard(addon):
    arm = _character()
    _settings()
    run = panel_run.snapshot(bpy.context, arm)
    errors = []

    def off_main():
        try:
            panel_run.handle_messages(bpy.context, run, [])
        except RuntimeError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=off_main)
    t.start()
    t.join()
    assert errors and "worker thread" in errors[0]


# --- real jobs -----------------------------------------------------------------------------------


def test_worker_thread_reports_a_missing_model_and_cancel():
    config = DistillConfig(frames=4, steps=2, device="cpu")
    spec = JobRequest(rig=biped(), prompt="a person walks", model="/nonexistent/model", config=config)
    worker = wk.Worker(spec)
    worker.start()
    worker.join(120)
    messages = wk.drain(worker.queue)
    assert isinstance(messages[-1], wk.Failed) and messages[-1].exit_code == 3, messages
    cancelled = wk.Worker(spec)
    cancelled.cancel()
    assert isinstance(cancelled.run_sync(), wk.Stopped)


def test_synchronous_run_then_undo(addon, tiny_model):
    arm = _character()
    _settings(prompt="a person walks forward", folder=tiny_model, frames=(3, 6))
    bpy.ops.ed.undo_push(message="before distill")
    old = arm.animation_data.action.name
    assert bpy.ops.akd.distill() == {"FINISHED"}
    arm = bpy.data.objects["Biped"]
    action = arm.animation_data.action
    assert action.name == "a person walks forward" and action.name != old
    assert tuple(round(v) for v in action.frame_range) == (3, 6)
    assert bpy.data.actions[old].use_fake_user
    assert "Step 2/2" in bpy.context.window_manager.akd_run.status or "New action" in bpy.context.window_manager.akd_run.status

    # The bpy module has no window manager loop to push the step for the operator's UNDO flag, so push
    # it as wm_operator_finished does; then one undo must take back the keys and the new action.
    assert "UNDO" in operators.AKD_OT_distill.bl_options
    bpy.ops.ed.undo_push(message=operators.AKD_OT_distill.bl_label)
    bpy.ops.ed.undo()
    arm = bpy.data.objects["Biped"]
    assert "a person walks forward" not in bpy.data.actions
    assert arm.animation_data.action.name == old


def test_ground_action_operator(addon):
    arm = _character()
    for frame, x in ((1, 0.0), (6, 0.4)):
        arm.pose.bones[1].rotation_quaternion = (1.0, x, 0.0, 0.0)
        arm.pose.bones[1].keyframe_insert("rotation_quaternion", frame=frame)
    assert bpy.ops.akd.ground_action.poll()
    assert bpy.ops.akd.ground_action() == {"FINISHED"}
    action = arm.animation_data.action
    assert action.name == "OldAction grounded" and tuple(round(v) for v in action.frame_range) == (1, 6)
    assert bpy.data.actions["OldAction"].use_fake_user
    keys = _fcurve_keys(action)  # the panel's Keys (sparse by default): fewer keys than frames
    assert keys and sum(keys) < 6 * len(keys)


def test_ground_action_on_the_rig_a_game_rig_copies(addon):
    """Ground Action with the rig an animator keys selected, the mesh bound to a game rig over it: the game
    rig's motion is grounded and keyed back on the selected rig's controls."""
    from akd_blender.blender.controls.check import result_of

    from . import rig_zoo

    src, _ = rig_zoo.ik_biped()
    game = rig_zoo.game_rig(src)
    foot = src.pose.bones["foot_ik.L"]
    for frame, z in ((1, 0.0), (6, 0.3)):
        foot.location = (0.0, 0.0, z)
        foot.keyframe_insert("location", frame=frame)
    src.animation_data.action.name = "Lift"
    bpy.context.view_layer.objects.active = src
    assert bpy.ops.akd.ground_action.poll()
    assert bpy.ops.akd.ground_action() == {"FINISHED"}
    action = src.animation_data.action
    assert action.name == "Lift grounded" and result_of(action).armature == src.name
    assert game.animation_data is None or game.animation_data.action is None


def test_worker_thread_cancel_mid_run_frees_the_model(tiny_model):
    config = DistillConfig(frames=4, steps=500, device="cpu", height=16, width=16)
    spec = JobRequest(rig=biped(), prompt="a person walks", model=tiny_model, config=config)
    worker = wk.Worker(spec)
    worker.start()
    first = worker.queue.get(timeout=120)  # the worker is running: progress arrives from its thread
    assert isinstance(first, wk.Progress) and (first.phase, first.step, first.total) == ("load", 0, 1)
    while not (isinstance(first, wk.Progress) and first.phase == "steps"):
        first = worker.queue.get(timeout=120)
    assert first.total == 500
    assert cached_priors() == [(tiny_model, "cpu")]
    worker.cancel()
    worker.join(60)
    assert not worker.alive
    messages = wk.drain(worker.queue)
    assert isinstance(messages[-1], wk.Stopped) and not any(isinstance(m, wk.Done) for m in messages)
    assert cached_priors() == []  # cancelling released the model


@pytest.mark.parametrize("phase", ["draw", "search"])
def test_cancel_while_the_embedded_model_draws_or_the_pose_search_runs_changes_nothing(addon, phase):
    """The panel's path with the embedded model's default start (draw, then pose search): Cancel pressed
    while the phase runs stops the worker in that phase; no action is written and the pose is restored."""
    arm = _character()
    settings = _settings(prompt="a person waves", model="TINY")
    settings.start, settings.auto_steps = "sample", True
    actions, rest = sorted(bpy.data.actions.keys()), _basis(arm)
    run = panel_run.snapshot(bpy.context, arm)
    reports = []
    run.report = lambda level, text: reports.append((level, text))
    run.worker = wk.Worker(run.request)
    run.worker.start()
    seen = []
    while not seen or not isinstance(seen[-1], wk.TERMINAL):
        seen.append(run.worker.queue.get(timeout=300))
        if isinstance(seen[-1], wk.Progress) and seen[-1].phase == phase:
            run.worker.cancel()
    run.worker.join(60)
    assert isinstance(seen[-1], wk.Stopped), seen[-1]
    phases = [m.phase for m in seen if isinstance(m, wk.Progress)]
    assert phase in phases and phases[phases.index(phase) :] == [phase] * (len(phases) - phases.index(phase))
    assert panel_run.handle_messages(bpy.context, run, [seen[-1]]) == "CANCELLED"
    assert sorted(bpy.data.actions.keys()) == actions and arm.animation_data.action.name == "OldAction"
    assert np.allclose(_basis(arm), rest) and "cancelled" in reports[-1][1]


def test_panel_choices_and_defaults_are_the_cores(addon):
    from dataclasses import fields

    from akd_blender.blender.panel import properties
    from akd_blender.core import settings as core

    rna = bpy.context.scene.akd.bl_rna.properties
    for name, choices in (("camera", core.CAMERA_MODES), ("start", core.START_MODES), ("device", core.DEVICES)):
        assert [item.identifier for item in rna[name].enum_items] == list(choices), name
        assert rna[name].default == getattr(core.DistillConfig, name), name
    assert [item.identifier for item in rna["keys"].enum_items] == list(core.KEY_MODES)
    assert rna["keys"].default == core.KEYS_DEFAULT == "sparse" and rna["set_scene_range"].default is False
    assert set(properties.LABELS) <= {f.name for f in fields(core.DistillConfig)} | {t.field for t in core.TUNABLES}
    models = [item.identifier for item in rna["model"].enum_items]
    assert models == ["TINY", "TINY_TEXT", *(m.ident for m in core.MODEL_CHOICES), "FOLDER"]
    assert {"COGVIDEOX_5B_I2V", "WAN_I2V_14B", "WAN_TI2V_5B"} <= set(models)
    scene = bpy.context.scene
    scene.akd.model = "WAN_TI2V_5B"
    try:
        assert properties.model_spec(scene.akd) == "Wan-AI/Wan2.2-TI2V-5B-Diffusers"
    finally:
        scene.akd.model = "TINY"


def test_the_advanced_tunables_default_to_the_core_and_reach_the_request(addon):
    from akd_blender.core.settings import TUNABLES

    rna = bpy.context.scene.akd.bl_rna.properties
    for t in TUNABLES:
        prop = rna[t.name]
        assert prop.type == ("INT" if t.kind is int else "FLOAT") and prop.name == t.label, t.name
        assert prop.default == pytest.approx(t.default(), rel=1e-6) and (prop.hard_min, prop.hard_max) == pytest.approx(
            (t.minimum, t.maximum)
        )
    arm = _character()
    settings = _settings()
    assert panel_run.snapshot(bpy.context, arm).request.config.sds.cfg_scale == TUNABLES[0].default()
    settings.cfg_scale, settings.t_max, settings.draw_steps = 4.5, 0.7, 11
    config = panel_run.snapshot(bpy.context, arm).request.config
    assert (config.sds.cfg_scale, config.sds.t_max, config.search.steps) == (4.5, 0.7, 11)
    settings.t_min = 0.9  # above Noise Max: the job names the setting by its label
    with pytest.raises(InputError, match="^Noise Min timestep range"):
        panel_run.snapshot(bpy.context, arm)
    for t in TUNABLES:
        setattr(settings, t.name, t.default())


def test_allow_nearest_tick_through_rna_reaches_the_request(addon):
    from akd_blender.core import settings as core

    rna = bpy.context.scene.akd.bl_rna.properties["allow_nearest"]
    assert rna.type == "BOOLEAN" and rna.name == "Allow nearest motion"
    assert rna.default is core.DistillConfig.allow_nearest is False
    arm = _character()
    settings = _settings()
    assert panel_run.snapshot(bpy.context, arm).request.config.allow_nearest is False
    settings.allow_nearest = True
    assert panel_run.snapshot(bpy.context, arm).request.config.allow_nearest is True
    settings.allow_nearest = False


def test_finish_shows_what_the_prompt_was_understood_as(addon):
    arm = _character()
    facts = {"understood_as": "a person waving hello", "motion": "biped/wave", "similarity": 0.8712, "understood": True}
    run, reports = _finish_with(_clip(arm), facts=facts)
    line = 'Understood as biped/wave ("a person waving hello", similarity 0.87)'
    assert bpy.context.window_manager.akd_run.understood == line and ({"INFO"}, line) in reports
    nearest = {**facts, "similarity": 0.3, "understood": False, "threshold": 0.42}
    run, reports = _finish_with(_clip(arm), facts=nearest)
    assert "below the 0.42 needed" in bpy.context.window_manager.akd_run.understood
    assert any("went ahead with the nearest, biped/wave" in line for line in run.warnings)
    run, reports = _finish_with(_clip(arm))  # a prior that reads no motion: no line
    assert bpy.context.window_manager.akd_run.understood == ""
