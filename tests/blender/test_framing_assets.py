"""Framing of the artist rigs: with ``contain`` every vertex of every frame is inside the image."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
import torch

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.blender.character.pose_channels import current_pose
from akd_blender.blender.keys.keyframes import read_clip
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.physics.perturb import translate_root
from akd_blender.core.render import make_cameras, render_clip, root_path
from akd_blender.core.render.camera import CAMERA_MODES, frame_extent

MARGIN = 0.05


def _clips(arm, rig) -> list[MotionClip]:
    """The pose the file shows held, each imported action (first 24 frames), and a jump of a third of
    the height (up and down over 12 frames) from the shown pose."""
    start = current_pose(arm)
    held = MotionClip(rig.bone_names, 24.0, 1, np.repeat(start.rotations, 12, 0), np.repeat(start.locations, 12, 0))
    rise = np.sin(np.linspace(0.0, np.pi, 12)) * rig.height / 3
    clips = [held, translate_root(rig, held, np.stack([np.zeros(12), np.zeros(12), rise], 1))]
    for action in list(bpy.data.actions)[:3]:
        first = int(action.frame_range[0])
        clips.append(read_clip(arm, first, first + 23, action=action))
    return clips


@pytest.mark.parametrize("name", ["CesiumMan", "RiggedFigure", "Fox", "RiggedSimple"])
def test_artist_rigs_stay_in_frame(assets, name):
    load_scene(str(assets[name]))
    arm = find_armature()
    rig = rig_from_armature(arm)
    for clip in _clips(arm, rig):
        with torch.no_grad():
            vertices = Skeleton(rig)(clip)
        for mode in CAMERA_MODES:
            cams = make_cameras(rig, root_path(vertices), 48, 64, mode=mode, contain=vertices, margin=MARGIN)
            assert frame_extent(cams, vertices) <= 1.0 - MARGIN + 1e-9, (name, mode)


def test_contained_preview_shows_the_whole_character(assets):
    """The rendered alpha of a contained preview never touches the image border (CesiumMan jumping)."""
    load_scene(str(assets["CesiumMan"]))
    arm = find_armature()
    rig = rig_from_armature(arm)
    jump = _clips(arm, rig)[1]
    alpha = render_clip(rig, jump, 48, 48, backend="torch", contain=True)[:, 3]
    border = torch.cat([alpha[:, 0], alpha[:, -1], alpha[:, :, 0], alpha[:, :, -1]], -1)
    assert float(border.max()) < 0.05 and float(alpha.amax()) > 0.5
    cropped = render_clip(rig, jump, 48, 48, backend="torch")[:, 3]  # the learnt framing loses his head
    assert float(torch.cat([cropped[:, 0], cropped[:, -1]], -1).max()) > 0.5
