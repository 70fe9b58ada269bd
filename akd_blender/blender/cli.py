"""The command line (DESIGN §4): argument parsing and the job runner.

Shared by ``run_akd.py`` (``python run_akd.py …`` with the bpy module, ``blender -b -P run_akd.py -- …``)
and ``blender --command akd …`` (registered by the extension). One job:

1. check the usage (prompt, frame count, output paths writable) before touching anything;
2. open ``--input`` with Blender's own reader/importer, pick the armature, snapshot the rig;
3. build a :class:`~akd_blender.core.job.request.JobRequest` and run it on this thread (the same
   :func:`akd_blender.core.job.worker.run_job` the panel runs on its worker thread), with a tqdm
   progress bar (step, ETA, loss) on stderr;
4. write the new action(s) through :mod:`.apply`, the panel's apply step too (``--keys sparse``, the default: the fewest keys within an error bound;
   ``dense``: every frame; the armature's previous action is kept; the scene's frame range is left
   alone unless ``--set-scene-range``), then ``--out`` (a copy of the
   scene; the input file is never written), ``--preview`` (MP4 rendered by the project renderer),
   ``--export`` (Blender's FBX / BVH / glTF exporters) and ``--report`` (JSON, fields in
   :data:`REPORT_FIELDS`).

``--jobs FILE`` runs a JSON list of jobs (objects whose keys are the flag names, e.g.
``{"input": "a.glb", "prompt": "…", "out": "a.blend"}``; flags given on the command line are the
defaults; each value is read by the flag's own parser); a failing job is reported and the others
still run; a summary ends the run. Every number, of the flags and of each job of the file, is checked
before any file is opened (:func:`check_settings`): a value out of its range (zero where it means
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
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace

from ..core.errors import AkdError, Cancelled, InputError
from ..core.prompt.understanding import understood_line
from ..core.settings import (
    CAMERA_MODES,
    DEVICES,
    KEY_MODES,
    KEYS_DEFAULT,
    MODEL_CHOICES,
    START_MODES,
    TUNABLES,
    DistillConfig,
    SettingError,
    parse_redraw,
    setting_name,
    with_tunables,
)

__all__ = [
    "CliJob",
    "JobOutcome",
    "REPORT_FIELDS",
    "EXPORT_FORMATS",
    "build_parser",
    "parse_jobs",
    "check_settings",
    "check_usage",
    "distill_config",
    "job_request",
    "armature_request",
    "run_one",
    "run_cli_job",
    "main",
]

EXPORT_FORMATS = (".fbx", ".bvh", ".glb", ".gltf")

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


@dataclass
class CliJob:
    """One job's options (the CLI flags; None means "the default"). The distillation settings among
    them become a :class:`DistillConfig` (:func:`distill_config`); the rest say what to read and write."""

    input: str | None = None
    armature: str | None = None
    prompt: str | None = None
    negative_prompt: str = ""
    model: str = "tiny"
    frames: int | None = None
    fps: float | None = None
    steps: int | None = None
    seed: int = 0
    device: str = "auto"
    height: int | None = None
    width: int | None = None
    camera: str | None = None
    start: str | None = None
    redraw: str = "auto"
    draws: int | None = None
    loop: bool = False
    physics: bool = False
    ground_action: str | None = None
    ground_height: float | None = None
    out: str | None = None
    preview: str | None = None
    preview_size: int = 256
    report: str | None = None
    export: str | None = None
    keys: str = KEYS_DEFAULT
    set_scene_range: bool = False
    allow_nearest: bool = False
    tunables: dict = field(default_factory=dict)  # core.config.TUNABLES given: {name: value}


class _Parser(argparse.ArgumentParser):
    """argparse that raises InputError (one line) instead of printing usage and exiting."""

    def error(self, message: str):
        raise InputError(message)


def build_parser(prog: str = "run_akd.py") -> argparse.ArgumentParser:
    """The DESIGN §4 flags, plus ``--jobs``, render size, camera, loop and ``--quiet``."""
    p = _Parser(prog=prog, description="Distil a text prompt into an animation of a rigged character (AKD).")
    p.add_argument("--input", help=".blend, .gltf/.glb or .fbx")
    p.add_argument("--armature", help="armature object name (default: the only armature in the file)")
    p.add_argument("--prompt", help="what the character should do")
    p.add_argument("--negative-prompt", default="", help="what the video should not look like")
    p.add_argument(
        "--model",
        default="tiny",
        help='"tiny" (embedded teacher that animates your character), "tiny-text", a diffusers folder, a hub id, or one of '
        + ", ".join(f"{m.alias} ({m.task})" for m in MODEL_CHOICES),
    )
    p.add_argument("--frames", type=int, help="number of frames (≥ 2)")
    p.add_argument("--fps", type=float, help="frames per second (default: the scene's)")
    p.add_argument(
        "--steps",
        type=int,
        help="optimisation steps (default: 0 after a drawn video or redraw rounds, 200 from the pose without them)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=DEVICES)
    p.add_argument("--height", type=int, help="render height the model sees (pixels)")
    p.add_argument("--width", type=int, help="render width the model sees (pixels)")
    p.add_argument("--camera", choices=CAMERA_MODES, help="distillation camera (default: follow)")
    p.add_argument(
        "--start",
        choices=START_MODES,
        help="auto (default): library when the prompt is understood as a library motion of the character's kind, else sample when the "
        "model can draw, else pose; library: the motion library's clip on the character's bone roles (the embedded teacher: that clip "
        "alone; a video model: then --steps SDS steps, default 200); pose: from the "
        "current pose (redraw rounds, then --steps SDS steps); sample: the model draws a video, the pose search fits it, --steps SDS steps refine (default 0)",
    )
    p.add_argument(
        "--redraw",
        default="auto",
        metavar="LEVELS",
        help="redraw rounds: the model redraws the motion as it stands from each noise level (0-1] and the pose search "
        "fits it; auto (default): 0.9,0.7,0.5 from the pose, none after a drawn video; none; or levels like 0.5",
    )
    p.add_argument(
        "--draws",
        type=int,
        help="SDS draws per step (default: one per process; under torchrun the processes share them out)",
    )
    p.add_argument("--loop", action="store_true", help="make the motion cyclic")
    p.add_argument("--physics", action="store_true", help="ground the distilled motion with MuJoCo")
    p.add_argument("--ground-action", metavar="NAME", help="no distillation: ground this existing action with MuJoCo")
    p.add_argument(
        "--ground-height",
        type=float,
        metavar="Z",
        help="world Z of the floor (scene units); default: z = 0 where the rest pose stands within 2%% of its height of it, "
        "else the rest pose's lowest point",
    )
    p.add_argument("--out", metavar="OUT.blend", help="the input scene plus the new action(s)")
    p.add_argument("--preview", metavar="OUT.mp4", help="an MP4 of the result rendered by the project renderer")
    p.add_argument("--preview-size", type=int, default=256, help="preview width and height in pixels (even)")
    p.add_argument("--report", metavar="OUT.json", help="a JSON report of the job")
    p.add_argument("--export", metavar="OUT.fbx|.bvh|.glb", help="export the character and new action")
    p.add_argument(
        "--keys",
        default=KEYS_DEFAULT,
        choices=KEY_MODES,
        help="sparse (default): the fewest keys within 0.5° and 0.2%% of the height of the motion; dense: a key on every frame",
    )
    p.add_argument(
        "--set-scene-range",
        action="store_true",
        help="set the scene's frame range to the motion's (default: the scene's range is left as it is)",
    )
    p.add_argument(
        "--allow-nearest",
        action="store_true",
        default=DistillConfig.allow_nearest,
        help="go ahead with the nearest known motion when the model matches none well enough "
        "(default: such a prompt stops with exit 2, naming the nearest motions)",
    )
    for t in TUNABLES:
        p.add_argument(
            f"--{t.name.replace('_', '-')}", type=t.kind, metavar="N", help=f"{t.description} (default {t.default():g})"
        )
    p.add_argument("--jobs", metavar="FILE", help="a JSON list of jobs (keys = flag names)")
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run the jobs at once through Ray (pip install -r requirements-ray.txt): a local Ray by default, "
        "the cluster at ADDRESS when given (e.g. auto or ray://head:10001)",
    )
    p.add_argument("--ray-cpus", type=float, default=1.0, help="CPUs each job asks Ray for (default 1)")
    p.add_argument(
        "--ray-gpus",
        type=float,
        help="GPUs each job asks Ray for, e.g. 0.125 for 8 jobs per GPU (default: 1 when Ray has GPUs and the "
        "jobs' --device is not cpu, else 0)",
    )
    p.add_argument(
        "--ray-threads",
        type=int,
        help="torch threads per job (default: this machine's torch default, as in the serial run, so CPU results "
        "are the serial run's)",
    )
    p.add_argument("--ray-retries", type=int, default=2, help="runs again a job whose Ray worker died (default 2)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


_JOB_KEYS = {f.name for f in fields(CliJob)} - {"tunables"}
_TUNABLE_NAMES = {t.name for t in TUNABLES}


def parse_jobs(argv: Sequence[str]) -> tuple[list[CliJob], argparse.Namespace]:
    """Parse the command line into jobs (one, or the ``--jobs`` file's list) and check every job's
    numbers (:func:`check_settings`) before any file is opened. A jobs file's values go through the same
    parser as the flags (``{"frames": 6}`` is ``--frames=6``; ``true`` / ``false`` for the switches;
    ``null`` keeps the command line's value). Raises InputError naming the flag (and the job)."""
    parser = build_parser()
    ns = parser.parse_args(list(argv))
    _check_numbers(parser, ns)
    _check_ray(parser, ns)
    if not ns.jobs:
        job = _job_of(ns)
        check_settings(job)
        return [job], ns
    try:
        with open(ns.jobs, encoding="utf-8") as fh:
            items = json.load(fh)
    except OSError as exc:
        raise InputError(f"--jobs: cannot read '{ns.jobs}': {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"--jobs: '{ns.jobs}' is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items) or not items:
        raise InputError(f"--jobs: '{ns.jobs}' must hold a non-empty JSON list of objects")
    actions = {a.dest: a for a in parser._actions}
    jobs = []
    for n, item in enumerate(items, 1):
        values = {str(k).replace("-", "_"): v for k, v in item.items()}
        unknown = sorted(set(values) - _JOB_KEYS - _TUNABLE_NAMES)
        if unknown or "tunables" in values:
            raise InputError(f"--jobs: job {n} has unknown key '{(unknown or ['tunables'])[0]}'")
        job_ns, tokens = argparse.Namespace(**vars(ns)), []
        for key, value in values.items():
            flag = actions[key].option_strings[0]
            if value is None:
                continue
            if isinstance(actions[key], argparse._StoreTrueAction):
                if not isinstance(value, bool):
                    raise InputError(f"--jobs: job {n}: {flag} must be true or false (got {json.dumps(value)})")
                setattr(job_ns, key, value)
            else:
                tokens.append(f"{flag}={value}")
        try:
            parser.parse_args(tokens, namespace=job_ns)
            _check_numbers(parser, job_ns)
            job = _job_of(job_ns)
            check_settings(job)
        except InputError as exc:
            raise InputError(f"--jobs: job {n}: {exc}") from None
        jobs.append(job)
    return jobs, ns


def _job_of(ns: argparse.Namespace) -> CliJob:
    """The CliJob of a parsed namespace (its tunables: those given)."""
    given = {t.name: getattr(ns, t.name) for t in TUNABLES if getattr(ns, t.name) is not None}
    return CliJob(**{k: v for k, v in vars(ns).items() if k in _JOB_KEYS}, tunables=given)


def _check_numbers(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> None:
    """InputError naming the first ``type=float`` flag holding NaN or an infinity (argparse's float
    reads "nan" and "inf"; ``type=int`` refuses them itself)."""
    for action in parser._actions:
        value = getattr(ns, action.dest, None)
        if action.type is float and value is not None and not math.isfinite(value):
            raise InputError(f"{action.option_strings[0]} must be a finite number (got {value})")


def _check_ray(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> None:
    """The ``--ray-*`` numbers (:meth:`~akd_blender.core.job.ray_jobs.TaskResources.validate`), checked
    whether or not ``--ray`` is given (the parser's defaults are valid: left alone, torch, which
    ``core.ray_jobs`` imports, is not imported here)."""
    names = ("ray_cpus", "ray_gpus", "ray_threads", "ray_retries")
    if ns.ray is None and all(getattr(ns, n) == parser.get_default(n) for n in names):
        return
    from ..core.job.ray_jobs import TaskResources

    gpus = 0.0 if ns.ray_gpus is None else ns.ray_gpus
    TaskResources(num_cpus=ns.ray_cpus, num_gpus=gpus, threads=ns.ray_threads, retries=ns.ray_retries).validate()


def check_settings(job: CliJob) -> None:
    """Every number and choice of ``job`` that needs no file: the distillation settings
    (:meth:`DistillConfig.validate` and the :data:`TUNABLES` ranges, ``--fps`` at 24 when not given),
    ``--keys`` and ``--preview-size``. Raises InputError naming the flag."""
    try:
        distill_config(job, frame_start=1, fps=24.0 if job.fps is None else job.fps).validate()
    except SettingError as exc:
        raise InputError(f"--{setting_name(exc.field).replace('_', '-')} {exc.reason}") from None
    if job.keys not in KEY_MODES:
        raise InputError(f"--keys must be one of {', '.join(KEY_MODES)} (got '{job.keys}')")
    if not (job.preview_size >= 16 and job.preview_size % 2 == 0):
        raise InputError(f"--preview-size must be an even number ≥ 16 (got {job.preview_size})")


def on_floor(rig, ground_height: float | None):
    """``rig`` standing on the floor at world Z ``ground_height`` (scene units; None: the mirror's own,
    the rest pose's floor)."""
    return rig if ground_height is None else replace(rig, ground_height=float(ground_height))


def check_usage(job: CliJob) -> None:
    """Everything that can be checked before opening the input (:func:`check_settings`, the prompt,
    the output paths). Raises InputError naming it."""
    if not job.input:
        raise InputError("--input is required")
    if job.ground_action is None and not (job.prompt or "").strip():
        raise InputError("--prompt is empty: describe the motion, e.g. --prompt 'a fox trots forward'")
    check_settings(job)
    outputs = {"--out": (job.out, (".blend",)), "--preview": (job.preview, (".mp4",)), "--report": (job.report, (".json",))}
    outputs["--export"] = (job.export, EXPORT_FORMATS)
    if not any(path for path, _ in outputs.values()):
        raise InputError("nothing to write: give --out, --preview, --report or --export")
    for flag, (path, exts) in outputs.items():
        if path:
            _check_output(flag, path, exts)
    if job.out and os.path.abspath(job.out) == os.path.abspath(job.input):
        raise InputError("--out is the input file; write the result to a new file")


def _check_output(flag: str, path: str, exts: tuple[str, ...]) -> None:
    if os.path.splitext(path)[1].lower() not in exts:
        raise InputError(f"{flag} '{path}' must end in {' or '.join(exts)}")
    if os.path.isdir(path):
        raise InputError(f"{flag} '{path}' is a folder")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{flag}: output folder '{folder}' does not exist")
    try:  # a real write probe: os.access is always True for root and blind to read-only mounts
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        raise InputError(f"{flag}: output folder '{folder}' is not writable") from None


def distill_config(job: CliJob, frame_start: int, fps: float, preview_every: int = 0) -> DistillConfig:
    """The DistillConfig of ``job``'s settings (those left out, None, keep the config's defaults) for a
    clip placed at Blender frame ``frame_start`` at ``fps`` frames per second; ``preview_every``: steps
    between preview callbacks (0: none, the command line's). Raises SettingError for a bad tunable or
    redraw; the rest is checked by :meth:`DistillConfig.validate`."""
    given = {
        "frames": job.frames,
        "steps": job.steps,
        "height": job.height,
        "width": job.width,
        "camera": job.camera,
        "start": job.start,
        "draws": job.draws,
    }
    values = {k: v for k, v in given.items() if v is not None}
    config = DistillConfig(
        frame_start=frame_start,
        fps=fps,
        seed=job.seed,
        device=job.device,
        negative_prompt=job.negative_prompt,
        loop=job.loop,
        allow_nearest=bool(job.allow_nearest),
        preview_every=preview_every,
        **values,
    )
    noise = parse_redraw(str(job.redraw))
    if noise is not None:
        config = replace(config, redraw=replace(config.redraw, noise=noise))
    return with_tunables(config, job.tunables)


def job_request(job: CliJob, rig, init_pose, frame_start: int, scene_fps: float, preview_every: int = 0):
    """The :class:`~akd_blender.core.job.request.JobRequest` of ``job``'s settings: the one mapping from settings
    to a job, used by the command line (:func:`run_one`) and the panel (``operators.snapshot``, whose
    properties become a CliJob through ``properties.panel_job``).

    Args:
        job: the settings (``job.fps`` None: ``scene_fps``, the scene's frames per second).
        rig: the :class:`~akd_blender.core.character.rig.RigAsset`; init_pose: the MotionClip whose first frame
            the motion starts from (the armature's current pose), or None for the rest pose.
        frame_start: the Blender frame the clip starts at. preview_every: see :func:`distill_config`.
    Raises SettingError for a bad tunable or redraw (:meth:`JobRequest.validate` checks the rest)."""
    from ..core.job.request import JobRequest

    fps = float(scene_fps if job.fps is None else job.fps)
    return JobRequest(
        rig=rig,
        prompt=(job.prompt or "").strip(),
        config=distill_config(job, int(frame_start), fps, preview_every),
        model=job.model,
        init_pose=init_pose,
        physics=bool(job.physics),
    )


def armature_request(job: CliJob, arm, rig):
    """The job :func:`run_one` runs on armature ``arm`` of the open scene (``rig``: its RigAsset):
    :func:`job_request` with the pose the file shows as the start, the clip from the scene's first
    frame, at the scene's fps unless ``--fps``."""
    import bpy

    from .deform_skeleton import start_pose

    scene = bpy.context.scene
    return job_request(job, rig, start_pose(arm, rig), int(scene.frame_start), scene.render.fps / scene.render.fps_base)


_PHASE_UNITS = {"load": "model", "draw": "step", "search": "clip", "steps": "step", "physics": "frame"}


class _Bar:
    """A tqdm bar on stderr per phase of the job (load, draw, search, steps, physics: see
    :class:`~akd_blender.core.job.worker.Progress`), each with its count, ETA and detail (the search's
    sweep and bone, the loss of an optimiser step); a new phase closes the previous bar."""

    def __init__(self, enabled: bool, desc: str) -> None:
        self.enabled, self.desc, self.bar, self.phase = enabled, desc, None, None

    def __call__(self, message) -> None:
        """Show a :class:`~akd_blender.core.job.worker.Progress` or a ``core.distill.DistillProgress``;
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

    from .. import __version__
    from ..core.job import worker as wk
    from .extract import rig_from_armature
    from .io import find_armature, load_scene

    t0 = time.perf_counter()
    check_usage(job)
    load_scene(job.input)
    arm = find_armature(job.armature)
    rig = on_floor(rig_from_armature(arm), job.ground_height)
    scene = bpy.context.scene
    scene_fps = scene.render.fps / scene.render.fps_base
    fps = float(scene_fps if job.fps is None else job.fps)
    from .apply import apply_clips, apply_result  # torch: once the input is usable

    bar = _Bar(progress, desc=f"akd {arm.name}")
    outputs_on = (("save", job.out), ("preview", job.preview), ("export", job.export))
    todo = ["actions", "keys"] + [label for label, wanted in outputs_on if wanted]

    def wrote(label: str) -> None:
        bar(wk.Progress(todo.index(label) + 1, len(todo), {}, None, "write", label))

    try:
        applying = {"keys": job.keys, "set_scene_range": job.set_scene_range, "scene": scene, "on_step": wrote}
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
                raise _error_for(message)
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


def _error_for(message) -> AkdError:
    from ..core.errors import ModelNotAvailable

    cls = {2: InputError, 3: ModelNotAvailable, 4: Cancelled}.get(message.exit_code, AkdError)
    return cls(message.message)


def _ground_existing(arm, rig, name: str, fps: float, bar=None):
    """(grounded clip, physics metrics, timings) for the armature's existing action ``name``;
    ``bar`` (a :class:`_Bar`) is moved by each simulated frame."""
    import bpy

    from ..core.job.request import PhysicsCallbacks
    from ..core.motion.physics import ground_clip
    from .keyframes import read_clip

    action = bpy.data.actions.get(name)
    if action is None:
        known = ", ".join(sorted(a.name for a in bpy.data.actions)) or "none"
        raise InputError(f"--ground-action: no action named '{name}' (actions in the file: {known})")
    start, end = (int(round(v)) for v in action.frame_range)
    t = time.perf_counter()
    clip = read_clip(arm, start, max(end, start + 1), action=action, fps=fps, rig=rig)
    result = ground_clip(rig, clip, callbacks=PhysicsCallbacks(lambda: False, bar) if bar is not None else None)
    from ..core.job.request import plain_data

    physics = {"before": plain_data(result.metrics_before), "after": plain_data(result.metrics_after)}
    return result.clip, physics, {"physics": time.perf_counter() - t}


def write_preview(rig, clip, path: str, size: int = 256, camera: str | None = None) -> None:
    """Render ``clip`` with the project renderer (``core.render.render_clip``) to an H.264 MP4.

    The renderer's RGB (the character composited on the checkerboard ground; alpha is only the
    character's mask) is written at the clip's fps; ``contain=True`` keeps every vertex of every
    frame in the image.
    """
    import imageio_ffmpeg
    import numpy as np

    from ..core.render import render_clip
    from .compat import ffmpeg_executable

    ffmpeg_executable()  # an extension install leaves the bundled ffmpeg without its execute bit

    kwargs = {"camera": camera} if camera else {}
    video = render_clip(rig, clip, size, size, contain=True, **kwargs).detach().float().cpu().numpy()  # [F,4,H,W]
    frames = video[:, :3].clip(0, 1).transpose(0, 2, 3, 1)  # [F,H,W,3]
    frames = (frames * 255 + 0.5).astype(np.uint8)
    writer = imageio_ffmpeg.write_frames(
        path, (size, size), fps=float(clip.fps), codec="libx264", pix_fmt_out="yuv420p", macro_block_size=2, quality=8
    )
    writer.send(None)
    for frame in frames:
        writer.send(np.ascontiguousarray(frame))
    writer.close()


def export(arm, clip, path: str) -> None:
    """Export the armature, its skinned meshes and the active action with Blender's own exporters
    (``.fbx``, ``.bvh``, ``.glb``/``.gltf``) over the clip's frame range."""
    import bpy

    from .io import skinned_meshes

    objs = [arm, *skinned_meshes(arm)]
    view_layer = bpy.context.view_layer
    for obj in view_layer.objects:
        obj.select_set(obj in objs)
    view_layer.objects.active = arm
    ext = os.path.splitext(path)[1].lower()
    path = os.path.abspath(path)
    scene = bpy.context.scene
    scene_range = scene.frame_start, scene.frame_end
    with bpy.context.temp_override(active_object=arm, object=arm, selected_objects=objs):
        if ext == ".fbx":  # the FBX exporter bakes over the scene's range: the clip's, for the export only
            scene.frame_start, scene.frame_end = clip.frame_start, max(clip.frame_end, clip.frame_start + 1)
            try:
                result = _export_fbx(path)
            finally:
                scene.frame_start, scene.frame_end = scene_range
        elif ext == ".bvh":
            result = bpy.ops.export_anim.bvh(filepath=path, frame_start=clip.frame_start, frame_end=clip.frame_end)
        else:
            fmt = "GLB" if ext == ".glb" else "GLTF_SEPARATE"
            result = bpy.ops.export_scene.gltf(filepath=path, export_format=fmt, use_selection=True, export_animations=True)
    if "FINISHED" not in result or not os.path.isfile(path):
        raise AkdError(f"--export: Blender's exporter did not write '{path}'")


def _export_fbx(path: str) -> set[str]:
    import bpy

    return bpy.ops.export_scene.fbx(
        filepath=path,
        use_selection=True,
        object_types={"ARMATURE", "MESH"},
        bake_anim=True,
        bake_anim_use_all_actions=False,
        bake_anim_use_nla_strips=False,
        add_leaf_bones=False,
    )


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
    from ..core.job.ray_jobs import TaskResources

    gpus = ns.ray_gpus
    if gpus is None:
        gpus = 1.0 if ray.cluster_resources().get("GPU", 0) > 0 and any(job.device != "cpu" for job in jobs) else 0.0
    return TaskResources(num_cpus=ns.ray_cpus, num_gpus=gpus, threads=ns.ray_threads, retries=ns.ray_retries)


def _run_ray(ns: argparse.Namespace, jobs: list[CliJob], label) -> list[JobOutcome]:
    """Every job as a Ray task (:func:`~akd_blender.core.job.ray_jobs.run_tasks`), each announced as it finishes."""
    if os.path.basename(sys.argv[0] if sys.argv else "").lower().startswith("blender"):
        raise InputError("--ray runs from Python with the bpy module (python run_akd.py …), not inside the Blender executable")
    from ..core.job.ray_jobs import ray_session, run_tasks

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
            from ..core.distillation.parallel import init_from_env

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
        from ..core.job.model_cache import free_gpu_memory

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


def job_dict(job: CliJob) -> dict:
    """A job as the JSON object ``--jobs`` accepts."""
    return {k: v for k, v in asdict(job).items() if v is not None}
