"""The command line (DESIGN §4): argument parsing and the job runner.

Shared by ``run_akd.py`` (``python run_akd.py …`` with the bpy module, ``blender -b -P run_akd.py -- …``)
and ``blender --command akd …`` (registered by the extension). One job:

1. check the usage (prompt, frame count, output paths writable) before touching anything;
2. open ``--input`` with Blender's own reader/importer, pick the armature, snapshot the rig and bind the
   armature for the job (:func:`~.job.rig.bind_job`: a control rig is probed once, here, and the write
   takes that probe);
3. build a :class:`~akd_blender.core.job.request.JobRequest` and run it on this thread (the same
   :func:`akd_blender.core.job.worker.run_job` the panel runs on its worker thread), with a tqdm
   progress bar (step, ETA, loss) on stderr;
4. write the new action(s) through :mod:`.job.apply`, the panel's apply step too (``--keys sparse``, the default: the fewest keys within an error bound;
   ``dense``: every frame; the armature's previous action is kept; the scene's frame range is left
   alone unless ``--set-scene-range``), then ``--out`` (a copy of the
   scene; the input file is never written), ``--preview`` (MP4 rendered by the project renderer),
   ``--export`` (Blender's FBX / BVH / glTF exporters) and ``--report`` (JSON, fields in
   :data:`REPORT_FIELDS`).

``--jobs FILE`` runs a JSON list of jobs (objects whose keys are the flag names, e.g.
``{"input": "a.glb", "prompt": "…", "out": "a.blend"}``; flags given on the command line are the
defaults; each value is read by the flag's own parser); a failing job is reported and the others
still run; a summary ends the run. Every number, of the flags and of each job of the file, is checked
before any file is opened (:func:`~.job.settings.check_settings`): a value out of its range (zero where it means
nothing, negative, NaN, infinite) stops the run with exit 2 and one line naming the flag (and the job).
A flag left out is None in :class:`CliJob` and its default is decided where it is used.
The SDS and drawing settings (``--cfg-scale``, ``--t-min``, ``--t-max``, ``--lr``, ``--root-lr``,
``--draw-guidance``, ``--draw-steps``, ``--search-supersample``) are
:data:`~akd_blender.core.settings.TUNABLES`, the same the panel's Advanced section offers.

``--ray [ADDRESS]`` runs the jobs at once, each a Ray task (a local Ray by default, the cluster at
ADDRESS when given; :mod:`akd_blender.core.job.ray_jobs`) asking for ``--ray-cpus`` CPUs and ``--ray-gpus``
GPUs (a fraction shares one GPU); each task imports bpy in its worker process and runs the job as the
serial run does (:func:`run_cli_job`), so reports, summary and exit code are the serial run's; a tqdm
bar counts the finished jobs. Ray is an optional dependency (``pip install -r requirements-ray.txt``).

``torchrun --nproc-per-node N run_akd.py …`` runs each job on N processes (one GPU each): the SDS draws
of a step are shared out and the motion's gradients summed (:mod:`akd_blender.core.distillation.parallel`); rank 0
prints and writes, the other ranks write nothing.

What the model understood the prompt as is printed as ``akd: understood as <motion> ("<training
phrasing>", similarity 0.87)`` on stdout (the embedded teacher; ``core.understanding.understood_line``)
unless ``--quiet``. A prompt it matches to no known motion well enough stops the job with one line
naming the nearest motions (exit 2, nothing written) unless ``--allow-nearest``.
Each report warning (the rig's, and the motion's figures over ``core.metrics.motion_thresholds`` of
the motion the model understood) is printed as ``akd: warning: …`` on stderr unless ``--quiet``.

Exit codes: 0 done; 2 bad input or usage (one line ``akd: error: …`` naming the problem, nothing
written); 3 model not available; 4 cancelled (Ctrl-C); 1 internal error. With ``--jobs``: 0 when
every job succeeded, else the exit code of the first failing job.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ...core.errors import AkdError, Cancelled, InputError
from ...core.prompt.understanding import understood_line
from ..job.settings import CliJob, armature_request, check_usage
from .outputs import export, write_preview
from .parser import parse_jobs

__all__ = ["JobOutcome", "REPORT_FIELDS", "run_one", "run_cli_job", "main"]


# Every report holds these keys (DESIGN §4 and a little more); tests check them.
REPORT_FIELDS = (
    "status",
    "package_version",
    "blender_version",
    "input",
    "armature",
    "prompt",
    "negative_prompt",
    "model",
    "device",
    "frames",
    "frame_start",
    "frame_end",
    "fps",
    "steps",
    "seed",
    "seconds",
    "timings",
    "action_names",
    "previous_action",
    "final_losses",
    "loss_history",
    "motion_metrics",
    "physics",
    "config",
    "distill",
    "outputs",
    "keys",
    "warnings",
    "scene_changes",
)


_PHASE_UNITS = {"load": "model", "draw": "step", "search": "clip", "steps": "step", "physics": "frame"}


class _Bar:
    """A tqdm bar on stderr per phase of the job (load, draw, search, steps, physics: see
    :class:`~akd_blender.core.progress.Progress`), each with its count, ETA and detail (the search's
    sweep and bone, the loss of an optimiser step); a new phase closes the previous bar."""

    def __init__(self, enabled: bool, desc: str) -> None:
        self.enabled, self.desc, self.bar, self.phase = enabled, desc, None, None

    def __call__(self, message) -> None:
        """Show a :class:`~akd_blender.core.progress.Progress`;
        any other message is ignored."""
        if not self.enabled or getattr(message, "phase", None) is None:
            return
        if self.bar is None or message.phase != self.phase or message.total != self.bar.total:
            from tqdm import tqdm

            self.close()
            unit = _PHASE_UNITS.get(message.phase, "step")
            desc = f"{self.desc} {message.phase}"
            self.bar = tqdm(total=message.total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)
            self.phase = message.phase
        self.bar.update(message.step - self.bar.n)
        if message.losses:
            loss = message.losses.get("total", next(iter(message.losses.values())))
            self.bar.set_postfix_str(f"loss={loss:.4g}", refresh=False)
        elif message.detail:
            self.bar.set_postfix_str(message.detail, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run_one(job: CliJob, progress: bool = True, write_files: bool = True) -> dict:
    """Run one job; returns its report (also written to ``job.report``). Raises AkdError.

    ``write_files`` False: nothing is written (``--out``, ``--preview``, ``--export``, ``--report`` are
    left alone; the ranks of a ``torchrun`` job other than rank 0 run so)."""
    import bpy

    from ... import __version__
    from ...core.job import worker as wk
    from ..character.io import find_armature, load_scene, scene_fps
    from ..job.rig import bind_job

    t0 = time.perf_counter()
    check_usage(job)
    load_scene(job.input)
    arm = find_armature(job.armature)
    rig, bound = bind_job(arm, job.ground_height)
    scene = bpy.context.scene
    fps = float(scene_fps(scene) if job.fps is None else job.fps)
    from ..job.apply import apply_clips, apply_result  # torch: once the input is usable

    bar = _Bar(progress, desc=f"akd {arm.name}")
    outputs_on = (("save", job.out), ("preview", job.preview), ("export", job.export))
    todo = ["actions", "keys"] + [label for label, wanted in outputs_on if wanted]

    def wrote(label: str) -> None:
        bar(wk.Progress(todo.index(label) + 1, len(todo), {}, None, "write", label))

    try:
        applying = {"keys": job.keys, "set_scene_range": job.set_scene_range, "scene": scene, "on_step": wrote, "bound": bound}
        if job.ground_action is not None:
            clip, physics, timings = _ground_existing(arm, rig, job.ground_action, fps, bar)
            applied = apply_clips(arm, rig, [(clip, f"{job.ground_action} grounded")], **applying)
            part = {"device": "cpu", "frames": clip.num_frames, "steps": 0, "final_losses": {}, "loss_history": []}
            part |= {"config": {}, "distill": {}, "physics": physics, "timings": timings}
        else:
            request = armature_request(job, arm, rig)
            message = wk.run_job(request, bar)
            if isinstance(message, wk.Failed):
                if message.details:
                    print(message.details, file=sys.stderr)
                raise message.error or AkdError(message.message)
            if isinstance(message, wk.Stopped):
                raise Cancelled("cancelled")
            result = message.result
            clip = result.clip
            applied = apply_result(arm, rig, result, name=request.prompt, physics=request.physics, **applying)
            part = result.report()
        timings = part["timings"]

        outputs = {}
        if job.out and write_files:
            t = time.perf_counter()
            bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(job.out), copy=True)
            outputs["out"], timings["save"] = os.path.abspath(job.out), time.perf_counter() - t
            wrote("save")
        if job.preview and write_files:
            t = time.perf_counter()
            write_preview(rig, clip, job.preview, job.preview_size, camera=job.camera)
            outputs["preview"], timings["preview"] = os.path.abspath(job.preview), time.perf_counter() - t
            wrote("preview")
        if job.export and write_files:
            t = time.perf_counter()
            export(arm, clip, job.export)
            outputs["export"], timings["export"] = os.path.abspath(job.export), time.perf_counter() - t
            wrote("export")
    finally:
        bar.close()
    if job.report and write_files:
        outputs["report"] = os.path.abspath(job.report)

    report = {
        "status": "done",
        "package_version": __version__,
        "blender_version": bpy.app.version_string,
        "input": os.path.abspath(job.input),
        "armature": arm.name,
        "prompt": None if job.ground_action is not None else job.prompt.strip(),
        "negative_prompt": job.negative_prompt,
        "model": None if job.ground_action is not None else job.model,
        "device": part["device"],
        "frames": part["frames"],
        "frame_start": clip.frame_start,
        "frame_end": clip.frame_end,
        "fps": fps,
        "steps": part["steps"],
        "seed": job.seed,
        "seconds": time.perf_counter() - t0,
        "timings": timings,
        "action_names": applied.action_names,
        "previous_action": applied.previous_action,
        "final_losses": part["final_losses"],
        "loss_history": part["loss_history"],
        "motion_metrics": applied.motion_metrics,
        "physics": part["physics"],
        "config": part["config"],
        "distill": part["distill"],
        "outputs": outputs,
        "keys": applied.keys,
        "warnings": applied.warnings,
        "scene_changes": applied.scene_changes,
    }
    if job.report and write_files:
        with open(job.report, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
    return report


def _ground_existing(arm, rig, name: str, fps: float, bar=None):
    """(grounded clip, physics metrics, timings) for the armature's existing action ``name``;
    ``bar`` (a :class:`_Bar`) is moved by each simulated frame."""
    import bpy

    from ...core.motion.physics import ground_clip
    from ...core.progress import Callbacks
    from ..keys.keyframes import read_clip

    action = bpy.data.actions.get(name)
    if action is None:
        known = ", ".join(sorted(a.name for a in bpy.data.actions)) or "none"
        raise InputError(f"--ground-action: no action named '{name}' (actions in the file: {known})")
    start, end = (int(round(v)) for v in action.frame_range)
    t = time.perf_counter()
    clip = read_clip(arm, start, max(end, start + 1), action=action, fps=fps, rig=rig)
    result = ground_clip(rig, clip, callbacks=Callbacks(progress=bar))
    from ...core.job.request import plain_data

    physics = {"before": plain_data(result.metrics_before), "after": plain_data(result.metrics_after)}
    return result.clip, physics, {"physics": time.perf_counter() - t}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class JobOutcome:
    """How one job of a run ended: ``code`` (the exit code, 0 done), ``text`` (the summary's line:
    "done" or the error), ``report`` (the job's report when done), ``details`` (an internal error's
    traceback)."""

    code: int
    text: str
    report: dict | None = None
    details: str = ""


def run_cli_job(job: CliJob, progress: bool = True, write_files: bool = True) -> JobOutcome:
    """:func:`run_one` with its errors as a :class:`JobOutcome` (KeyboardInterrupt passes through)."""
    try:
        return JobOutcome(0, "done", run_one(job, progress=progress, write_files=write_files))
    except AkdError as exc:
        return JobOutcome(exc.exit_code, " ".join(str(exc).split()) or type(exc).__name__)
    except Exception as exc:  # an internal error: keep going with the next job
        import traceback

        return JobOutcome(1, f"internal error: {' '.join(str(exc).split()) or type(exc).__name__}", None, traceback.format_exc())


def _ray_job(job: CliJob) -> JobOutcome:
    """One job in a Ray worker process (its own bpy): the serial path, without a progress bar."""
    return run_cli_job(job, progress=False)


def _lost_job(line: str) -> JobOutcome:
    return JobOutcome(1, f"internal error: {line}")


def _announce(label: str, outcome: JobOutcome, quiet: bool) -> None:
    """Print what a finished job says: understood line, warnings, done (stdout / stderr), or its error."""
    if outcome.code:
        if outcome.details:
            print(outcome.details, file=sys.stderr, end="" if outcome.details.endswith("\n") else "\n")
        _say(f"akd: {label}error: {outcome.text}")
        return
    report = outcome.report
    understood = understood_line(report["distill"])
    if understood and not quiet:
        print(f"akd: {label}{understood}", flush=True)
    if not quiet:
        for warning in report["warnings"]:
            _say(f"akd: {label}warning: {warning}")
    print(f"akd: {label}done: {', '.join(report['action_names'])} ({report['seconds']:.1f} s)", flush=True)


def _ray_resources(ns: argparse.Namespace, jobs: list[CliJob], ray):
    from ...core.job.ray_jobs import TaskResources

    gpus = ns.ray_gpus
    if gpus is None:
        gpus = 1.0 if ray.cluster_resources().get("GPU", 0) > 0 and any(job.device != "cpu" for job in jobs) else 0.0
    return TaskResources(num_cpus=ns.ray_cpus, num_gpus=gpus, threads=ns.ray_threads, retries=ns.ray_retries)


def _run_ray(ns: argparse.Namespace, jobs: list[CliJob], label) -> list[JobOutcome]:
    """Every job as a Ray task (:func:`~akd_blender.core.job.ray_jobs.run_tasks`), each announced as it finishes."""
    if os.path.basename(sys.argv[0] if sys.argv else "").lower().startswith("blender"):
        raise InputError("--ray runs from Python with the bpy module (python run_akd.py …), not inside the Blender executable")
    from ...core.job.ray_jobs import ray_session, run_tasks

    with ray_session(None if ns.ray == "local" else ns.ray) as ray:
        resources = _ray_resources(ns, jobs, ray)

        def done(index: int, outcome: JobOutcome) -> None:
            _announce(label(index + 1), outcome, ns.quiet)

        return run_tasks(_ray_job, jobs, resources, lost=_lost_job, on_done=done, progress=not ns.quiet)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        jobs, ns = parse_jobs(argv)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except AkdError as exc:
        _say(f"akd: error: {exc}")
        return exc.exit_code

    def label(n: int) -> str:
        return f"job {n}/{len(jobs)}: " if ns.jobs else ""

    rank = 0
    outcomes: list[JobOutcome] = []
    try:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # torchrun: every rank runs each job, rank 0 writes
            if ns.ray is not None:
                raise InputError("--ray and torchrun: run one job on several GPUs (torchrun) or many jobs through Ray, not both")
            from ...core.distillation.parallel import init_from_env

            rank, _ = init_from_env(jobs[0].device)
        if ns.ray is not None:
            outcomes = _run_ray(ns, jobs, label)
        else:
            for n, job in enumerate(jobs, 1):
                outcome = run_cli_job(job, progress=not ns.quiet and rank == 0, write_files=rank == 0)
                if rank == 0:
                    _announce(label(n), outcome, ns.quiet)
                outcomes.append(outcome)
    except AkdError as exc:
        _say(f"akd: error: {' '.join(str(exc).split())}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("akd: cancelled")
        return Cancelled.exit_code
    finally:
        from ...core.job.model_cache import free_gpu_memory

        free_gpu_memory()
    if ns.jobs and rank == 0:
        failed = [o for o in outcomes if o.code]
        print(f"akd: summary: {len(outcomes) - len(failed)} of {len(outcomes)} jobs done, {len(failed)} failed", flush=True)
        for n, (job, outcome) in enumerate(zip(jobs, outcomes), 1):
            print(
                f"akd:   job {n} [{'ok' if not outcome.code else f'exit {outcome.code}'}] {job.input}: {outcome.text}", flush=True
            )
    failed = [o for o in outcomes if o.code]
    return failed[0].code if failed else 0
