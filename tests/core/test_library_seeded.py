"""The library-seeded job of an image-to-video model (tiny random CogVideoX-I2V of the real diffusers
classes, CPU): a prompt read as a library motion starts from that motion, and the SDS steps after it
keep it where the model's gradient is zero (the stay-close term holds it against the regularisers)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from akd_blender.core.character.procedural import biped
from akd_blender.core.character.roles import find_roles
from akd_blender.core.distillation import sds_steps
from akd_blender.core.distillation.library_start import write_library_start
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.motion.clip import MotionParams
from akd_blender.core.prompt.reading import choose_library_motion
from akd_blender.core.settings import DistillConfig, SDSSettings
from akd_blender.core.video_models.cogvideox_i2v import CogVideoXImageToVideoPrior
from akd_blender.core.video_models.frames import resample_frames
from tests.core.dummy_priors import cogvideox_i2v_pipeline

PROMPT = "a person walking ahead"
FRAMES, KEYS = 8, 4
#: the latent gradient clipped to ±0: the real model is queried every step and moves nothing
NO_GRADIENT = SDSSettings(mode="score", target_space="latent", grad_clip=0.0)


def angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle (radians) between quaternions a and b [F,J,4], per frame and bone."""
    return 2 * np.arccos(np.clip(np.abs(np.einsum("fji,fji->fj", a, b)), 0.0, 1.0))


@pytest.fixture(scope="module")
def setup():
    rig = biped()
    roles = find_roles(rig)
    choice, _ = choose_library_motion(PROMPT, roles.kind)
    assert choice is not None and choice.label == "walk"
    config = DistillConfig(frames=FRAMES, keys=KEYS, fps=24.0, device="cpu", preview_every=0, steps=3, sds=NO_GRADIENT)
    params = MotionParams(rig, FRAMES, config.fps, keys=KEYS, interpolation=config.interpolation)
    write_library_start(rig, roles, choice, params)
    prior = CogVideoXImageToVideoPrior(cogvideox_i2v_pipeline(), name="tiny cogvideox-i2v", device="cpu")
    return rig, config, prior, params.to_clip()


def test_the_video_model_starts_from_the_library_motion_and_keeps_it(setup):
    rig, config, prior, library = setup
    drawn = []
    prior.sample = lambda *args, **kwargs: drawn.append(1)  # a drawing would be a fresh start: none is made
    try:
        result = distill(rig, PROMPT, config, prior=prior)
    finally:
        del prior.sample
    assert not drawn and result.extra["start"] == "library" and result.extra["library_motion"] == "walk"
    assert len(result.history) == 3 and all("sds_t" in row and row["sds"] == 0.0 for row in result.history)
    assert all(row["stay"] >= 0.0 for row in result.history)
    moved = angles(result.clip.rotations, library.rotations)
    assert moved.max() < 0.03, moved.max()  # radians: the library motion, kept
    assert np.abs(result.clip.locations - library.locations).max() < 0.01 * rig.height


def test_without_the_stay_close_term_the_regularisers_move_it_further(setup, monkeypatch):
    rig, config, prior, library = setup
    kept = distill(rig, PROMPT, config, prior=prior)
    monkeypatch.setattr(sds_steps, "STAY_CLOSE_WEIGHT", 0.0)
    free = distill(rig, PROMPT, config, prior=prior)
    assert "stay" not in free.history[0]
    assert angles(free.clip.rotations, library.rotations).mean() > 2 * angles(kept.clip.rotations, library.rotations).mean()


def test_stay_close_loss_is_the_squared_change_from_the_anchor():
    rotvec, root = torch.zeros(3, 2, 3), torch.zeros(3, 3)
    anchor = (rotvec.clone(), root.clone())
    assert sds_steps.stay_close_loss(rotvec, root, anchor, 2.0) == 0.0
    rotvec[0, 1] = torch.tensor([0.3, 0.0, 0.4])  # 0.5 rad on one of 6 bone keys
    root[1] = torch.tensor([0.0, 0.0, 2.0])  # one character height on one of 3 keys
    assert torch.isclose(sds_steps.stay_close_loss(rotvec, root, anchor, 2.0), torch.tensor(0.25 / 6 + 1.0 / 3))


def test_the_steps_show_the_model_its_own_frame_count(setup):
    """A clip longer than the model's (25 frames against its 9) is rendered at the model's 9 frame times
    for each query: the render and its graph are the model's size, the clip keeps its 25 frames."""
    rig, config, prior, _ = setup
    clip_frames = 3 * prior.frames - 2
    seen, query = [], prior.sds_loss

    def counted(video, *args, **kwargs):
        seen.append(video.shape[0])
        return query(video, *args, **kwargs)

    prior.sds_loss = counted
    try:
        result = distill(rig, PROMPT, replace(config, frames=clip_frames, steps=2), prior=prior)
    finally:
        del prior.sds_loss
    assert seen and set(seen) == {prior.frames}
    assert result.clip.rotations.shape[0] == clip_frames and len(result.history) == 2


def test_vertices_resampled_in_time_land_on_the_frames_they_cover():
    vertices = torch.arange(25.0).view(25, 1, 1).expand(25, 4, 3)  # frame f: every coordinate f
    shown = resample_frames(vertices, 9)  # times 0, 3, …, 24
    assert torch.equal(shown[:, 0, 0], torch.arange(0.0, 25.0, 3.0))
    assert sds_steps.shown_frames(9, 25, 1) == 9
    assert sds_steps.shown_frames(9, 9, 1) is None and sds_steps.shown_frames(9, 25, 2) is None
    assert sds_steps.shown_frames(None, 25, 1) is None
