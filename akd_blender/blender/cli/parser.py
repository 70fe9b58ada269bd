r"""The command line's flags (:func:`build_parser`) and ``--jobs FILE`` read into :class:`~.job.settings.CliJob`\ s (:func:`parse_jobs`), every number checked before any file is opened."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import fields

from ...core.errors import InputError
from ...core.settings import CAMERA_MODES, DEVICES, KEY_MODES, KEYS_DEFAULT, MODEL_CHOICES, START_MODES, TUNABLES, DistillConfig
from ..job.settings import CliJob, check_settings

__all__ = ["build_parser", "parse_jobs"]


class _Parser(argparse.ArgumentParser):
    """argparse that raises InputError (one line) instead of printing usage and exiting."""

    def error(self, message: str):
        raise InputError(message)


def build_parser(prog: str = "run_akd.py") -> argparse.ArgumentParser:
    """The DESIGN §4 flags, plus ``--jobs``, render size, camera, loop and ``--quiet``."""
    p = _Parser(prog=prog, description="Distil a text prompt into an animation of a rigged character (AKD).")
    p.add_argument("--input", help=".blend, .gltf/.glb or .fbx")
    p.add_argument(
        "--armature",
        help="armature object name (default: the only armature in the file that moves a mesh; for a game rig over "
        "a control rig, either names the pair: the game rig is read, the control rig keyed)",
    )
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
    numbers (:func:`~.job.settings.check_settings`) before any file is opened. A jobs file's values go through the same
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
    from ...core.job.ray_jobs import TaskResources

    gpus = 0.0 if ns.ray_gpus is None else ns.ray_gpus
    TaskResources(num_cpus=ns.ray_cpus, num_gpus=gpus, threads=ns.ray_threads, retries=ns.ray_retries).validate()
