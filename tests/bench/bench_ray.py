"""Jobs per minute: N embedded-teacher jobs one after another in this process vs at once through a local Ray.

The jobs are :class:`~akd_blender.core.job.request.JobRequest` s (no bpy): held-out procedural family members,
bipeds and quadrupeds in turn, each with a held-out wording of one of its kind's library motions and its
own seed, with the teacher's default start (it draws a video, the pose search fits it; ``--steps`` SDS
steps after). Serial: one warm-up job (prior loaded, renderer compiled), then the N jobs timed. Ray
(:func:`~akd_blender.core.job.ray_jobs.run_requests_ray`; each task asks for ``--gpus-per-job`` of a GPU,
e.g. 1/8 so that 8 jobs share one, and ``--cpus-per-job`` CPUs): round 1 on fresh workers (each loads
torch, CUDA and the prior), round 2 on the same workers, warm like the serial run. The bar applies to
round 2's jobs per minute over the serial run's. Also reported: the largest difference between the
clips of Ray and of the serial run (0 when the job reproduces across processes).

    python -m tests.bench.bench_ray --jobs 8 --out DIR [--gpus-per-job 0.125] [--bar 3]

Writes DIR/bench_ray.json; exits 1 below the bar.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from akd_blender.core.job import worker as wk
from akd_blender.core.job.ray_jobs import TaskResources, ray_session, run_requests_ray
from akd_blender.core.job.request import JobRequest
from akd_blender.core.motion.library import motions_for
from akd_blender.core.settings import START_MODES, DistillConfig
from tools.family import HELDOUT_SEEDS, make_member

KINDS = ("biped", "quadruped")


def make_requests(
    count: int, device: str, steps: int | None, frames: int | None, start: str = "auto", first: int = 0
) -> list[JobRequest]:
    """``count`` jobs: family members ``first``… of the held-out seeds, kinds in turn, their kind's motions in
    turn (held-out wordings), seed = job number."""
    requests = []
    for n in range(first, first + count):
        kind = KINDS[n % len(KINDS)]
        specs = motions_for(kind)
        spec = specs[(n // len(KINDS)) % len(specs)]
        rig = make_member(kind, HELDOUT_SEEDS[n // len(KINDS)]).rig
        config = DistillConfig(seed=n, device=device, steps=steps, frames=frames, start=start, preview_every=0)
        requests.append(JobRequest(rig=rig, prompt=spec.heldout_phrasings[0], config=config))
    return requests


def _checked(messages: list) -> list:
    failed = [m for m in messages if not isinstance(m, wk.Done)]
    if failed:
        raise SystemExit(f"bench_ray: a job did not finish: {failed[0]}")
    return [m.result for m in messages]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--out", default="bench_out")
    ap.add_argument("--device", default="auto", help="auto (CUDA when available), cuda or cpu")
    ap.add_argument("--gpus-per-job", type=float, help="GPU fraction per Ray task (default: 1/jobs on CUDA, 0 on the CPU)")
    ap.add_argument("--cpus-per-job", type=float, default=1.0)
    ap.add_argument("--threads", type=int, help="torch threads per Ray task (default: the CPUs / jobs, at least 1)")
    ap.add_argument("--steps", type=int, help="SDS steps after the fit (default: the config's, 0 after a drawn video)")
    ap.add_argument("--frames", type=int, help="clip length (default: the teacher's clip)")
    ap.add_argument("--start", default="auto", choices=START_MODES, help="the jobs' start (default: draw + search)")
    ap.add_argument("--bar", type=float, default=3.0, help="least speed-up of Ray's warm round over serial")
    args = ap.parse_args(argv)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    cpus = os.cpu_count() or 1
    gpus = torch.cuda.device_count() if device == "cuda" else 0
    per_gpu = (args.gpus_per_job if args.gpus_per_job is not None else 1.0 / args.jobs) if gpus else 0.0
    threads = args.threads or max(1, cpus // args.jobs)
    requests = make_requests(args.jobs, device, args.steps, args.frames, args.start)
    warmup = make_requests(1, device, args.steps, args.frames, args.start, first=args.jobs)
    print(
        f"bench_ray: {args.jobs} jobs on {device} ({cpus} CPUs, {gpus} GPUs), {per_gpu:g} GPU and "
        f"{args.cpus_per_job:g} CPU per Ray task, {threads} torch threads per task",
        flush=True,
    )

    _checked([wk.run_job(r, lambda m: None) for r in warmup])
    t = time.perf_counter()
    serial = _checked([wk.run_job(r, lambda m: None) for r in requests])
    serial_s = time.perf_counter() - t
    print(f"serial: {serial_s:.1f} s, {60 * args.jobs / serial_s:.1f} jobs/min", flush=True)

    resources = TaskResources(num_cpus=args.cpus_per_job, num_gpus=per_gpu, threads=threads)
    rounds = []
    with ray_session(num_cpus=cpus, num_gpus=gpus):
        for name in ("cold", "warm"):
            t = time.perf_counter()
            results = _checked(run_requests_ray(requests, resources, progress=False))
            rounds.append((name, time.perf_counter() - t, results))
            print(f"ray {name}: {rounds[-1][1]:.1f} s, {60 * args.jobs / rounds[-1][1]:.1f} jobs/min", flush=True)
    differences = [float(np.abs(a.clip.rotations - b.clip.rotations).max()) for a, b in zip(serial, rounds[-1][2])]
    speedups = {name: serial_s / seconds for name, seconds, _ in rounds}
    row = {
        "jobs": args.jobs,
        "device": device,
        "gpu": torch.cuda.get_device_name(0) if gpus else None,
        "cpus": cpus,
        "gpus_per_job": per_gpu,
        "cpus_per_job": args.cpus_per_job,
        "threads_per_task": threads,
        "serial_s": serial_s,
        "serial_jobs_per_min": 60 * args.jobs / serial_s,
        **{f"ray_{name}_s": seconds for name, seconds, _ in rounds},
        **{f"ray_{name}_jobs_per_min": 60 * args.jobs / seconds for name, seconds, _ in rounds},
        **{f"speedup_{name}": value for name, value in speedups.items()},
        "seconds_per_job_serial": [r.seconds for r in serial],
        "max_rotation_difference_ray_vs_serial": max(differences),
        "bar": args.bar,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_ray.json").write_text(json.dumps(row, indent=2))
    print(
        f"speed-up: cold {speedups['cold']:.2f}×, warm {speedups['warm']:.2f}× (bar {args.bar}×); "
        f"largest rotation difference Ray vs serial {max(differences):.3g}; {out / 'bench_ray.json'}"
    )
    return 0 if speedups["warm"] >= args.bar else 1


if __name__ == "__main__":
    sys.exit(main())
