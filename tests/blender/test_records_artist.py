"""Motions played from records on artist rigs: the glTF humans (CesiumMan, RiggedFigure, Y-up) play
every biped record and the glTF Fox every quadruped record, each showing its declared checks and
the craft (nothing through the floor, no jumps between frames) on the skinned mesh."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.library import role_motion
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.motion.library.records import records_for
from tests.conftest import ASSET_FILES
from tests.core.library_checks import Measured
from tests.core.record_checks import check_craft, check_fact

RIGS = {"CesiumMan": "biped", "RiggedFigure": "biped", "Fox": "quadruped"}
CASES = [(name, record.label) for name, kind in RIGS.items() for record in records_for(kind)]


@functools.cache
def _rig(name: str):
    load_scene(str(ASSET_FILES[name]))
    rig = rig_from_armature(find_armature())
    return rig, find_roles(rig)


@pytest.mark.parametrize("name,label", CASES, ids=[f"{n}-{lab}" for n, lab in CASES])
def test_every_record_of_its_kind_shows_its_checks_on_the_artist_rig(assets, name, label):
    rig, roles = _rig(name)
    kind = RIGS[name]
    assert roles.kind == kind
    record = next(r for r in records_for(kind) if r.label == label)
    spec = role_motion(kind, label)
    clip = spec.generate(rig, roles, 24, 12.0, Variation())
    assert clip.matches(rig)
    m = Measured(rig, roles, clip, 0.0)
    speed = max([3.0] + [float(c["max_speed"]) for c in record.checks if "max_speed" in c])
    check_craft(m, speed, eases=not record.cyclic)
    for check in record.checks:
        if "max_speed" not in check:
            check_fact(m, check, "right")
    assert np.isfinite(m.verts).all()
