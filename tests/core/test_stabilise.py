"""Camera shake taken out of a drawing before the fit (core/fitting/stabilise.py), on renders of a walking biped."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.fitting.stabilise import SHAKE_THRESHOLD, camera_shake, frame_shifts, shifted, stabilised
from akd_blender.core.motion.library.labelled import Variation, biped_walk, neutral_clip
from akd_blender.core.render import Renderer, make_cameras, root_path
from akd_blender.core.settings import DistillConfig, SearchSettings
from tests.core.test_pose_search import DrawsOneVideo

SIZE, FRAMES = 32, 16


@pytest.fixture(scope="module")
def rig():
    return biped()


@pytest.fixture(scope="module")
def walk(rig) -> torch.Tensor:
    """A walk as the follow camera renders it (2× supersampled): [F,3,32,32]."""
    renderer = Renderer(rig, 2 * SIZE, 2 * SIZE, backend="torch", device="cpu")
    clip = biped_walk(rig, FRAMES, 8.0, Variation())
    with torch.no_grad():
        vertices = Skeleton(rig)(clip)
        rgba = renderer.render(vertices, make_cameras(rig, root_path(vertices), 2 * SIZE, 2 * SIZE))
    return torch.nn.functional.avg_pool2d(rgba[:, :3], 2)


def _shake(frames: int, size: float = 1.2) -> torch.Tensor:
    """Per-frame camera offsets [F,2] of up to ``size`` pixels either way (seeded)."""
    return (torch.rand(frames, 2, generator=torch.Generator().manual_seed(3)) * 2 - 1) * size


def test_the_shift_between_two_frames_is_read_to_a_tenth_of_a_pixel(walk):
    for move in ((1.25, -0.5), (-2.0, 0.75), (0.0, 0.0)):
        pair = torch.stack([walk[4], shifted(walk[4:5], torch.tensor([move]))[0]])
        assert torch.allclose(frame_shifts(pair)[0], torch.tensor(move), atol=0.1)


def test_a_steady_drawing_comes_back_as_it_is(walk):
    out, size = stabilised(walk)
    assert size < 0.5 * SHAKE_THRESHOLD
    assert out is walk


def test_a_shaken_drawing_is_steadied(walk):
    """Measured: the shake read correlates 0.85 with the one applied; the steadied drawing's mean
    difference from the steady one is 0.65 × the shaken one's (undoing the exact offsets: 0.37 ×, the
    rest is the two interpolations' blur)."""
    offsets = _shake(FRAMES)
    shaken = shifted(walk, offsets)
    shake = camera_shake(shaken)
    assert shake.shape == (FRAMES, 2)
    assert torch.corrcoef(torch.stack([shake.flatten(), offsets.flatten()]))[0, 1] > 0.8
    out, size = stabilised(shaken)
    assert size > SHAKE_THRESHOLD
    assert float((out - walk).abs().mean()) < 0.75 * float((shaken - walk).abs().mean())
    short, _ = stabilised(shaken[:2])  # two frames: no path to read a shake from
    assert torch.equal(short, shaken[:2])


def test_the_distillation_reports_the_drawing_shake_and_can_leave_it(rig, walk):
    drawing = shifted(walk, _shake(FRAMES))
    config = DistillConfig(
        frames=FRAMES,
        fps=8.0,
        keys=FRAMES,
        steps=0,
        device="cpu",
        supersample=2,
        start="sample",
        search=SearchSettings(scales=()),
    )
    steadied = distill(rig, "a person walks", config, DrawsOneVideo(drawing), init_pose=neutral_clip(rig))
    assert steadied.extra["drawing_shake"] > SHAKE_THRESHOLD
    left = replace(config, search=replace(config.search, stabilise=False))
    as_drawn = distill(rig, "a person walks", left, DrawsOneVideo(drawing), init_pose=neutral_clip(rig))
    assert as_drawn.extra["drawing_shake"] == 0.0
