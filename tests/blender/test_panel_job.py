"""The panel and the command line build the same job for the same settings.

Real bpy: the panel's scene properties are set as a user sets them, the Distill Motion operator's
request is built (``panel_run.snapshot``); the equivalent flags are parsed (``cli_parser.parse_jobs``) and
the command line's request is built for the same armature (``job_settings.armature_request``, what ``run_one``
runs). The two ``JobRequest`` are compared field by field, the rig and the starting pose by content.
Also: the panel refuses a number out of range by its label.
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass

import bpy
import numpy as np
import pytest

import akd_blender
from akd_blender.blender.cli import parser as cli_parser
from akd_blender.blender.job import settings as job_settings
from akd_blender.blender.panel import run as panel_run
from akd_blender.core.character.procedural import biped
from akd_blender.core.errors import InputError
from akd_blender.core.settings import TUNABLES

PROMPT = "a person waves the right arm"


@pytest.fixture
def character():
    """The procedural biped, active, in a fresh scene with the add-on registered (default settings)."""
    from akd_blender.blender.build import armature_from_rig

    bpy.ops.wm.read_homefile(use_empty=True)
    akd_blender.register()
    arm = armature_from_rig(biped())
    arm.select_set(True)
    bpy.context.view_layer.objects.active = arm
    yield arm
    akd_blender.unregister()


def _same(a, b, where: str = "request") -> None:
    """Assert ``a`` equals ``b`` field by field (dataclasses recursively, arrays by value)."""
    if is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, list | tuple) and any(isinstance(v, np.ndarray) for v in a):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: panel {a!r}, command line {b!r}"


def _cli_request(arm, *flags: str):
    (job,), _ = cli_parser.parse_jobs(["--input", "scene.blend", "--prompt", PROMPT, "--out", "result.blend", *flags])
    from akd_blender.blender.character.extract import rig_from_armature

    return job_settings.armature_request(job, arm, rig_from_armature(arm))


def test_default_panel_settings_are_the_command_lines_defaults(character):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 48
    settings = scene.akd
    settings.prompt = PROMPT
    settings.preview_every = 0  # the panel's live pose updates; the command line has none
    panel = panel_run.snapshot(bpy.context, character).request
    line = _cli_request(character, "--frames", "48")
    _same(panel, line)
    assert panel.config.height is None and panel.config.width is None  # the model's own size, as the CLI's


def test_every_panel_setting_reaches_the_job_as_its_flag_does(character):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 3, 12
    scene.render.fps, scene.render.fps_base = 30, 1.0
    character.pose.bones[2].rotation_mode = "QUATERNION"
    character.pose.bones[2].rotation_quaternion = (0.9, 0.3, 0.0, 0.0)  # a starting pose that is not the rest pose
    s = scene.akd
    s.prompt, s.negative_prompt, s.allow_nearest = PROMPT, "blurry", True
    s.use_scene_fps, s.fps = False, 25
    s.auto_steps, s.steps = False, 7
    s.resolution = 40  # typing a resolution turns Auto Resolution off
    s.seed, s.camera, s.start, s.redraw = 5, "orbit", "pose", "0.8,0.4"
    s.loop, s.physics, s.device, s.preview_every = True, True, "cpu", 0
    s.cfg_scale, s.t_max, s.draw_steps, s.lr, s.prompt_prior = 4.5, 0.7, 11, 0.005, 0.25
    panel = panel_run.snapshot(bpy.context, character).request
    line = _cli_request(
        character,
        *("--negative-prompt", "blurry", "--allow-nearest", "--frames", "10", "--fps", "25", "--steps", "7"),
        *("--height", "40", "--width", "40", "--seed", "5", "--camera", "orbit", "--start", "pose"),
        *("--redraw", "0.8,0.4", "--loop", "--physics", "--device", "cpu"),
        *("--cfg-scale", "4.5", "--t-max", "0.7", "--draw-steps", "11", "--lr", "0.005", "--prompt-prior", "0.25"),
    )
    _same(panel, line)
    config = panel.config
    assert (config.frame_start, config.frames, config.fps, config.steps, config.height) == (3, 10, 25.0, 7, 40)
    assert (config.sds.cfg_scale, config.search.steps, config.redraw.noise, panel.physics) == (4.5, 11, (0.8, 0.4), True)
    assert not np.allclose(panel.init_pose.rotations[0, 2], [1.0, 0.0, 0.0, 0.0])  # the pose shown is the start


FLOAT_SETTINGS = [t for t in TUNABLES if t.kind is float]


@pytest.mark.parametrize("tunable", FLOAT_SETTINGS, ids=[t.name for t in FLOAT_SETTINGS])
def test_the_panel_refuses_a_number_that_is_not_one(character, tunable):
    """Blender clamps a setting to its range but keeps NaN: the job refuses it, naming the label."""
    settings = bpy.context.scene.akd
    settings.prompt = PROMPT
    setattr(settings, tunable.name, math.nan)
    with pytest.raises(InputError, match=f"^{tunable.label} must be a number"):
        panel_run.snapshot(bpy.context, character)


def test_every_numeric_panel_setting_is_held_to_the_cores_range(character):
    """Each integer or float property of the panel (from its RNA, so a new one is included) has a hard
    minimum the job accepts: set to it, the job builds (Noise Max at its minimum with Noise Min below
    it; Frames from the panel's own range: the End at its minimum leaves 1 frame, refused by name)."""
    settings = bpy.context.scene.akd
    settings.prompt = PROMPT
    rna = settings.bl_rna.properties
    numeric = [p.identifier for p in rna if p.type in {"INT", "FLOAT"}]
    assert {"steps", "seed", "resolution", "fps", "preview_every", "frame_start", "frame_end"} <= set(numeric)
    settings.auto_steps, settings.use_scene_fps, settings.use_scene_range = False, False, False
    for name in numeric:
        default = getattr(settings, name)
        if name == "t_max":
            settings.t_min = 0.0
        setattr(settings, name, rna[name].hard_min)
        if name == "frame_end":
            with pytest.raises(InputError, match="^Frames must be at least 2"):
                panel_run.snapshot(bpy.context, character)
        else:
            panel_run.snapshot(bpy.context, character)
        setattr(settings, name, -1 if rna[name].hard_min >= 0 else rna[name].hard_min - 1)
        assert getattr(settings, name) == pytest.approx(rna[name].hard_min)  # Blender clamps to it
        setattr(settings, name, default)
        settings.t_min = rna["t_min"].default
