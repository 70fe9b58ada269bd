"""Teacher queries per second of one job on N GPUs (data-parallel SDS, core.parallel) vs on one.

One distillation of the procedural biped from the pose, ``--steps`` SDS steps, every step a query
(``target_reuse`` 1): first in this process on one GPU with one draw per step, then on N processes
started here (NCCL, one GPU each; what ``torchrun --nproc-per-node N`` does) with one draw per
process per step, i.e. N queries per step. Queries per second are counted over the optimiser steps
after the first (the first pays for cuDNN autotuning and the renderer's set-up). ``--model``: the
embedded teacher ("tiny") or a full-size random-weight prior of ``tests/bench/bench_priors.py``
(e.g. cogvideox-2b, at its native video size unless ``--frames`` / ``--height`` / ``--width``).

    python -m tests.bench.bench_ddp --gpus 2 --out DIR [--model tiny] [--steps 30] [--bar 1.8]

``--device cpu`` runs the same with gloo processes (a smoke run; the figure means little there).
Writes DIR/bench_ddp.json; exits 1 below the bar, 2 when fewer than ``--gpus`` GPUs are visible.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp

from akd_blender.core.character.procedural import biped
from akd_blender.core.distillation import parallel
from akd_blender.core.distillation.sds_loop import distill
from akd_blender.core.progress import Callbacks
from akd_blender.core.settings import DistillConfig, RedrawSettings

PROMPT = "a person waves"


def load_bench_prior(name: str, device: str):
    """The embedded teacher ("tiny") or a random-weight full-size prior built by bench_priors."""
    if name == "tiny":
        from akd_blender.core.video_models import load_prior

        return load_prior("tiny", device=device)
    from akd_blender.core.video_models.protocol import MemoryOptions
    from tests.bench.bench_priors import build_prior

    return build_prior(name, torch.device(device), MemoryOptions())


def queries_per_second(args: argparse.Namespace, device: str) -> dict:
    """Distil once; {"queries_per_s", "steps_per_s", "draws", "processes"} over the steps after the first."""
    rank, size = parallel.world()
    prior = load_bench_prior(args.model, device)
    sizes = {k: getattr(args, k) for k in ("frames", "height", "width") if getattr(args, k)}
    config = DistillConfig(
        steps=args.steps,
        start="pose",
        redraw=RedrawSettings(noise=()),
        target_reuse=1,
        device=device,
        seed=args.seed,
        preview_every=0,
        **sizes,
    )
    stamps: list[float] = []

    def progress(p) -> None:
        if p.phase == "steps":
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            stamps.append(time.perf_counter())

    result = distill(biped(), PROMPT, config, prior=prior, callbacks=Callbacks(progress=progress))
    steps_per_s = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    draws = int(result.config.draws)
    return {"queries_per_s": steps_per_s * draws, "steps_per_s": steps_per_s, "draws": draws, "processes": size}


def _rank(rank: int, size: int, port: int, args: argparse.Namespace, out: str) -> None:
    parallel.set_local_rank_env(rank, size, port)
    parallel.init_from_env(args.device)
    try:
        row = queries_per_second(args, "cuda" if args.device == "cuda" else "cpu")
        if rank == 0:
            Path(out).write_text(json.dumps(row))
    finally:
        torch.distributed.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=2, help="processes (GPUs) of the data-parallel run")
    ap.add_argument("--out", default="bench_out")
    ap.add_argument("--model", default="tiny", help='"tiny" or a bench_priors model name, e.g. cogvideox-2b')
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--frames", type=int)
    ap.add_argument("--height", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--bar", type=float, default=1.8, help="least speed-up in queries per second")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    visible = torch.cuda.device_count() if args.device == "cuda" else args.gpus
    if visible < args.gpus:
        print(f"bench_ddp: blocked: needs {args.gpus} GPUs, {visible} visible", flush=True)
        (out / "bench_ddp.json").write_text(json.dumps({"blocked": f"needs {args.gpus} GPUs, {visible} visible"}))
        return 2
    parallel.keep_nvls_off()
    one = queries_per_second(args, args.device)
    print(f"1 process: {one['queries_per_s']:.2f} queries/s", flush=True)
    if args.device == "cuda":
        torch.cuda.empty_cache()
    rank0 = out / "bench_ddp_rank0.json"
    mp.spawn(_rank, args=(args.gpus, parallel.free_port(), args, str(rank0)), nprocs=args.gpus, join=True)
    many = json.loads(rank0.read_text())
    rank0.unlink()
    speedup = many["queries_per_s"] / one["queries_per_s"]
    row = {
        "model": args.model,
        "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else None,
        "steps": args.steps,
        "one": one,
        "many": many,
        "speedup": speedup,
        "nccl_nvls_enable": os.environ.get(parallel.NVLS_VARIABLE),
        "bar": args.bar,
    }
    (out / "bench_ddp.json").write_text(json.dumps(row, indent=2))
    print(f"{args.gpus} processes: {many['queries_per_s']:.2f} queries/s; speed-up {speedup:.2f}× (bar {args.bar}×)")
    return 0 if speedup >= args.bar else 1


if __name__ == "__main__":
    sys.exit(main())
