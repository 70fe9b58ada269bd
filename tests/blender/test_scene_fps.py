"""scene_fps: a scene's frame rate is ``render.fps / render.fps_base``, and the judge reads actions at it."""

from __future__ import annotations

import bpy
import pytest

from akd_blender.blender.character.io import scene_fps
from akd_blender.blender.cli.judge import action_clip

from .helpers import build_stress_rig

NTSC = 30000 / 1001  # 29.97 frames per second


def ntsc_scene() -> bpy.types.Scene:
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30000, 1001.0
    return scene


def test_scene_fps_divides_by_the_base():
    scene = ntsc_scene()
    assert scene_fps(scene) == pytest.approx(NTSC)
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert scene_fps(scene) == 24.0


def test_the_judge_reads_an_action_at_the_scene_rate():
    arm = build_stress_rig()
    action = bpy.data.actions.new("Nod")
    arm.animation_data_create().action = action
    spine = arm.pose.bones["spine"]
    spine.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (12, 0.4), (24, 0.0)):
        spine.rotation_euler = (angle, 0.0, 0.0)
        spine.keyframe_insert("rotation_euler", frame=frame)
    ntsc_scene()
    rig, clip = action_clip(None, "Nod")
    assert clip.fps == pytest.approx(NTSC)  # not render.fps alone (30000)
    assert clip.num_frames == 24 and clip.bone_names == rig.bone_names
