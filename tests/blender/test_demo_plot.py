"""The demo's loss-curve PNG: a curve per loss term after SDS steps; after a drawn video fitted as it
is (no steps), the pose search's image error before and after; none for a library motion played as it is."""

from __future__ import annotations

import json

import imageio.v3 as iio

from akd_blender.blender.demo import plot_losses

REPORT = {"prompt": "a hound springs into the air", "model": "tiny", "device": "cpu"}


def _plot(tmp_path, name: str, report: dict):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(report))
    plot_losses(str(path), str(tmp_path / f"{name}.png"))
    return iio.imread(tmp_path / f"{name}.png")


def test_loss_curve_after_steps_and_search_bars_without(tmp_path):
    steps = [{"total": 1.0 / (i + 1), "sds": 0.5 / (i + 1), "sds_t": 0.3} for i in range(5)]
    curve = _plot(tmp_path, "steps", {**REPORT, "loss_history": steps})
    search = {"search_error_start": 0.0012, "search_error": 0.0009}
    bars = _plot(tmp_path, "fitted", {**REPORT, "loss_history": [], "distill": search})
    assert curve.shape == bars.shape and curve.shape[:2] == (440, 770)  # 7 × 4 in at 110 dpi
    assert (curve != bars).any()


def test_a_library_motion_played_as_it_is_has_no_figure(tmp_path):
    library = {"start": "library", "library_motion": "jump", "library_variation": "default"}
    path = tmp_path / "library.json"
    path.write_text(json.dumps({**REPORT, "loss_history": [], "distill": library}))
    assert plot_losses(str(path), str(tmp_path / "library.png")) is False
    assert not (tmp_path / "library.png").exists()
