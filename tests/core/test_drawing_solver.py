"""The drawing stepped by diffusers' DPM-Solver++ (``CogVideoXPrior.drawing_scheduler`` +
``draw_with_scheduler``), checked against an exact denoiser: a tiny random CogVideoX-I2V of the real
diffusers classes whose prediction is replaced by the one that names a known clean sample. A solver on
the model's own schedule and parametrisation then lands on that sample, from noise or from a redraw's start."""

from __future__ import annotations

import pytest
import torch

from akd_blender.core.video_models.cogvideox_i2v import CogVideoXImageToVideoPrior
from akd_blender.core.video_models.drawing import draw_latents, draw_with_scheduler
from tests.core.dummy_priors import cogvideox_i2v_pipeline


@pytest.fixture(scope="module")
def oracle():
    """The tiny prior with ``_predict`` answering as a perfect model of one clean latent ``x0``."""
    prior = CogVideoXImageToVideoPrior(cogvideox_i2v_pipeline(), name="tiny cogvideox-i2v", device="cpu")
    shape = prior._latent_shape(prior.frames, prior.height, prior.width)
    x0 = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    alphas = prior.alphas_cumprod.clamp(min=2**-24)

    def predict(noisy, timestep, text, cfg):
        ac = float(alphas[int(timestep)])
        a, s = ac**0.5, (1 - ac) ** 0.5
        eps = (noisy.float() - a * x0) / s
        pred = a * eps - s * x0 if prior.prediction_type == "v_prediction" else eps
        return torch.cat([pred] * (2 if cfg else 1))

    prior._predict = predict
    return prior, x0, shape


def test_the_scheduler_is_dpm_solver_on_the_models_own_schedule(oracle):
    prior, _, _ = oracle
    scheduler = prior.drawing_scheduler()
    assert type(scheduler).__name__ == "DPMSolverMultistepScheduler"
    assert scheduler.config.algorithm_type == "dpmsolver++" and scheduler.config.solver_order == 2
    assert scheduler.config.prediction_type == prior.prediction_type
    assert torch.allclose(scheduler.alphas_cumprod.double(), prior.alphas_cumprod.clamp(min=2**-24), rtol=1e-5)


@pytest.mark.parametrize("steps", [4, 20])
def test_an_exact_model_draws_its_clean_sample(oracle, steps):
    prior, x0, shape = oracle
    calls = []
    drawn = draw_with_scheduler(
        prior, prior.drawing_scheduler(), None, shape, torch.Generator().manual_seed(0), 1.0, steps, lambda i, n: calls.append(i)
    )
    assert calls == list(range(1, steps + 1))
    assert (drawn - x0).abs().max() < 1e-3


def test_a_redraw_starts_part_way_and_lands_on_the_clean_sample(oracle):
    prior, x0, shape = oracle
    start = x0 + 0.5 * torch.randn(shape, generator=torch.Generator().manual_seed(2))
    calls = []
    drawn = draw_with_scheduler(
        prior, prior.drawing_scheduler(), None, shape, None, 1.0, 5, lambda i, n: calls.append(n), start=start, t_start=0.5
    )
    assert calls == [5] * 5 and (drawn - x0).abs().max() < 1e-3
    ddim = draw_latents(prior, None, shape, None, 1.0, 5, start=start, t_start=0.5)  # DDIM is exact here too
    assert (ddim - x0).abs().max() < 1e-3


def test_bad_steps_or_start_are_refused(oracle):
    prior, _, shape = oracle
    with pytest.raises(ValueError, match="steps"):
        draw_with_scheduler(prior, prior.drawing_scheduler(), None, shape, steps=0)
    with pytest.raises(ValueError, match="t_start"):
        draw_with_scheduler(prior, prior.drawing_scheduler(), None, shape, start=torch.zeros(shape), t_start=1.5)
