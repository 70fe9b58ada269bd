"""A job's progress through every phase (load, draw, search, steps) and cancel during the drawing and
the pose search, with the embedded teacher on the CPU."""

from __future__ import annotations

import pytest

from akd_blender.core.character.procedural import biped
from akd_blender.core.errors import Cancelled
from akd_blender.core.job import worker as wk
from akd_blender.core.job.request import JobRequest, run_request
from akd_blender.core.progress import Callbacks
from akd_blender.core.settings import DistillConfig, SearchSettings
from akd_blender.core.video_models import load_prior

DRAW_STEPS = 3


@pytest.fixture(scope="module")
def teacher():
    return load_prior("tiny", device="cpu")


def _request(steps: int = 1) -> JobRequest:
    search = SearchSettings(steps=DRAW_STEPS, scales=(2.4,), supersample=1)
    config = DistillConfig(frames=4, steps=steps, device="cpu", height=16, width=16, supersample=1, start="sample", search=search)
    return JobRequest(rig=biped(), prompt="a person waves", config=config)


def _phases(events) -> list[str]:
    """The phases in the order they came, each once."""
    out: list[str] = []
    for e in events:
        if not out or out[-1] != e.phase:
            out.append(e.phase)
    return out


def test_progress_reaches_the_job_callback_through_every_phase_in_order(teacher):
    events = []
    run_request(_request(steps=2), Callbacks(progress=events.append), prior=teacher)
    assert _phases(events) == ["load", "draw", "search", "steps"]
    draw = [(e.step, e.total) for e in events if e.phase == "draw"]
    assert draw == [(k, DRAW_STEPS) for k in range(1, DRAW_STEPS + 1)]
    search = [e for e in events if e.phase == "search"]
    assert len(search) > 3 and all(a.step <= b.step for a, b in zip(search, search[1:]))
    assert search[-1].step == search[-1].total and search[-1].eta_seconds == 0.0
    assert search[0].detail.startswith("sweep 1/1 · ") and {e.detail.split(" · ")[1] for e in search} >= {"start", "hips"}
    assert [(e.step, e.total) for e in events if e.phase == "steps"] == [(1, 2), (2, 2)]
    assert all(e.losses for e in events if e.phase == "steps") and not any(e.losses for e in events if e.phase != "steps")


def test_the_worker_posts_every_phase_to_the_panel_and_the_cli():
    """What the panel's bar and the CLI's bar read: worker Progress messages carrying the phase."""
    messages: list = []
    final = wk.run_job(_request(steps=1), messages.append)  # loads "tiny" itself
    assert isinstance(final, wk.Done)
    progress = [m for m in messages if isinstance(m, wk.Progress)]
    assert _phases(progress) == ["load", "draw", "search", "steps"]
    assert any(m.detail.startswith("sweep 1/1") for m in progress if m.phase == "search")


@pytest.mark.parametrize(
    "phase,message",
    [("draw", r"drawing cancelled at step 1 of 3"), ("search", r"pose search cancelled in sweep 1 of 1")],
)
def test_cancel_stops_the_job_in_the_phase_it_is_in(teacher, phase, message):
    events = []
    callbacks = Callbacks(progress=events.append, should_cancel=lambda: any(e.phase == phase for e in events))
    with pytest.raises(Cancelled, match=message):
        run_request(_request(), callbacks, prior=teacher)
    assert _phases(events)[-1] == phase  # nothing after the phase it was cancelled in
    if phase == "search":
        assert events[-1].step < events[-1].total
