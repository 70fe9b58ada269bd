"""The SDS loop on CPU with a tiny random CogVideoX (real diffusers classes) and the procedural biped."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation.sds_loop import DistillConfig, NumericalError, SDSSettings, distill
from akd_blender.core.errors import Cancelled, InputError
from akd_blender.core.motion.clip import MotionClip, MotionParams
from akd_blender.core.progress import Callbacks
from akd_blender.core.render import Renderer, make_cameras, root_path
from akd_blender.core.settings import RedrawSettings
from akd_blender.core.video_models.cogvideox import CogVideoXPrior
from tests.core.dummy_priors import cogvideox_pipeline

PROMPT = "a person waves the right arm"
# smallest valid video (4k+1); no redraw rounds: this is the SDS loop
CONFIG = dict(
    start="pose", frames=5, height=32, width=32, steps=2, device="cpu", preview_every=1, redraw=RedrawSettings(noise=())
)


@pytest.fixture(scope="module")
def rig():
    return biped()


@pytest.fixture(scope="module")
def prior() -> CogVideoXPrior:
    return CogVideoXPrior(cogvideox_pipeline(), name="tiny-cogvideox", device="cpu")


@pytest.mark.parametrize("space", ["latent", "pixel"])
def test_sds_gradient_reaches_joint_parameters(rig, prior, space):
    prior.configure(target_space=space)
    params = MotionParams(rig, 5, keys=3)
    skeleton, renderer = Skeleton(rig), Renderer(rig, 32, 32, backend="torch", device="cpu")
    vertices = skeleton(params)
    video = renderer.render(vertices, make_cameras(rig, root_path(vertices), 32, 32))[:, :3]
    loss = prior.sds_loss(video, prior.encode_text(PROMPT), 0, 10, torch.Generator().manual_seed(0))["loss"]
    loss.backward()
    for grad in (params.rotvec.grad, params.root_offset.grad):
        assert grad is not None and torch.isfinite(grad).all() and grad.abs().sum() > 0


def test_distill_changes_motion_and_reports(rig, prior):
    progress, previews = [], []
    result = distill(
        rig,
        PROMPT,
        DistillConfig(**CONFIG),
        prior=prior,
        callbacks=Callbacks(progress=progress.append, preview=lambda clip, step: previews.append(step)),
    )
    clip = result.clip
    assert isinstance(clip, MotionClip) and clip.rotations.shape == (5, rig.num_bones, 4) and clip.matches(rig)
    rest = MotionClip.rest(rig, 5)
    assert np.abs(clip.rotations - rest.rotations).max() > 1e-4  # one Adam step moves every parameter by ~lr
    assert [p.step for p in progress] == [1, 2] and progress[-1].eta_seconds == 0
    assert {"sds", "smooth", "ground", "skate", "total"} <= set(progress[0].losses)
    assert previews == [1, 2] and len(result.history) == 2
    assert {"render", "prior", "backward"} <= set(result.timings) and result.seconds > 0


@pytest.mark.parametrize("space", ["latent", "pixel"])
def test_target_reuse_queries_the_prior_every_n_steps(rig, prior, space):
    config = DistillConfig(**{**CONFIG, "steps": 3}, sds=SDSSettings(target_space=space), target_reuse=2)
    history = distill(rig, PROMPT, config, prior=prior).history
    queried = ["sds_t" in h for h in history]
    assert queried == ([True, False, True] if space == "pixel" else [True, True, True])  # latent: no decoded target


def test_the_prior_gets_the_character_box_and_reuse_steps_stay_in_it(rig, prior, monkeypatch):
    prior.configure(target_space="pixel")
    seen = []
    query = prior.sds_loss

    def spy(video, text, step, total, generator=None, region=None, settings=None):
        out = query(video, text, step, total, generator, region=region, settings=settings)
        seen.append((tuple(video.shape[-2:]), region, out["target_box"].tolist(), tuple(out["target_video"].shape)))
        return out

    monkeypatch.setattr(prior, "sds_loss", spy)
    config = DistillConfig(**{**CONFIG, "steps": 3, "height": 256, "width": 384}, target_reuse=2)
    history = distill(rig, PROMPT, config, prior=prior).history
    assert len(seen) == 2 and all(np.isfinite(h["sds"]) for h in history)
    for size, region, box, target in seen:
        top, left, bottom, right = region
        assert 0 <= top < bottom <= size[0] and 0 <= left < right <= size[1]  # the biped, inside the frame
        assert (bottom - top) * (right - left) < 0.5 * size[0] * size[1]
        assert box[0] <= top and box[1] <= left and box[2] >= bottom and box[3] >= right  # decoded around it
        assert box != [0, 0, *size] and target[-2:] == (box[2] - box[0], box[3] - box[1])


def test_deterministic_for_a_seed(rig, prior):
    a = distill(rig, PROMPT, DistillConfig(**CONFIG, seed=3), prior=prior).clip
    b = distill(rig, PROMPT, DistillConfig(**CONFIG, seed=3), prior=prior).clip
    assert np.array_equal(a.rotations, b.rotations) and np.array_equal(a.locations, b.locations)


def test_cancel_stops_within_one_step(rig, prior):
    done = []
    callbacks = Callbacks(progress=lambda p: done.append(p.step), should_cancel=lambda: len(done) >= 1)
    with pytest.raises(Cancelled, match="step 1 of 50") as err:
        distill(rig, PROMPT, DistillConfig(**{**CONFIG, "steps": 50}), prior=prior, callbacks=callbacks)
    assert done == [1] and err.value.exit_code == 4


def test_nan_guard(rig):
    poisoned = CogVideoXPrior(cogvideox_pipeline(), device="cpu")
    with torch.no_grad():
        poisoned.vae.encoder.conv_in.conv.weight[0] = float("nan")  # e.g. overflowed weights
    with pytest.raises(NumericalError, match="diverged at step 0: loss 'sds'") as err:
        distill(rig, PROMPT, DistillConfig(**CONFIG, sds=SDSSettings(target_space="latent")), prior=poisoned)
    assert err.value.exit_code == 1


def test_bad_config(rig, prior):
    with pytest.raises(InputError, match="sds.mode"):
        distill(rig, PROMPT, DistillConfig(**CONFIG, sds=SDSSettings(mode="fancy")), prior=prior)
    with pytest.raises(InputError, match="prompt"):
        distill(rig, " ", DistillConfig(**CONFIG), prior=prior)


def test_motion_starts_from_the_given_pose(rig, prior):
    from akd_blender.core.motion.library.labelled import neutral_clip

    standing = neutral_clip(rig)
    config = DistillConfig(**{**CONFIG, "steps": 1, "lr": 1e-6, "root_lr": 1e-6})
    result = distill(rig, PROMPT, config, prior=prior, init_pose=standing)
    got = result.clip.rotations
    want = np.repeat(standing.rotations, 5, axis=0)
    assert np.minimum(np.abs(got - want), np.abs(got + want)).max() < 1e-3
    rest = distill(rig, PROMPT, config, prior=prior).clip.rotations
    assert np.abs(rest - got).max() > 0.1  # the arms really start down, not in the T-pose
    other = MotionClip.rest(biped(), 1)
    bad = MotionClip(tuple(f"x{i}" for i in range(rig.num_bones)), 24.0, 1, other.rotations, other.locations)
    with pytest.raises(InputError, match="starting pose is for other bones"):
        distill(rig, PROMPT, config, prior=prior, init_pose=bad)


def test_sizes_default_to_the_prior(prior):
    from akd_blender.core.distillation.sds_loop import resolve_sizes

    class Teacher:  # what a prior states about the videos it knows
        frames, height, width, fps = 16, 32, 32, 8.0

    resolved = resolve_sizes(DistillConfig(fps=24.0), Teacher())
    assert (resolved.frames, resolved.height, resolved.width, resolved.supersample) == (48, 32, 32, 4)
    big = resolve_sizes(DistillConfig(), prior)  # states no fps: its own frame count
    assert big.frames == prior.frames and big.supersample == (4 if max(prior.height, prior.width) <= 64 else 1)
    explicit = resolve_sizes(DistillConfig(frames=5, height=40, width=48, supersample=2), Teacher())
    assert (explicit.frames, explicit.height, explicit.width, explicit.supersample) == (5, 40, 48, 2)


def test_the_prior_gets_the_settings_per_query_and_is_never_changed(rig, prior, monkeypatch):
    prior.configure(cfg_scale=1.0, target_space="latent")
    before = prior.settings
    seen = []
    query = prior.sds_loss

    def spy(video, text, step, total, generator=None, region=None, settings=None):
        seen.append(settings)
        return query(video, text, step, total, generator, region=region, settings=settings)

    monkeypatch.setattr(prior, "sds_loss", spy)
    wanted = SDSSettings(cfg_scale=3.5, target_space="pixel", t_max_end=None)
    distill(rig, PROMPT, DistillConfig(**CONFIG, sds=wanted, target_reuse=1), prior=prior)
    assert seen == [wanted, wanted] and prior.settings is before  # the caller's own settings stay
    pixel = distill(rig, PROMPT, DistillConfig(**CONFIG, sds=wanted, target_reuse=1), prior=prior).clip
    latent = distill(rig, PROMPT, DistillConfig(**CONFIG, sds=before, target_reuse=1), prior=prior).clip
    assert np.abs(pixel.rotations - latent.rotations).max() > 1e-5  # the settings passed are the ones used
