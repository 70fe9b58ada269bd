"""Data-parallel SDS (core.parallel): two gloo processes on the CPU take the steps one process takes with
the same two draws per step, with the embedded teacher."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation import parallel
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.settings import DistillConfig, RedrawSettings, SettingError
from akd_blender.core.video_models import load_prior

PROMPT = "a person waves"
# start from the pose; target_reuse 2: steps 0 and 2 query the teacher, step 1 reuses each draw's target
CONFIG = dict(
    frames=4,
    steps=3,
    height=16,
    width=16,
    supersample=1,
    start="pose",
    target_reuse=2,
    device="cpu",
    seed=3,
    redraw=RedrawSettings(noise=()),
)


def _run(draws: int | None) -> tuple[np.ndarray, list[dict]]:
    """The distillation with one torch thread (each rank's count: CPU results depend on it)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = distill(biped(), PROMPT, DistillConfig(draws=draws, **CONFIG), prior=load_prior("tiny", device="cpu"))
    finally:
        torch.set_num_threads(threads)
    return result.clip.rotations, result.history


def _rank(rank: int, size: int, port: int, out: str) -> None:
    """One torchrun-like process: the launcher's environment, join the group, distil, rank 0 saves."""
    parallel.set_local_rank_env(rank, size, port)
    os.environ.pop(parallel.NVLS_VARIABLE, None)
    assert parallel.init_from_env("cpu") == (rank, size)
    assert os.environ[parallel.NVLS_VARIABLE] == "0"
    try:
        rotations, history = _run(None)  # draws: one per process
        if rank == 0:
            np.savez(out, rotations=rotations, sds=[h["sds"] for h in history], total=[h["total"] for h in history])
    finally:
        torch.distributed.destroy_process_group()


def test_two_gloo_processes_match_one_process_with_two_draws(tmp_path):
    out = str(tmp_path / "rank0.npz")
    mp.spawn(_rank, args=(2, parallel.free_port(), out), nprocs=2, join=True)
    spread = np.load(out)
    rotations, history = _run(2)
    np.testing.assert_allclose(spread["rotations"], rotations, atol=1e-5)
    np.testing.assert_allclose(spread["sds"], [h["sds"] for h in history], rtol=1e-5)
    np.testing.assert_allclose(spread["total"], [h["total"] for h in history], rtol=1e-5)
    one_draw, _ = _run(1)  # the second rank drew its own noise and timesteps: not a copy of the first
    assert np.abs(spread["rotations"] - one_draw).max() > 1e-4


def test_draws_are_seeded_per_draw_and_shared_out_by_rank():
    first = torch.rand(3, generator=parallel.draw_generator(7, 0))
    assert torch.equal(first, torch.rand(3, generator=torch.Generator().manual_seed(7)))  # draw 0: the job's seed
    second = torch.rand(3, generator=parallel.draw_generator(7, 1))
    assert not torch.equal(first, second) and torch.equal(second, torch.rand(3, generator=parallel.draw_generator(7, 1)))
    assert parallel.own_draws(5, 0, 2) == [0, 2, 4] and parallel.own_draws(5, 1, 2) == [1, 3]
    assert parallel.world() == (0, 1)


def test_nvlink_multicast_is_kept_off_unless_the_user_says_otherwise():
    env = {}
    assert parallel.keep_nvls_off(env) == "0" and env == {parallel.NVLS_VARIABLE: "0"}
    mine = {parallel.NVLS_VARIABLE: "1"}
    assert parallel.keep_nvls_off(mine) == "1" and mine == {parallel.NVLS_VARIABLE: "1"}


def test_draws_must_be_positive():
    with pytest.raises(SettingError, match="draws must be at least 1"):
        DistillConfig(draws=0).validate()
