"""Jobs through a local Ray (core.ray_jobs): the same results as the serial run for the same seeds, a
failing job reported as the serial run reports it, a task whose worker dies run again. Two tiny
embedded-teacher jobs on a two-CPU local Ray."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.core.errors import InputError
from akd_blender.core.job import worker as wk
from akd_blender.core.job.request import JobRequest
from akd_blender.core.settings import DistillConfig, RedrawSettings

pytest.importorskip("ray")

from akd_blender.core.job.ray_jobs import TaskResources, ray_session, run_requests_ray, run_tasks  # noqa: E402


def _request(rig, prompt: str, seed: int) -> JobRequest:
    config = DistillConfig(
        frames=4,
        steps=3,
        height=16,
        width=16,
        supersample=1,
        start="pose",
        seed=seed,
        device="cpu",
        redraw=RedrawSettings(noise=()),
    )
    return JobRequest(rig=rig, prompt=prompt, config=config)


@pytest.fixture(scope="module")
def ray():
    with ray_session(num_cpus=2) as ray:
        yield ray


def test_jobs_through_ray_equal_the_serial_run(ray):
    requests = [_request(biped(), "a person waves", 1), _request(quadruped(), "a dog jumps", 2)]
    requests.append(JobRequest(rig=biped(), prompt="  ", config=requests[0].config))  # bad input: exit 2
    finished = []
    spread = run_requests_ray(requests, TaskResources(num_cpus=1), on_done=lambda i, m: finished.append(i), progress=False)
    serial = [wk.run_job(r, lambda message: None) for r in requests]
    assert sorted(finished) == [0, 1, 2]
    for a, b in zip(spread[:2], serial[:2]):
        assert isinstance(a, wk.Done) and isinstance(b, wk.Done)
        np.testing.assert_array_equal(a.result.clip.rotations, b.result.clip.rotations)
        np.testing.assert_array_equal(a.result.clip.locations, b.result.clip.locations)
        assert a.result.history == b.result.history and a.result.facts == b.result.facts
    assert isinstance(spread[2], wk.Failed) and spread[2] == serial[2] and spread[2].exit_code == 2


def dies_once(marker: str) -> int:
    """The first call kills its worker process; the call after that returns the worker's pid."""
    if not os.path.exists(marker):
        Path(marker).write_text("died")
        os._exit(1)
    return os.getpid()


def test_a_task_whose_worker_dies_is_run_again(ray, tmp_path):
    marker = str(tmp_path / "marker")
    assert run_tasks(dies_once, [marker], TaskResources(retries=1), progress=False)[0] > 0
    lost = run_tasks(dies_once, [str(tmp_path / "other")], TaskResources(retries=0), lost=lambda line: line, progress=False)
    assert "Worker" in lost[0] or "died" in lost[0].lower()


def test_bad_resources_are_one_line():
    with pytest.raises(InputError, match="--ray-gpus must be at least 0"):
        TaskResources(num_gpus=-1).validate()
