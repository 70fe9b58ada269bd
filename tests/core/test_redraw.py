"""Redraw rounds (iterated SDEdit targets): a prior redraws a video from a noise level
(``SDSPrior.redraw``), the distillation fits each redrawn render of its motion with the pose search
(``DistillConfig.redraw``), and the settings reach the command line (``--redraw``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from akd_blender.blender.cli import parser as cli_parser
from akd_blender.blender.job import settings as job_settings
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation.sds_loop import distill, resolve_start
from akd_blender.core.errors import InputError
from akd_blender.core.motion.library.labelled import neutral_clip
from akd_blender.core.prompt.sentence_encoder import TextEncoder
from akd_blender.core.render import Renderer, make_cameras, root_path
from akd_blender.core.render.image_losses import multiscale_mse
from akd_blender.core.settings import (
    POSE_REDRAW_NOISE,
    DistillConfig,
    RedrawSettings,
    SearchSettings,
    SettingError,
    config_from_dict,
    parse_redraw,
    redraw_text,
)
from akd_blender.core.video_models.cogvideox import CogVideoXPrior
from akd_blender.core.video_models.protocol import TextEmbedding
from akd_blender.core.video_models.tiny import TinyPrior
from akd_blender.core.video_models.tiny_network import TeacherConfig, build_unet
from tests.core.dummy_priors import cogvideox_pipeline
from tests.core.test_pose_search import raised_arm

TINY = TeacherConfig(frames=4, height=16, width=16, channels=(32, 32), condition="image")


@pytest.fixture(scope="module")
def teacher() -> TinyPrior:
    torch.manual_seed(0)
    return TinyPrior(build_unet(TINY), TINY, TextEncoder(), "cpu", name="tiny")


def _text(seed: int = 0) -> TextEmbedding:
    g = torch.Generator().manual_seed(seed)
    return TextEmbedding(
        "p", "", torch.randn(1, 1, 384, generator=g), torch.zeros(1, 1, 384), first_frame=torch.rand(3, 16, 16, generator=g)
    )


def _video(seed: int = 1, frames: int = 4, size: int = 16) -> torch.Tensor:
    return torch.rand(frames, 3, size, size, generator=torch.Generator().manual_seed(seed))


def test_a_redraw_keeps_the_video_at_low_noise_and_forgets_it_at_full_noise(teacher):
    text = _text()
    a, b = _video(1), _video(2)

    def redraw(video, t):
        return teacher.redraw(video, text, t, torch.Generator().manual_seed(5), guidance=2.0, steps=10)

    low = redraw(a, 0.02)
    assert low.shape == a.shape and low.min() >= 0 and low.max() <= 1
    assert (low - a).abs().mean() < 0.05  # almost no noise: the video comes back
    full_a, full_b = redraw(a, 1.0), redraw(b, 1.0)
    assert (full_a - a).abs().mean() > 5 * (low - a).abs().mean()
    assert (full_a - full_b).abs().mean() < 0.1 * (a - b).abs().mean()  # from pure noise the input hardly matters
    assert torch.equal(redraw(a, 0.5), redraw(a, 0.5))  # deterministic for a seed
    assert not torch.equal(redraw(a, 0.5), teacher.redraw(a, text, 0.5, torch.Generator().manual_seed(6), 2.0, 10))


def test_a_redraw_counts_its_steps_from_the_noise_level(teacher):
    done = []
    teacher.redraw(_video(), _text(), 0.5, torch.Generator().manual_seed(0), 2.0, 10, progress=lambda d, n: done.append((d, n)))
    assert done == [(i, 5) for i in range(1, 6)]
    with pytest.raises(ValueError, match="t_start must be in"):
        teacher.redraw(_video(), _text(), 0.0, None, 2.0, 10)


def test_a_latent_video_prior_redraws_at_the_input_size_and_frame_count():
    cog = CogVideoXPrior(cogvideox_pipeline(), name="tiny-cogvideox", device="cpu")
    text = cog.encode_text("a fox trots forward")
    video = _video(3, frames=6, size=24)
    out = cog.redraw(video, text, 0.6, torch.Generator().manual_seed(0), guidance=3.0, steps=5)
    assert out.shape == video.shape and torch.isfinite(out).all()
    assert torch.equal(out, cog.redraw(video, text, 0.6, torch.Generator().manual_seed(0), guidance=3.0, steps=5))


class _RedrawsToOneVideo:
    """A prior that redraws every video as ``target`` (the true motion's render) and says what it got."""

    name = "redraws-one-video"

    def __init__(self, target: torch.Tensor) -> None:
        self.target, self.frames, self.fps, self.calls = target, target.shape[0], 8.0, []

    def encode_text(self, prompt, negative_prompt=""):
        return None

    def redraw(self, video, text, t, generator=None, guidance=6.0, steps=30, progress=None):
        self.calls.append((t, video.clone(), guidance, steps))
        return self.target

    def sds_loss(self, video, text, step, total_steps, generator=None, region=None):
        return {"loss": multiscale_mse(video.float(), self.target)}


def test_start_pose_fits_each_redrawn_render_of_the_motion_so_far():
    """From the held pose the first round's redraw shows a raised arm; its fit is what the second round
    renders and hands on (so the second round's input already shows the arm), and that round begins
    from the motion so far."""
    rig, frames = biped(), 4
    renderer = Renderer(rig, 64, 64, backend="torch", device="cpu")
    with torch.no_grad():
        vertices = Skeleton(rig)(raised_arm(rig, frames, 1.6))
        target = renderer.render(vertices, make_cameras(rig, root_path(vertices), 64, 64))[:, :3]
        target = torch.nn.functional.avg_pool2d(target, 2)
    prior = _RedrawsToOneVideo(target)
    config = DistillConfig(
        frames=frames,
        fps=8.0,
        keys=frames,
        device="cpu",
        height=32,
        width=32,
        supersample=2,
        start="pose",
        redraw=RedrawSettings(noise=(0.8, 0.4)),
        search=SearchSettings(scales=(2.4, 1.6, 1.0, 0.6), guidance=4.0, steps=20),
    )
    result = distill(rig, "raise the right arm", config, prior, init_pose=neutral_clip(rig))
    assert [c[0] for c in prior.calls] == [0.8, 0.4] and {c[2:] for c in prior.calls} == {(4.0, 20)}
    assert result.config.steps == 0 and result.history == []  # redraw rounds: no SDS steps by default
    assert result.extra["redraw_rounds"] == 2 and result.extra["redraw_starts"].endswith("motion so far")
    assert result.extra["search_error"] < 0.35 * result.extra["search_error_start"]
    held_gap = (prior.calls[0][1] - target).abs().mean()
    assert (prior.calls[1][1] - target).abs().mean() < 0.5 * held_gap  # round 2 renders round 1's fit
    assert "redraw" in result.timings


def test_the_rounds_default_by_start_and_prior():
    class Draws:
        name = "draws"

        def sample(self): ...

        def redraw(self): ...

    class ScoresOnly:
        name = "scores-only"

    pose = resolve_start(DistillConfig(start="pose"), Draws())
    assert (pose.redraw.noise, pose.steps) == (POSE_REDRAW_NOISE, 0)
    sample = resolve_start(DistillConfig(), Draws())
    assert (sample.start, sample.redraw.noise, sample.steps) == ("sample", (), 0)
    stepped = resolve_start(DistillConfig(start="pose", steps=5), Draws())
    assert (stepped.redraw.noise, stepped.steps) == (POSE_REDRAW_NOISE, 5)  # rounds, then the steps asked for
    plain = resolve_start(DistillConfig(), ScoresOnly())
    assert (plain.start, plain.redraw.noise, plain.steps) == ("pose", (), 200)
    with pytest.raises(InputError, match="redraw rounds need a prior that can redraw"):
        resolve_start(DistillConfig(redraw=RedrawSettings(noise=(0.5,))), ScoresOnly())
    refine = resolve_start(DistillConfig(redraw=RedrawSettings(noise=(0.5,))), Draws())
    assert (refine.start, refine.redraw.noise, refine.steps) == ("sample", (0.5,), 0)


def test_redraw_levels_are_read_checked_and_round_trip():
    assert parse_redraw("auto") is None and parse_redraw(" none ") == () and parse_redraw("0.9, 0.7,0.5") == (0.9, 0.7, 0.5)
    for text in ("auto", "none", "0.9,0.5"):
        assert redraw_text(parse_redraw(text)) == text
    for bad in ("1.5", "0.5,-1", "loud"):
        with pytest.raises(SettingError) as err:
            parse_redraw(bad)
        assert err.value.field == "redraw"
    with pytest.raises(SettingError, match="levels must be in"):
        DistillConfig(redraw=RedrawSettings(noise=(0.0,))).validate()
    with pytest.raises(SettingError, match="scales must be positive") as err:
        DistillConfig(redraw=RedrawSettings(scales=(0.6, -0.3))).validate()
    assert err.value.field == "redraw"  # a panel label: the operator names it "Redraw"
    with pytest.raises(SettingError, match="steps must be at least 1"):
        DistillConfig(start="pose", steps=0, redraw=RedrawSettings(noise=())).validate()
    DistillConfig(start="pose", steps=0).validate()  # the default rounds move the pose
    config = replace(DistillConfig(), redraw=RedrawSettings(noise=(0.6, 0.3)))
    assert config_from_dict(config.as_dict()) == config


def test_the_command_line_sets_the_rounds():
    jobs, _ = cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p", "--redraw", "0.5"])
    assert job_settings.distill_config(jobs[0], frame_start=1, fps=24.0).redraw.noise == (0.5,)
    jobs, _ = cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p"])
    assert job_settings.distill_config(jobs[0], frame_start=1, fps=24.0).redraw.noise is None
    with pytest.raises(InputError, match="^--redraw levels must be in"):
        job_settings.check_usage(
            cli_parser.parse_jobs(["--input", "x.blend", "--prompt", "p", "--redraw", "2", "--out", "/tmp/o.blend"])[0][0]
        )
