"""The image-and-text embedded teacher (prior "tiny"): it draws the character of a first frame, the
SDS step is conditioned on it, prompts are read among the character's kind's motions, int8 weights
load, and the distillation hands it the user's character in its start pose."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.distillation.context import first_frame
from akd_blender.core.distillation.plan import character_kind
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionParams
from akd_blender.core.prompt.sentence_encoder import TextEncoder
from akd_blender.core.render import Renderer
from akd_blender.core.settings import DistillConfig
from akd_blender.core.video_models import load_prior
from akd_blender.core.video_models.tiny import ASSET_DIR, IMAGE_ASSET_DIR, TinyPrior
from akd_blender.core.video_models.tiny_network import (
    TeacherConfig,
    build_unet,
    load_weights,
    model_input,
    sample_videos,
    save_weights,
    text_condition,
)
from tools.family import make_member

TINY = TeacherConfig(frames=4, height=16, width=16, channels=(32, 32), condition="image")


@pytest.fixture(scope="module")
def small_prior() -> TinyPrior:
    torch.manual_seed(0)
    return TinyPrior(build_unet(TINY), TINY, TextEncoder(), "cpu", name="tiny")


@pytest.fixture(scope="module")
def shipped():
    return load_prior("tiny", device="cpu")


def _text(prior: TinyPrior, frame: torch.Tensor | None = None):
    text = prior.encode_text("a character walks forward", kind="biped")
    return replace(text, first_frame=frame) if frame is not None else text


def test_the_image_teacher_has_one_more_input_image_than_the_text_teacher():
    assert build_unet(TINY).config.in_channels == 3 * 4 + 3
    assert build_unet(replace(TINY, condition="text")).config.in_channels == 3 * 4
    with pytest.raises(ValueError, match="condition"):
        build_unet(replace(TINY, condition="sound"))
    x, first = torch.zeros(2, 12, 16, 16), torch.ones(3, 16, 16)
    assert torch.equal(model_input(x, first)[:, 12:], torch.ones(2, 3, 16, 16))  # [0,1] → [-1,1]
    assert model_input(x, None) is x


def test_sample_needs_the_first_frame_and_draws_from_it(small_prior):
    with pytest.raises(InputError, match="first frame"):
        small_prior.sample(_text(small_prior), generator=torch.Generator().manual_seed(0), steps=2)
    red, blue = torch.zeros(3, 16, 16), torch.zeros(3, 16, 16)
    red[0], blue[2] = 1.0, 1.0
    draw = lambda frame, seed=0: small_prior.sample(  # noqa: E731
        _text(small_prior, frame), generator=torch.Generator().manual_seed(seed), steps=3
    )
    a, b, c = draw(red), draw(red), draw(blue)
    assert a.shape == (4, 3, 16, 16) and a.min() >= 0 and a.max() <= 1
    assert torch.equal(a, b)  # same seed, same frame: the same draw
    assert (a - c).abs().max() > 1e-4  # another character: another draw
    # An explicit first frame overrides the text's; a larger one is resized to the teacher's size.
    big = torch.nn.functional.interpolate(blue[None], size=(32, 32), mode="nearest")[0]
    assert torch.allclose(small_prior.sample(_text(small_prior, red), big, torch.Generator().manual_seed(0), steps=3), c)


def test_text_teacher_takes_no_first_frame():
    cfg = replace(TINY, condition="text")
    with pytest.raises(ValueError, match="takes no first frame"):
        sample_videos(build_unet(cfg), cfg, torch.zeros(1, 384), steps=1, first_frame=torch.zeros(3, 16, 16))


def test_sds_step_is_conditioned_on_the_first_frame(small_prior):
    video = torch.rand(4, 3, 16, 16, requires_grad=True)
    grads = []
    for frame in (torch.zeros(3, 16, 16), torch.ones(3, 16, 16)):
        video.grad = None
        out = small_prior.sds_loss(video, _text(small_prior, frame), 0, 10, generator=torch.Generator().manual_seed(1))
        out["loss"].backward()
        assert torch.isfinite(video.grad).all() and video.grad.abs().sum() > 0
        grads.append(video.grad.clone())
    assert (grads[0] - grads[1]).abs().max() > 0
    with pytest.raises(InputError, match="first frame"):
        small_prior.sds_loss(video, _text(small_prior), 0, 10, generator=torch.Generator().manual_seed(1))


def test_int8_weights_load_close_to_the_float_ones(tmp_path):
    torch.manual_seed(0)
    unet = build_unet(TINY).eval()
    names = save_weights(unet, tmp_path, int8=True)
    state = load_weights(tmp_path, names)
    assert set(state) == set(unet.state_dict())
    small = build_unet(TINY).eval()
    small.load_state_dict(state)
    x, t, e = torch.randn(2, 15, 16, 16), torch.tensor([10, 500]), torch.randn(2, 384)
    with torch.no_grad():
        a, b = (m(x, t, **text_condition(e, x.dtype)).sample for m in (unet, small))
    assert float((a - b).norm() / a.norm()) < 0.05
    (tmp_path / "f").mkdir()
    float_names = save_weights(unet, tmp_path / "f", int8=False)
    int8_bytes = sum((tmp_path / n).stat().st_size for n in names)
    assert int8_bytes < 0.7 * sum((tmp_path / "f" / n).stat().st_size for n in float_names)


def test_shipped_image_teacher_is_the_default_and_all_weights_fit_40_mb(shipped):
    record = json.loads((IMAGE_ASSET_DIR / "teacher.json").read_text())
    assert record["config"]["condition"] == "image" and "train-family" in record["command"]
    assert shipped.image_conditioned and shipped.name == "tiny"
    assert not load_prior("tiny-text", device="cpu").image_conditioned
    assets = ASSET_DIR.parent
    weights = sum(p.stat().st_size for p in assets.rglob("*.safetensors"))
    assert weights <= 40 * 10**6


def test_prompts_are_read_among_the_characters_kind(shipped):
    dog = shipped.encode_text("the dog wags its tail happily", kind="quadruped")
    assert dog.extra["motion"] == "quadruped/wag_tail"
    person = shipped.encode_text("the dog wags its tail happily", kind="biped")
    assert person.extra["motion"].startswith("biped/")
    anyone = shipped.encode_text("a bird flaps its wings", kind=None)
    assert anyone.extra["motion"] == "bird/flap_wings"


def test_distillation_shows_the_teacher_the_character_as_in_its_training(shipped):
    """The first frame the distillation renders of a member standing in its rest pose is the first
    frame the teacher's training data holds for it (tools.teacher.family_data)."""
    from akd_blender.core.motion.library.labelled import Variation
    from tools.teacher.family_data import FamilyItem, render_family

    member = make_member("quadruped", 10001)
    rig = member.rig
    assert character_kind(rig) == "quadruped"
    config = DistillConfig(frames=8, height=32, width=32, supersample=4)
    params = MotionParams(rig, 8, 8.0, keys=4)
    renderer = Renderer(rig, 128, 128, backend="torch", style=shipped.render_style)
    frame = first_frame(rig, params, Skeleton(rig), renderer, config, shipped.camera_options)
    assert frame.shape == (3, 32, 32) and frame.min() >= 0 and frame.max() <= 1
    item = FamilyItem("quadruped", 10001, "walk", Variation(facing=0.0))
    _, firsts = render_family([item], 32, 32, frames=2, style=shipped.render_style, camera_options=shipped.camera_options)
    trained = firsts[0].float() / 255
    assert (frame - trained).abs().mean() < 0.01
    other = render_family(
        [replace(item, seed=10002)], 32, 32, frames=2, style=shipped.render_style, camera_options=shipped.camera_options
    )[1]
    assert (frame - other[0].float() / 255).abs().mean() > 0.02  # another member looks otherwise
