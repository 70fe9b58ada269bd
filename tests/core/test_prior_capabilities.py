"""The capabilities contract: every prior adapter declares what it can do (:class:`Capabilities`) and
the declaration matches what it really has and does.

Every adapter is built from real parts: the diffusers adapters from the tiny random pipelines of
:mod:`tests.core.dummy_priors` (CPU, nothing downloaded), the two shipped embedded teachers and the
library reader. :func:`contract_violations` checks one prior; a new adapter goes into ``ADAPTERS``.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import FrozenInstanceError, fields, replace

import pytest
import torch

from akd_blender.core.distillation.library_reader import LibraryReader
from akd_blender.core.distillation.library_start import TEACHER_DIR
from akd_blender.core.errors import InputError
from akd_blender.core.prompt.understanding import Understanding
from akd_blender.core.settings import SDSSettings
from akd_blender.core.video_models import load_prior
from akd_blender.core.video_models.capabilities import Capabilities, capabilities_from_attributes, capabilities_of
from akd_blender.core.video_models.cogvideox import CogVideoXPrior
from akd_blender.core.video_models.cogvideox_i2v import CogVideoXImageToVideoPrior
from akd_blender.core.video_models.tiny import ASSET_DIR, IMAGE_ASSET_DIR, load_teacher_config
from akd_blender.core.video_models.wan import WanPrior
from tests.core.dummy_priors import cogvideox_pipeline, wan_pipeline
from tests.core.test_priors_i2v import build as build_i2v

PROMPT = "a person walks forward"
KINDS = ("biped", "quadruped")  # two kinds of character whose library motions differ


def _cogvideox_clip(prior) -> tuple[int, float | None, int, int]:
    """(frames, fps, height, width) a CogVideoX adapter takes from its transformer's config: the
    text-to-video model draws its published 49 frames at no stated rate, the image-to-video one its
    config's ``sample_frames`` at 8 fps."""
    cfg, spatial = prior.transformer.config, prior.pipe.vae_scale_factor_spatial
    frames, fps = (int(cfg.sample_frames), 8.0) if isinstance(prior, CogVideoXImageToVideoPrior) else (49, None)
    return frames, fps, cfg.sample_height * spatial, cfg.sample_width * spatial


def _teacher_clip(folder) -> tuple[int, float, int, int]:
    cfg = load_teacher_config(folder)
    return cfg.frames, cfg.fps, cfg.height, cfg.width


def _reader_clip() -> tuple[int, float, int, int]:
    record = json.loads((TEACHER_DIR / "teacher.json").read_text())["config"]
    return record["frames"], record["fps"], record["height"], record["width"]


# name → (build the prior, the clip its own config states: frames, fps, height, width)
ADAPTERS = {
    "cogvideox": (lambda: CogVideoXPrior(cogvideox_pipeline(), name="tiny-cogvideox", device="cpu"), _cogvideox_clip),
    "wan": (lambda: WanPrior(wan_pipeline(), name="tiny-wan", device="cpu"), lambda p: (81, None, 480, 832)),
    "cogvideox-i2v": (lambda: build_i2v("cogvideox-i2v"), _cogvideox_clip),
    "wan2.1-i2v": (lambda: build_i2v("wan2.1-i2v"), lambda p: (9, 16.0, 32, 32)),  # lowered to 9 × 32 × 32 by the build
    "wan2.2-ti2v": (lambda: build_i2v("wan2.2-ti2v"), lambda p: (9, 24.0, 32, 32)),
    "tiny": (lambda: load_prior("tiny", device="cpu"), lambda p: _teacher_clip(IMAGE_ASSET_DIR)),
    "tiny-text": (lambda: load_prior("tiny-text", device="cpu"), lambda p: _teacher_clip(ASSET_DIR)),
    "library-reader": (LibraryReader, lambda p: _reader_clip()),
}


def _first_frame(caps: Capabilities) -> torch.Tensor:
    frame = torch.full((3, caps.height or 16, caps.width or 16), 0.2)
    frame[:, 2:-2, 3:-3] = 0.7  # a light box on dark: the character
    return frame


def _video(frames: int = 5, size: int = 16) -> torch.Tensor:
    """A small video [frames,3,size,size] in [0,1] (a box moving right)."""
    video = torch.full((frames, 3, size, size), 0.3)
    for f in range(frames):
        video[f, :, 4:12, f : f + 6] = 0.8
    return video


def _understanding(text) -> Understanding | None:
    reading = (getattr(text, "extra", None) or {}).get("understanding")
    return reading if isinstance(reading, Understanding) else None


def _reads_kind(prior) -> bool:
    """Whether ``encode_text`` gives another text for another kind of character."""
    if "kind" not in inspect.signature(prior.encode_text).parameters:
        return False
    a, b = (prior.encode_text(PROMPT, "", kind=kind) for kind in KINDS)
    ra, rb = _understanding(a), _understanding(b)
    if ra is not None or rb is not None:
        return ra is None or rb is None or ra.motion != rb.motion
    return not (torch.equal(a.cond, b.cond) and a.cond.shape == b.cond.shape)


def contract_violations(prior, clip: tuple) -> list[str]:
    """What ``prior``'s declared capabilities say that it does not do (empty: the declaration holds).
    ``clip``: (frames, fps, height, width) as the prior's own config states them."""
    caps = prior.capabilities
    bad: list[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            bad.append(what)

    check(isinstance(caps, Capabilities), "capabilities is a Capabilities")
    check(capabilities_of(prior) == caps, "capabilities_of reads the declaration")
    check((caps.frames, caps.fps, caps.height, caps.width) == tuple(clip), f"frames/fps/height/width {clip}")
    check(caps.draws == callable(getattr(prior, "sample", None)), "draws ⇔ a callable sample")
    check(caps.redraws == callable(getattr(prior, "redraw", None)), "redraws ⇔ a callable redraw")
    check(caps.ranks == callable(getattr(prior, "prompt_scores", None)), "ranks ⇔ a callable prompt_scores")
    sds = getattr(prior, "sds_loss", None)
    takes = isinstance(getattr(prior, "settings", None), SDSSettings) and callable(sds)
    check(caps.takes_settings == (takes and "settings" in inspect.signature(sds).parameters), "takes_settings")
    check(caps.render_style == getattr(prior, "render_style", None), "render_style is the prior's look")
    check(dict(caps.camera_options) == dict(getattr(prior, "camera_options", None) or {}), "camera_options")
    if caps.image_conditioned or caps.reads_kind:  # the distillation passes the character's kind
        check("kind" in inspect.signature(prior.encode_text).parameters, "encode_text takes kind")
    check(caps.reads_kind == _reads_kind(prior), "reads_kind ⇔ the text depends on the character's kind")
    takes_kind = "kind" in inspect.signature(prior.encode_text).parameters
    text = prior.encode_text(PROMPT, "", kind=KINDS[0]) if takes_kind else prior.encode_text(PROMPT)
    check(caps.reads_motions == (_understanding(text) is not None), "reads_motions ⇔ the text carries an Understanding")
    if caps.image_conditioned:
        text = replace(text, first_frame=_first_frame(caps))
    generator = torch.Generator().manual_seed(0)
    if caps.draws and callable(getattr(prior, "sample", None)):  # a missing one is already reported
        if caps.image_conditioned:
            try:
                prior.sample(replace(text, first_frame=None), generator=generator, steps=1)
                bad.append("an image-conditioned prior refuses to draw without a first frame")
            except InputError:
                pass
        video = prior.sample(text, generator=generator, guidance=2.0, steps=1)
        check(tuple(video.shape) == (caps.frames, 3, caps.height, caps.width), "sample draws the declared clip")
    if caps.redraws and callable(getattr(prior, "redraw", None)):
        out = prior.redraw(_video(), text, 0.5, generator, guidance=2.0, steps=1)
        check(tuple(out.shape) == tuple(_video().shape), "redraw returns the input's size")
    if caps.ranks and callable(getattr(prior, "prompt_scores", None)):
        scores = prior.prompt_scores(torch.stack([_video(), _video().flip(-1)]), text, t_values=(0.5,), draws=1)
        check(tuple(scores.shape) == (2,), "prompt_scores scores each video")
    return bad


@pytest.fixture(scope="module", params=list(ADAPTERS))
def adapter(request):
    build, clip = ADAPTERS[request.param]
    prior = build()
    return request.param, prior, clip(prior)


def test_every_adapter_declares_what_it_really_does(adapter):
    name, prior, clip = adapter
    assert isinstance(inspect.getattr_static(prior, "capabilities"), property), f"{name} declares no capabilities"
    assert contract_violations(prior, clip) == [], name


def test_the_distillation_sees_what_the_attributes_said(adapter):
    """Every capability the distillation used to read from a prior's attributes is the declared one,
    so the declaration changes no job; the kind and the motions are facts only the declaration states."""
    _, prior, _ = adapter
    declared, attributes = prior.capabilities, capabilities_from_attributes(prior)
    assert replace(declared, reads_kind=False, reads_motions=False) == replace(attributes, reads_kind=False, reads_motions=False)


def test_each_kind_of_prior_declares_its_own_abilities():
    table = {}
    for name in ("cogvideox", "tiny-text", "library-reader"):
        caps = ADAPTERS[name][0]().capabilities
        table[name] = (caps.draws, caps.redraws, caps.ranks, caps.image_conditioned, caps.reads_kind, caps.reads_motions)
    assert table == {
        "cogvideox": (False, True, True, False, False, False),  # redraws and ranks; draws from noise only with a first frame
        "tiny-text": (True, True, True, False, False, True),
        "library-reader": (False, False, False, False, True, True),  # reads prompts, draws nothing
    }


def test_a_prior_that_lies_fails_the_contract():
    class Boasting(LibraryReader):
        @property
        def capabilities(self) -> Capabilities:
            return replace(super().capabilities, draws=True, frames=99, reads_kind=False)

    violations = contract_violations(Boasting(), _reader_clip())
    assert any(v.startswith("draws") for v in violations)
    assert any(v.startswith("frames") for v in violations)
    assert any(v.startswith("reads_kind") for v in violations)


def test_a_foreign_prior_is_read_from_its_attributes():
    class Teacher:  # states its clip and its look, draws, has no capabilities property
        name, frames, height, width, fps = "foreign", 16, 32, 48, 8
        camera_options = {"fill": 0.5}
        image_conditioned = True

        def sample(self, text, generator=None): ...

        def encode_text(self, prompt, negative_prompt="", kind=None): ...

    caps = capabilities_of(Teacher())
    assert (caps.frames, caps.fps, caps.height, caps.width) == (16, 8.0, 32, 48) and isinstance(caps.fps, float)
    assert caps.draws and caps.image_conditioned and not (caps.redraws or caps.ranks or caps.takes_settings)
    assert dict(caps.camera_options) == {"fill": 0.5} and caps.render_style is None

    class Odd:  # a ``capabilities`` that is not a Capabilities is not trusted; zero sizes state nothing
        capabilities, frames, height = "everything", 0, 0

    odd = capabilities_of(Odd())
    assert odd == Capabilities() and odd.frames is None and odd.height is None
    assert capabilities_of(object()) == Capabilities()


def test_capabilities_are_read_only():
    caps = Capabilities(frames=16, camera_options={"fill": 0.6})
    with pytest.raises(FrozenInstanceError):
        caps.frames = 8
    with pytest.raises(TypeError):
        caps.camera_options["fill"] = 0.1
    assert {f.name for f in fields(Capabilities)} >= {
        "draws",
        "redraws",
        "ranks",
        "image_conditioned",
        "reads_kind",
        "reads_motions",
        "frames",
        "fps",
        "height",
        "width",
        "render_style",
        "camera_options",
    }


def test_a_lowered_clip_is_declared_as_it_stands():
    prior = build_i2v("wan2.2-ti2v")  # the build lowers the published 121 × 704 × 1280 to 9 × 32 × 32
    assert (prior.capabilities.frames, prior.capabilities.height) == (9, 32)
    prior.frames = 5
    assert capabilities_of(prior).frames == 5
