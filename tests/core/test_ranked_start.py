"""The prompt-ranked start of start "pose" (``DistillConfig.ranked_start``): the diffusion-classifier
score of :meth:`SDSPrior.prompt_scores` and the library start it chooses, with tiny random teachers
of the real diffusers classes (an image teacher of 64 channels: with 32 channels in 32 groups the
UNet's group norms erase the text's per-channel bias, and the prompt would change nothing; its text
projection scaled up) and a tiny
random CogVideoX for the base class's one-element-at-a-time path."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation.context import RunContext, first_frame
from akd_blender.core.distillation.ranked_start import HELD, candidates_for, render_params, score_candidates, start_from_ranking
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.motion.clip import MotionParams
from akd_blender.core.progress import Callbacks
from akd_blender.core.prompt.sentence_encoder import TextEncoder
from akd_blender.core.render import Renderer
from akd_blender.core.settings import DistillConfig, RedrawSettings, SettingError, config_from_dict
from akd_blender.core.video_models.base import SDSPrior
from akd_blender.core.video_models.tiny import TinyPrior
from akd_blender.core.video_models.tiny_network import TeacherConfig, build_unet

TINY = TeacherConfig(frames=4, height=16, width=16, channels=(64, 64), condition="image")
PROMPT = "a person walks forward"
# frames=4 at the teacher's size, no supersampling: every library start renders in milliseconds
CONFIG = DistillConfig(
    frames=4,
    steps=1,
    start="pose",
    ranked_start=True,
    device="cpu",
    supersample=1,
    height=16,
    width=16,
    redraw=RedrawSettings(noise=()),
)


@pytest.fixture(scope="module")
def prior() -> TinyPrior:
    torch.manual_seed(0)
    unet = build_unet(TINY)
    with torch.no_grad():  # the text's projection ×10: a random UNet otherwise hears the prompt only faintly
        unet.class_embedding.linear_1.weight.mul_(10.0)
    return TinyPrior(unet, TINY, TextEncoder(), "cpu", name="tiny")


@pytest.fixture(scope="module")
def scene(prior):
    """(rig, params at rest, skeleton, renderer, text with the rest pose's first frame, candidates)."""
    rig = biped()
    params = MotionParams(rig, CONFIG.frames, CONFIG.fps, keys=2)
    skeleton, renderer = Skeleton(rig), Renderer(rig, 16, 16, style=prior.render_style)
    text = prior.encode_text(PROMPT, kind="biped")
    text = replace(text, first_frame=first_frame(rig, params, skeleton, renderer, CONFIG, prior.camera_options))
    return rig, params, skeleton, renderer, text, candidates_for(rig, params, CONFIG)


def _context(prior, scene, text=None) -> RunContext:
    """The scene as a distillation's :class:`RunContext` (``text`` instead of the scene's when given)."""
    rig, params, skeleton, renderer, scene_text, _ = scene
    return RunContext(rig, prior, text or scene_text, CONFIG, params, skeleton, renderer, prior.camera_options, None, Callbacks())


@pytest.fixture(scope="module")
def scores(prior, scene) -> torch.Tensor:
    """Every candidate's score [S+1] (:func:`score_candidates`, once for the module)."""
    return score_candidates(scene[-1], _context(prior, scene))


def _videos(seed: int = 0) -> torch.Tensor:
    return torch.rand(3, 4, 3, 16, 16, generator=torch.Generator().manual_seed(seed))  # [S,F,3,H,W]


def _scores(prior, text, videos, seed: int = 0, **kw) -> torch.Tensor:
    return prior.prompt_scores(videos, text, generator=torch.Generator().manual_seed(seed), **kw)


# prompt_scores -----------------------------------------------------------------------------------
def test_prompt_scores_are_one_per_video_and_the_same_for_a_seed(prior, scene):
    text, videos = scene[4], _videos()
    a, b = _scores(prior, text, videos), _scores(prior, text, videos)
    assert a.shape == (3,) and a.dtype == torch.float32 and torch.isfinite(a).all()
    assert torch.equal(a, b)
    assert not torch.equal(a, _scores(prior, text, videos, seed=1))  # other noise, other estimate
    assert float(a.abs().max()) > 1e-4 and len(set(a.tolist())) == 3  # the prompt is heard, videos differ
    # batches of one give the same scores as one batch of three (the noise is shared by all videos)
    assert torch.allclose(_scores(prior, text, videos, batch=1), a, atol=1e-5, rtol=1e-4)
    # scored alone with an equally seeded generator, a video gets the score it got among others
    assert torch.allclose(_scores(prior, text, videos[1:2]), a[1:2], atol=1e-5, rtol=1e-4)


def test_the_teachers_batched_branches_equal_the_base_class_one_at_a_time(prior, scene):
    text = scene[4]
    noisy, step = torch.randn(3, 12, 16, 16), torch.tensor(400)
    batched = prior._predict_pair(noisy, step, text)
    single = SDSPrior._predict_pair(prior, noisy, step, text)
    for got, want in zip(batched, single, strict=True):
        assert got.shape == (3, 12, 16, 16)
        assert torch.allclose(got, want, atol=1e-5, rtol=1e-4)


def test_a_prompt_that_changes_nothing_scores_zero_and_swapped_branches_negate(prior, scene):
    text, videos = scene[4], _videos()
    same = _scores(prior, replace(text, uncond=text.cond), videos)
    assert torch.allclose(same, torch.zeros(3), atol=1e-7)
    swapped = _scores(prior, replace(text, cond=text.uncond, uncond=text.cond), videos)
    assert torch.allclose(swapped, -_scores(prior, text, videos), atol=1e-6, rtol=1e-4)


def test_prompt_scores_through_the_base_class_path_of_a_diffusers_prior():
    from akd_blender.core.video_models.cogvideox import CogVideoXPrior
    from tests.core.dummy_priors import cogvideox_pipeline

    cog = CogVideoXPrior(cogvideox_pipeline(), name="tiny-cogvideox", device="cpu")
    text = cog.encode_text("a fox walks forward")
    videos = torch.rand(2, 5, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    got = _scores(cog, text, videos, t_values=(0.5, 0.8), draws=1)
    assert got.shape == (2,) and torch.isfinite(got).all() and float(got.abs().max()) > 0
    assert torch.equal(got, _scores(cog, text, videos, t_values=(0.5, 0.8), draws=1))
    assert torch.allclose(_scores(cog, replace(text, uncond=text.cond), videos, t_values=(0.5,), draws=1), torch.zeros(2))


def test_prompt_scores_refuse_what_they_cannot_score(prior, scene):
    text = scene[4]
    with pytest.raises(ValueError, match="videos"):
        prior.prompt_scores(torch.rand(4, 3, 16, 16), text)
    with pytest.raises(ValueError, match="uncond"):
        prior.prompt_scores(_videos(), replace(text, uncond=None))


# The ranked start ----------------------------------------------------------------------------------
def test_the_candidates_are_the_held_pose_and_the_library_starts_and_score_one_each(prior, scene, scores):
    rig, params, skeleton, renderer, text, candidates = scene
    assert candidates.names[0] == HELD and len(candidates.names) > 50 and len(set(candidates.names)) == len(candidates.names)
    assert any(n.startswith("walk ") for n in candidates.names) and any(n.startswith("wave ") for n in candidates.names)
    assert scores.shape == (len(candidates.names),) and torch.isfinite(scores).all()
    assert torch.equal(candidates.scores, scores)
    assert float(params.rotvec.detach().abs().max()) == 0 and float(params.root_offset.detach().abs().max()) == 0  # held pose
    # a start's keys play its motion: its render differs from the held pose's
    candidates.apply(1)
    moved = render_params(_context(prior, scene))
    candidates.apply(0)
    held = render_params(_context(prior, scene))
    assert float((moved - held).abs().max()) > 0.05


def test_the_prompt_chooses_the_start_and_the_keys_are_its(prior, scene, scores):
    rig, params, skeleton, renderer, text, candidates = scene
    facts = start_from_ranking(_context(prior, scene))
    best = int(scores.argmax())
    assert facts["search_start"] == candidates.names[best] and facts["ranked_starts"] == len(candidates.names)
    assert facts["ranked_score"] == pytest.approx(float(scores[best]), abs=1e-6)
    assert facts["ranked_margin"] == pytest.approx(float(scores[best] - scores[0]), abs=1e-6)
    json.dumps(facts)
    rotvec, root = candidates.keys(best)
    assert torch.allclose(params.rotvec, rotvec) and torch.allclose(params.root_offset, root)
    # the other branch's reading flips the ranking: the worst start wins
    candidates.apply(0)  # from the held pose again
    swapped = replace(text, cond=text.uncond, uncond=text.cond)
    flipped = start_from_ranking(_context(prior, scene, swapped))
    assert flipped["search_start"] == candidates.names[int(scores.argmin())] != facts["search_start"]
    candidates.apply(0)


def test_distill_begins_the_steps_from_the_ranked_start_and_reports_it(prior):
    rig = biped()
    still = replace(CONFIG, lr=1e-7, root_lr=1e-7)  # the one step barely moves: the clip is the start
    ranked = distill(rig, PROMPT, still, prior=prior)
    plain = distill(rig, PROMPT, replace(still, ranked_start=False), prior=prior)
    assert "search_start" not in plain.extra and "ranked_start" not in plain.timings
    name = ranked.extra["search_start"]
    params = MotionParams(rig, CONFIG.frames, CONFIG.fps, keys=2)
    candidates = candidates_for(rig, params, CONFIG)
    assert name in candidates.names and ranked.extra["ranked_starts"] == len(candidates.names)
    assert "ranked_start" in ranked.timings
    candidates.apply(candidates.names.index(name))
    want = params.to_clip()
    assert np.abs(ranked.clip.rotations - want.rotations).max() < 1e-3
    assert np.abs(ranked.clip.locations - want.locations).max() < 1e-3
    if name != HELD:
        assert np.abs(ranked.clip.rotations - plain.clip.rotations).max() > 1e-2


def test_ranked_start_needs_a_prior_that_scores_by_a_prompt():
    from akd_blender.core.video_models.protocol import TextEmbedding

    class Listener:  # a VideoPrior without prompt_scores (the protocol does not require it)
        name, frames, height, width = "listener", 4, 16, 16

        def encode_text(self, prompt, negative_prompt=""):
            return TextEmbedding(prompt, negative_prompt, torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))

        def sds_loss(self, video, text, step, total_steps, generator=None, region=None):
            return {"loss": video.mean() * 0}

        def free(self):
            pass

    with pytest.raises(SettingError, match="ranked_start"):
        distill(biped(), PROMPT, CONFIG, prior=Listener())


def test_the_setting_defaults_off_and_round_trips_through_a_report():
    assert DistillConfig().ranked_start is False
    config = replace(DistillConfig(), start="pose", ranked_start=True)
    back = config_from_dict(json.loads(json.dumps(config.as_dict())))
    assert back == config and back.ranked_start is True
    assert config_from_dict(DistillConfig().as_dict()).ranked_start is False
