"""Gait styles (``Variation.style``) on the artist rigs imported by Blender's glTF importer (CesiumMan,
RiggedFigure, the Fox) and on Rigify's generated human and basic quadruped read as the job reads them
(``job_rig``: segments their controls turn together tied): each style does what it says against the
rig's plain walk, measured on the skinned mesh (the checks of ``tests/core/test_gait_styles.py``),
nothing goes below the floor and planted feet slide no more than the walk's."""

from __future__ import annotations

import functools

import bpy
import numpy as np
import pytest

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.blender.job.rig import job_rig
from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.library import GAIT_STYLES, make_role_clip
from akd_blender.core.motion.library.labelled import Variation
from tests.conftest import ASSET_FILES
from tests.core.library_checks import Measured
from tests.core.test_gait_styles import CHECKS, FPS, FRAMES, lowest, slip

from .rig_zoo import rigify_rig

RIGS = {
    "CesiumMan": "biped",
    "RiggedFigure": "biped",
    "Fox": "quadruped",
    "rigify_human": "biped",
    "rigify_basic_quadruped": "quadruped",
}
CASES = [(name, style) for name, kind in RIGS.items() for style in GAIT_STYLES[kind]]


@functools.cache
def _rig(name: str):
    if name.startswith("rigify_"):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        armature, _ = rigify_rig(name.removeprefix("rigify_"))
        rig = job_rig(armature, None)
    else:
        load_scene(str(ASSET_FILES[name]))
        rig = rig_from_armature(find_armature())
    return rig, find_roles(rig)


@functools.cache
def _measured(name: str, style: str | None) -> Measured:
    rig, roles = _rig(name)
    return Measured(rig, roles, make_role_clip(rig, roles, "walk", Variation(style=style), FRAMES, FPS), 0.0)


@pytest.mark.parametrize("name,style", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_style_shows_on_the_artist_rig(assets, name, style):
    m, walk = _measured(name, style), _measured(name, None)
    assert m.roles.kind == RIGS[name]
    assert np.isfinite(m.verts).all()
    CHECKS[style](m, walk)
    assert lowest(m) > -0.005, lowest(m)
    assert slip(m) <= slip(walk) + 0.05, (slip(m), slip(walk))
