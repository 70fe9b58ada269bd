"""Data-parallel SDS: one job on several processes (GPUs), through ``torch.distributed``.

Every process (rank) holds the same motion parameters and runs the same loop; each SDS step asks the
prior ``draws`` times in all (:attr:`~akd_blender.core.settings.DistillConfig.draws`), and rank ``r`` of
``N`` makes the draws ``r, r + N, r + 2N, …``. Draw ``d`` takes its noise and timestep from its own
generator (:func:`draw_generator`: draw 0 from the job's seed, as a single-process run does), so the
split over ranks does not change what is drawn. Each rank back-propagates

    loss_r = w_sds · (sum of its own draws' SDS losses) / draws + (regularisers) / N,

and the motion parameters' gradients (a few thousand floats) are summed over ranks
(:func:`sum_gradients`) before the optimiser step: the sum of the ``loss_r`` is the single-process
loss with the same draws, so every rank takes the same step as one process would.

Start a job on N processes with ``torchrun --nproc-per-node N run_akd.py …`` (or any launcher that sets
``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``); :func:`init_from_env`
joins the group (NCCL on CUDA, gloo on the CPU; one GPU per local rank). Outside a group every helper
here is the single-process identity.
"""

from __future__ import annotations

import datetime
import os
import socket
from collections.abc import Sequence

import numpy as np
import torch

__all__ = [
    "NVLS_VARIABLE",
    "keep_nvls_off",
    "world",
    "init_from_env",
    "free_port",
    "set_local_rank_env",
    "draw_generator",
    "own_draws",
    "sum_gradients",
    "sum_values",
    "broadcast_parameters",
]

NVLS_VARIABLE = "NCCL_NVLS_ENABLE"
# a rank waits in a collective while another draws and searches (the sample-then-fit start of a large prior)
GROUP_TIMEOUT = datetime.timedelta(hours=2)


def keep_nvls_off(environ: dict | None = None) -> str:
    """Set ``NCCL_NVLS_ENABLE=0`` (NVLink multicast off) in ``environ`` (default ``os.environ``) unless
    the user set it; returns the value in force. NCCL reads it when a communicator is created."""
    environ = os.environ if environ is None else environ
    return environ.setdefault(NVLS_VARIABLE, "0")


def world() -> tuple[int, int]:
    """(rank, world size) of the initialised default process group; (0, 1) without one."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def init_from_env(device: str = "auto") -> tuple[int, int]:
    """Join the process group a launcher such as torchrun describes in the environment (``WORLD_SIZE`` > 1),
    once; returns (rank, world size), (0, 1) when there is no such launcher.

    ``device`` "auto" / "cuda" with CUDA available: NCCL, and this process's GPU becomes
    ``cuda:LOCAL_RANK`` (so "cuda" means that GPU from here on); otherwise gloo. NVLink multicast is
    kept off (:func:`keep_nvls_off`: set in ``os.environ``, where NCCL reads it, only in a process the
    launcher started as a rank, ``WORLD_SIZE`` > 1; it stays for the process's life, its communicators
    being created at any later collective). Reads ``LOCAL_RANK``, never sets it."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1 or not torch.distributed.is_available():
        return 0, 1
    if not torch.distributed.is_initialized():
        keep_nvls_off()
        cuda = device != "cpu" and torch.cuda.is_available()
        if cuda:
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        torch.distributed.init_process_group("nccl" if cuda else "gloo", timeout=GROUP_TIMEOUT)
    return world()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (for a local rendezvous)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def set_local_rank_env(rank: int, size: int, port: int) -> None:
    """Set the environment torchrun gives rank ``rank`` of ``size`` processes on this machine
    (rendezvous at 127.0.0.1:``port``), for :func:`init_from_env` in a process spawned without torchrun.

    For a worker process spawned to be that rank only (the multi-process tests and ``bench_ddp``), never
    for Blender's or the command line's own process: ``torch.distributed``'s ``env://`` rendezvous reads
    these variables from ``os.environ``, so they must be set there, and nothing restores them (the
    worker ends with its job). The add-on itself never calls it."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(size))
    os.environ["LOCAL_RANK"] = str(rank)


def draw_generator(seed: int, draw: int) -> torch.Generator:
    """The CPU generator of SDS draw ``draw`` (0-based) of a job seeded ``seed``: draw 0 is seeded with
    ``seed`` itself (a one-draw run is what it always was), draw d > 0 with a 64-bit seed mixed from
    (seed, d) by numpy's SeedSequence."""
    if draw == 0:
        return torch.Generator("cpu").manual_seed(int(seed))
    mixed = int(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(draw)]).generate_state(1, np.uint64)[0])
    return torch.Generator("cpu").manual_seed(mixed)


def own_draws(draws: int, rank: int, size: int) -> list[int]:
    """The draw indices rank ``rank`` of ``size`` makes among ``draws`` per step: rank, rank + size, …"""
    return list(range(rank, draws, size))


def sum_gradients(parameters: Sequence[torch.Tensor]) -> None:
    """Sum the ``.grad`` of ``parameters`` over all ranks, in place (one all-reduce of their
    concatenation; a missing gradient counts as zeros). No-op outside a process group."""
    rank, size = world()
    if size == 1:
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in parameters]
    flat = torch.cat([g.reshape(-1) for g in grads])
    torch.distributed.all_reduce(flat)
    offset = 0
    for p, g in zip(parameters, grads):
        n = g.numel()
        p.grad = flat[offset : offset + n].view_as(p).clone()
        offset += n


def sum_values(values: dict[str, float], device: torch.device | str = "cpu") -> dict[str, float]:
    """``values`` {name: float} summed over all ranks (every rank must pass the same names in the same
    order); ``device``: where the collective runs (the GPU for NCCL). Identity outside a process group."""
    rank, size = world()
    if size == 1 or not values:
        return dict(values)
    flat = torch.tensor(list(values.values()), dtype=torch.float64, device=device)
    torch.distributed.all_reduce(flat)
    return dict(zip(values, flat.cpu().tolist()))


def broadcast_parameters(parameters: Sequence[torch.Tensor], src: int = 0) -> None:
    """Copy ``parameters`` from rank ``src`` to every rank, in place. No-op outside a process group."""
    rank, size = world()
    if size == 1:
        return
    with torch.no_grad():
        for p in parameters:
            torch.distributed.broadcast(p.data, src)
