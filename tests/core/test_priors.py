"""The diffusers adapters with tiny random models of the real classes (CPU, nothing downloaded)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from akd_blender.core.errors import InputError, ModelNotAvailable
from akd_blender.core.render.image_losses import character_region
from akd_blender.core.video_models import ALIASES, SDSSettings, VideoPrior, load_prior
from akd_blender.core.video_models.cogvideox import CogVideoXPrior
from akd_blender.core.video_models.frames import decode_crop, fit_video
from akd_blender.core.video_models.protocol import cfg_combine, sds_target_loss
from akd_blender.core.video_models.registry import resolve_spec
from akd_blender.core.video_models.wan import WanPrior
from tests.core.dummy_priors import TEXT_DIM, TEXT_LEN, cogvideox_pipeline, save_pipeline, wan_pipeline

PROMPT = "a fox trots forward"


@pytest.fixture(scope="module")
def cog() -> CogVideoXPrior:
    return CogVideoXPrior(cogvideox_pipeline(), name="tiny-cogvideox", device="cpu")


@pytest.fixture(scope="module")
def wan() -> WanPrior:
    return WanPrior(wan_pipeline(), name="tiny-wan", device="cpu")


@pytest.fixture(params=["cog", "wan"])
def prior(request, cog, wan):
    p = cog if request.param == "cog" else wan
    p.settings = SDSSettings()
    return p


def test_protocol_and_sizes(cog, wan):
    assert isinstance(cog, VideoPrior) and isinstance(wan, VideoPrior)
    assert (cog.frames, cog.height, cog.width) == (49, 16, 16)  # sample 2 latents × VAE 8
    assert (wan.frames, wan.height, wan.width) == (81, 480, 832)


def test_text_embedding_shapes(cog, wan):
    text = cog.encode_text(PROMPT, "blurry")
    assert text.cond.shape == (1, TEXT_LEN, TEXT_DIM) and text.uncond.shape == (1, TEXT_LEN, TEXT_DIM)
    assert not torch.equal(text.cond, text.uncond)
    assert cog.encode_text(PROMPT, "blurry") is text  # computed once per prompt
    assert wan.encode_text(PROMPT).cond.shape == (1, 512, TEXT_DIM)


def test_latent_shapes(cog, wan):
    video = torch.rand(9, 3, 32, 48)
    assert cog._encode(cog._prepare_video(video)).shape == (1, 3, 4, 4, 6)  # [1,F',C,h,w]
    assert wan._encode(wan._prepare_video(video)).shape == (1, 16, 3, 4, 6)  # [1,C,F',h,w]


def test_fit_video_pads_frames_and_rounds_size():
    video = torch.rand(6, 3, 30, 40, requires_grad=True)
    out = fit_video(video, 4, 16)
    assert out.shape == (9, 3, 32, 48)
    out.sum().backward()
    assert video.grad.abs().sum() > 0


@pytest.mark.parametrize(("mode", "space"), [("score", "latent"), ("target", "latent"), ("target", "pixel")])
def test_sds_gradient_reaches_video(prior, mode, space):
    prior.configure(mode=mode, target_space=space, cfg_scale=2.0)
    text = prior.encode_text(PROMPT)
    video = torch.rand(9, 3, 32, 32, requires_grad=True)
    out = prior.sds_loss(video, text, 0, 10, torch.Generator().manual_seed(0))
    assert out["loss"].ndim == 0 and torch.isfinite(out["loss"])
    out["loss"].backward()
    assert torch.isfinite(video.grad).all() and video.grad.abs().sum() > 0
    assert 0.0 < float(out["t"]) < 1.0


def test_decode_crop_boxes():
    # 480×720 video at native size, 60×90 latent cells of 8 px; a character in rows 100–380, cols 300–420.
    dec, inner, box = decode_crop((100, 300, 380, 420), (480, 720), (480, 720), (60, 90), 8, 2, 4)
    assert dec == (6, 31, 54, 59)  # region cells 12..48 × 37..53, ±2 kept, ±4 more decoded
    assert inner == (32, 32, 352, 192)  # pixels kept inside the decoded crop (cells 10..50 × 35..55)
    assert box == (80, 280, 400, 440)  # the same area in the video: the region ± 16 px
    assert decode_crop((0, 0, 470, 700), (480, 720), (480, 720), (60, 90), 8, 2, 4) is None  # nearly all: no crop
    # A video the prior resized (240×368 → 240×368 is kept; 100×150 → 96×144): boxes map back to the input.
    _, _, box = decode_crop((10, 20, 50, 60), (100, 150), (96, 144), (12, 18), 8, 0, 1)
    assert box == (8, 17, 50, 67) and box[0] <= 10 and box[2] >= 50


def test_character_region():
    alpha = torch.zeros(3, 20, 30)
    assert character_region(alpha) is None
    alpha[0, 5:8, 10:12] = 1.0
    alpha[2, 6:15, 4:6] = 0.5
    assert character_region(alpha) == (5, 4, 15, 12)


def test_pixel_target_is_decoded_only_around_the_region(cog):
    cog.settings = SDSSettings(mode="target", target_space="pixel")
    text = cog.encode_text(PROMPT)
    video = torch.rand(9, 3, 192, 192, requires_grad=True)  # 24×24 latent cells
    full = cog.sds_loss(video, text, 2, 10, torch.Generator().manual_seed(3))
    assert full["target_box"].tolist() == [0, 0, 192, 192] and full["target_video"].shape == (9, 3, 192, 192)
    out = cog.sds_loss(video, text, 2, 10, torch.Generator().manual_seed(3), region=(40, 44, 56, 60))
    top, left, bottom, right = out["target_box"].tolist()
    assert (top, left, bottom, right) == (24, 24, 72, 80)  # region cells 5..7 × 5..8, ±2 cells of 8 px
    assert out["target_video"].shape == (9, 3, 48, 56)
    out["loss"].backward()
    grad = video.grad.abs().sum((0, 1))
    assert grad[top:bottom, left:right].sum() > 0
    grad[top:bottom, left:right] = 0
    assert grad.sum() == 0  # pixels outside the box get no gradient
    # The crop is the same target as the full decode, up to the decoder's effects at the crop edge.
    inside = full["target_video"][..., top:bottom, left:right]
    assert (out["target_video"] - inside).abs().mean() < 0.5 * (full["target_video"].std() + 1e-6)


def test_sds_is_deterministic_for_a_generator(cog):
    text = cog.encode_text(PROMPT)
    video = torch.rand(9, 3, 32, 32)
    a = cog.sds_loss(video, text, 3, 10, torch.Generator().manual_seed(7))["loss"]
    b = cog.sds_loss(video, text, 3, 10, torch.Generator().manual_seed(7))["loss"]
    c = cog.sds_loss(video, text, 3, 10, torch.Generator().manual_seed(8))["loss"]
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_cfg_combine_and_surrogate_gradient():
    pred = torch.stack([torch.zeros(3), torch.ones(3)])
    assert torch.allclose(cfg_combine(pred, 2.5), torch.full((1, 3), 2.5))
    assert torch.equal(cfg_combine(pred[1:], 7.0), pred[1:])
    latents = torch.randn(2, 5, requires_grad=True)
    grad = torch.randn(2, 5)
    grad[0, 0] = float("nan")
    sds_target_loss(latents, grad, clip=None).backward()
    expect = torch.nan_to_num(grad, nan=0.0) / latents.numel()
    assert torch.allclose(latents.grad, expect)


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="mode"):
        SDSSettings(mode="fancy")
    with pytest.raises(ValueError, match="timestep"):
        SDSSettings(t_min=0.9, t_max=0.5)


@pytest.mark.parametrize(("build", "adapter"), [(cogvideox_pipeline, CogVideoXPrior), (wan_pipeline, WanPrior)])
def test_saved_pipeline_loads_through_load_prior(tmp_path, build, adapter):
    pipe = build()
    folder = save_pipeline(pipe, tmp_path / "model")
    assert (folder / "model_index.json").is_file()
    loaded = load_prior(str(folder), device="cpu")
    assert isinstance(loaded, adapter) and loaded.name == str(folder)
    original = adapter(pipe, device="cpu")
    assert torch.allclose(loaded.encode_text(PROMPT).cond, original.encode_text(PROMPT).cond)
    video = torch.rand(5, 3, 16, 16)
    gen = lambda: torch.Generator().manual_seed(1)  # noqa: E731
    assert torch.allclose(
        loaded.sds_loss(video, loaded.encode_text(PROMPT), 0, 1, gen())["loss"],
        original.sds_loss(video, original.encode_text(PROMPT), 0, 1, gen())["loss"],
        rtol=1e-4,
    )


def test_missing_model_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ModelNotAvailable) as err:
        load_prior("nonexistent/model", device="cpu")
    message = str(err.value)
    assert "\n" not in message and "nonexistent/model" in message and "huggingface-cli download" in message
    assert err.value.exit_code == 3
    with pytest.raises(ModelNotAvailable, match="not a hub id"):
        load_prior(str(tmp_path / "no" / "such" / "folder.safetensors"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotAvailable, match="model_index.json"):
        load_prior(str(tmp_path / "empty"))
    with pytest.raises(InputError):
        load_prior("  ")


def test_aliases():
    assert resolve_spec("CogVideoX-5B") == "THUDM/CogVideoX-5b" == ALIASES["cogvideox-5b"]
    assert resolve_spec("cogvideox-2b") == "THUDM/CogVideoX-2b"
    assert resolve_spec("wan2.1-1.3b") == "Wan-AI/Wan2.1-T2V-1.3B-Diffusers"
    assert resolve_spec("some/other") == "some/other"


def test_tiny_spec():
    if importlib.util.find_spec("akd_blender.core.video_models.tiny") is None:
        with pytest.raises(ModelNotAvailable, match="tiny"):
            load_prior("tiny", device="cpu")
        return
    try:  # the teacher's code is there; its weights may not be shipped yet
        prior = load_prior("tiny", device="cpu")
    except ModelNotAvailable as exc:
        assert "\n" not in str(exc) and "teacher" in str(exc)
    else:
        assert isinstance(prior, VideoPrior)
