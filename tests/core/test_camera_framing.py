"""Framing: with ``contain`` every vertex of every frame stays inside the image (follow, fixed, orbit)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import CHARACTERS
from akd_blender.core.motion.library.labelled import MOTIONS, make_clip
from akd_blender.core.motion.physics.perturb import translate_root
from akd_blender.core.render import make_cameras, root_path
from akd_blender.core.render.camera import CAMERA_MODES, frame_extent

MARGIN = 0.05
CASES = [(character, spec.label) for character, specs in MOTIONS.items() for spec in specs]


def _posed(character: str, label: str, frames: int = 16) -> tuple:
    rig = CHARACTERS[character]()
    with torch.no_grad():
        return rig, Skeleton(rig)(make_clip(rig, character, label, frames=frames, fps=8.0))


@pytest.mark.parametrize(("character", "label"), CASES)
@pytest.mark.parametrize("mode", CAMERA_MODES)
def test_every_library_motion_stays_in_frame(character, label, mode):
    rig, vertices = _posed(character, label)
    for height, width in ((64, 64), (48, 80)):
        cams = make_cameras(rig, root_path(vertices), height, width, mode=mode, contain=vertices, margin=MARGIN)
        assert frame_extent(cams, vertices) <= 1.0 - MARGIN + 1e-9


def test_containment_backs_off_only_as_far_as_needed():
    rig, vertices = _posed("biped", "jump")
    plain = make_cameras(rig, root_path(vertices), 64, 64)
    assert frame_extent(plain, vertices) > 1.0  # the learnt framing loses the jump's top ...
    fitted = make_cameras(rig, root_path(vertices), 64, 64, contain=vertices, margin=MARGIN)
    extent = frame_extent(fitted, vertices)
    assert 1.0 - 2 * MARGIN < extent <= 1.0 - MARGIN  # ... the contained one keeps it, just inside the margin
    assert fitted.settings["distance"] > plain.settings["distance"]
    still, rest = _posed("quadruped", "wag_tail")
    same = make_cameras(still, root_path(rest), 64, 64, contain=rest)  # already inside: nothing changes
    assert torch.equal(same.view, make_cameras(still, root_path(rest), 64, 64).view)


def test_a_character_lifted_off_the_ground_is_kept_whole():
    rig = CHARACTERS["biped"]()
    clip = make_clip(rig, "biped", "raise_arms", frames=8, fps=8.0)
    lifted = translate_root(rig, clip, np.tile([0.0, 0.0, 0.5 * rig.height], (8, 1)))
    with torch.no_grad():
        vertices = Skeleton(rig)(lifted)
    for mode in CAMERA_MODES:
        cams = make_cameras(rig, root_path(vertices), 32, 32, mode=mode, views=2, contain=vertices)
        assert frame_extent(cams, vertices) <= 1.0 - MARGIN + 1e-9


def test_frame_extent_sees_a_vertex_outside_and_behind():
    rig, vertices = _posed("biped", "walk", frames=2)
    cams = make_cameras(rig, root_path(vertices), 32, 32)
    far = vertices.clone()
    far[0, 0] = cams.target[0] + 10 * (cams.target[0] - cams.eye[0])  # far beyond the target: still inside
    assert frame_extent(cams, far) < 1.0
    behind = vertices.clone()
    behind[0, 0] = cams.eye[0] - (cams.target[0] - cams.eye[0])
    assert frame_extent(cams, behind) == float("inf")
    with pytest.raises(Exception, match="contain must be"):
        make_cameras(rig, root_path(vertices), 32, 32, contain=vertices[:1])
