"""The image-to-video adapters (CogVideoX-I2V, Wan2.1-I2V, Wan2.2-TI2V) with tiny random models of the
real diffusers classes (CPU, nothing downloaded): loading, first-frame conditioning, drawing, SDS."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation.plan import resolve_start
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionParams
from akd_blender.core.render import Renderer, make_cameras, root_path
from akd_blender.core.settings import DistillConfig, SearchSettings
from akd_blender.core.video_models import ALIASES, VideoPrior, load_prior
from akd_blender.core.video_models.cogvideox import CogVideoXPrior
from akd_blender.core.video_models.cogvideox_i2v import CogVideoXImageToVideoPrior
from akd_blender.core.video_models.registry import resolve_spec
from akd_blender.core.video_models.wan import WanPrior
from akd_blender.core.video_models.wan_i2v import WanImageToVideoPrior
from tests.core.dummy_priors import (
    cogvideox_i2v_pipeline,
    cogvideox_pipeline,
    save_pipeline,
    wan_i2v_pipeline,
    wan_pipeline,
    wan_ti2v_pipeline,
)

PROMPT = "a person walks forward"
BUILDS = {"cogvideox-i2v": cogvideox_i2v_pipeline, "wan2.1-i2v": wan_i2v_pipeline, "wan2.2-ti2v": wan_ti2v_pipeline}


def small(prior):
    """The Wan adapters at 9 frames of 32 × 32 (their published clips are far too large for a CPU test)."""
    if isinstance(prior, WanImageToVideoPrior):
        prior.frames, prior.height, prior.width = 9, 32, 32
    return prior


def build(name: str):
    adapter = CogVideoXImageToVideoPrior if name == "cogvideox-i2v" else WanImageToVideoPrior
    return small(adapter(BUILDS[name](), name=name, device="cpu"))


@pytest.fixture(scope="module")
def priors() -> dict:
    return {name: build(name) for name in BUILDS}


@pytest.fixture(params=list(BUILDS))
def prior(request, priors):
    return priors[request.param]


def frames():
    """Two different first frames [3,24,24] (a grey square on dark, a red one on light), as renders are."""
    a, b = torch.full((3, 24, 24), 0.1), torch.full((3, 24, 24), 0.9)
    a[:, 6:18, 8:16] = 0.6
    b[0, 4:20, 4:20], b[1:, 4:20, 4:20] = 0.9, 0.1
    return a, b


def draw(prior, first, seed=0, steps=2):
    return prior.sample(prior.encode_text(PROMPT), first, torch.Generator().manual_seed(seed), guidance=3.0, steps=steps)


def test_the_adapters_are_image_conditioned_priors(priors):
    for prior in priors.values():
        assert isinstance(prior, VideoPrior) and prior.image_conditioned and callable(prior.sample)
        assert prior.fps > 0
    cog = priors["cogvideox-i2v"]
    assert (cog.frames, cog.height, cog.width, cog.fps) == (9, 16, 16, 8.0)  # the tiny model's sample size
    assert priors["wan2.2-ti2v"].expand_timesteps and not priors["wan2.1-i2v"].expand_timesteps
    assert priors["wan2.1-i2v"].image_tokens
    # The published clips of the Wan models (before `small` lowers them for this test).
    t2v = WanImageToVideoPrior(wan_ti2v_pipeline(), device="cpu")
    i2v = WanImageToVideoPrior(wan_i2v_pipeline(), device="cpu")
    assert (t2v.frames, t2v.height, t2v.width, t2v.fps) == (121, 704, 1280, 24.0)
    assert (i2v.frames, i2v.height, i2v.width, i2v.fps) == (81, 480, 832, 16.0)


def test_sample_shape_range_and_determinism(prior):
    first, _ = frames()
    video = draw(prior, first)
    assert video.shape == (prior.frames, 3, prior.height, prior.width)
    assert torch.isfinite(video).all() and video.min() >= 0 and video.max() <= 1
    assert torch.equal(video, draw(prior, first))  # same seed, same drawing
    assert not torch.equal(video, draw(prior, first, seed=1))


def test_first_frame_changes_the_drawing_and_the_sds_target(prior):
    a, b = frames()
    assert (draw(prior, a) - draw(prior, b)).abs().max() > 1e-4
    text = prior.encode_text(PROMPT)
    video = torch.rand(9, 3, 24, 24)
    losses = [
        prior.sds_loss(video, replace(text, first_frame=f), 0, 10, torch.Generator().manual_seed(0))["loss"] for f in (a, b)
    ]
    assert not torch.allclose(losses[0], losses[1])


def test_progress_is_called_per_step_and_can_stop_the_drawing(prior):
    first, _ = frames()
    seen = []
    prior.sample(
        prior.encode_text(PROMPT), first, torch.Generator().manual_seed(0), steps=3, progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(1, 3), (2, 3), (3, 3)]

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        prior.sample(prior.encode_text(PROMPT), first, steps=3, progress=stop)


def test_missing_or_bad_first_frame_is_one_line(priors):
    prior = priors["cogvideox-i2v"]
    with pytest.raises(InputError, match="first frame") as err:
        prior.sample(prior.encode_text(PROMPT), steps=1)
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="first frame"):
        prior.sds_loss(torch.rand(9, 3, 16, 16), prior.encode_text(PROMPT), 0, 1, torch.Generator().manual_seed(0))
    with pytest.raises(InputError, match=r"\[3,H,W\]"):
        prior.sample(prior.encode_text(PROMPT), torch.rand(16, 16), steps=1)


@pytest.mark.parametrize("mode", ["target", "score"])
def test_sds_gradient_reaches_the_joints(prior, mode):
    rig = biped()
    params = MotionParams(rig, 9, keys=3)
    skeleton, renderer = Skeleton(rig), Renderer(rig, 24, 24, backend="torch", device="cpu")
    vertices = skeleton(params)
    video = renderer.render(vertices, make_cameras(rig, root_path(vertices), 24, 24))[:, :3]
    text = replace(prior.encode_text(PROMPT), first_frame=video[0].detach())
    settings = replace(prior.settings, mode=mode, target_space="pixel" if mode == "target" else "latent")
    out = prior.sds_loss(video, text, 0, 10, torch.Generator().manual_seed(0), settings=settings)
    out["loss"].backward()
    for grad in (params.rotvec.grad, params.root_offset.grad):
        assert grad is not None and torch.isfinite(grad).all() and grad.abs().sum() > 0
    if mode == "target":
        assert out["target_video"].shape == (9, 3, 24, 24)  # resampled back to the caller's frames and size


def test_ti2v_keeps_the_given_first_latent_frame(priors):
    prior = priors["wan2.2-ti2v"]
    first, _ = frames()
    text = replace(prior.encode_text(PROMPT), first_frame=first)
    video = prior._prepare_video(torch.rand(9, 3, 32, 32))
    latents = prior._encode(video)
    noisy, timestep = prior._noise(latents, torch.randn_like(latents), 0.6)
    pred = prior._predict(noisy, timestep, text, cfg=False)
    clean, _ = prior._clean_and_noise(noisy, pred, 0.6)
    given = prior._conditioning(noisy, text)["first_latents"]
    assert torch.allclose(clean[:, :, :1], given.float(), atol=1e-4)
    assert not torch.allclose(clean[:, :, 1:], latents[:, :, 1:], atol=1e-3)


@pytest.mark.parametrize("name", list(BUILDS))
def test_saved_pipeline_loads_through_load_prior(tmp_path, name):
    pipe = BUILDS[name]()
    folder = save_pipeline(pipe, tmp_path / name)
    loaded = small(load_prior(str(folder), device="cpu"))
    expected = CogVideoXImageToVideoPrior if name == "cogvideox-i2v" else WanImageToVideoPrior
    assert type(loaded) is expected and loaded.name == str(folder)
    original = build(name)
    first, _ = frames()
    assert torch.allclose(draw(loaded, first), draw(original, first), atol=1e-5)


def test_text_to_video_folders_still_load_their_adapters(tmp_path):
    assert type(load_prior(str(save_pipeline(cogvideox_pipeline(), tmp_path / "c")), device="cpu")) is CogVideoXPrior
    assert type(load_prior(str(save_pipeline(wan_pipeline(), tmp_path / "w")), device="cpu")) is WanPrior


def test_aliases_name_the_published_models():
    assert resolve_spec("CogVideoX-5B-I2V") == "THUDM/CogVideoX-5b-I2V" == ALIASES["cogvideox-5b-i2v"]
    assert resolve_spec("wan2.1-i2v-14b-480p") == "Wan-AI/Wan2.1-I2V-14B-480P-Diffusers"
    assert resolve_spec("wan2.2-ti2v-5b") == "Wan-AI/Wan2.2-TI2V-5B-Diffusers"


def test_default_start_draws_then_fits(priors):
    """Without a library motion (a prompt not understood as one) "auto" draws then fits; the run below
    asks for the drawing start by name (an understood prompt's default is the library start)."""
    prior = priors["cogvideox-i2v"]
    assert resolve_start(DistillConfig(), prior).start == "sample"
    seen = []
    drawn = prior.sample

    def spy(text, *args, **kwargs):
        seen.append(text.first_frame)
        return drawn(text, *args, **kwargs)

    prior.sample = spy
    try:
        config = DistillConfig(
            frames=9,
            height=16,
            width=16,
            device="cpu",
            preview_every=0,
            steps=1,
            start="sample",
            search=SearchSettings(steps=2, scales=(0.6,)),
        )
        result = distill(biped(), PROMPT, config, prior=prior)
    finally:
        del prior.sample
    assert len(seen) == 1 and seen[0].shape == (3, 16, 16)  # the character's render is the first frame
    assert result.extra["sample_frames"] == prior.frames and len(result.history) == 1


def test_model_choices_are_the_registry_aliases():
    from akd_blender.core.settings import MODEL_CHOICES

    assert {m.alias: m.hub_id for m in MODEL_CHOICES} == ALIASES
    tasks = {m.alias: m.task for m in MODEL_CHOICES}
    assert [a for a, t in tasks.items() if t == "image-to-video"] == ["cogvideox-5b-i2v", "wan2.1-i2v-14b-480p", "wan2.2-ti2v-5b"]
    assert len({m.ident for m in MODEL_CHOICES}) == len(MODEL_CHOICES) and all(m.gpu for m in MODEL_CHOICES)


def test_the_search_fits_a_large_drawing_at_most_max_side(monkeypatch):
    from akd_blender.core.distillation import drawn_start
    from akd_blender.core.distillation.drawn_start import search_size
    from akd_blender.core.settings import SettingError

    assert search_size(480, 720, 256) == (171, 256) and search_size(32, 32, 256) == (32, 32)
    assert search_size(704, 1280, 128) == (70, 128)
    seen = []

    def stop(rig, target, *args, **kwargs):
        seen.append((tuple(target.shape[-2:]), (args[2].height, args[2].width)))
        raise RuntimeError("seen")

    monkeypatch.setattr(drawn_start, "search_poses", stop)
    prior = build("cogvideox-i2v")
    config = DistillConfig(
        frames=9,
        height=48,
        width=64,
        device="cpu",
        steps=0,
        supersample=2,
        start="sample",
        search=SearchSettings(steps=1, max_side=32),
    )
    with pytest.raises(RuntimeError, match="seen"):
        distill(biped(), PROMPT, config, prior=prior)
    assert seen == [((24, 32), (48, 64))]  # the drawing at 24 × 32, rendered ×2 supersampled
    with pytest.raises(SettingError, match="max_side"):
        DistillConfig(search=SearchSettings(max_side=4)).validate()
