"""One command-line job (:class:`CliJob`, a flag left out is None), its checks before any file is read (:func:`check_settings`, :func:`check_usage`) and the one mapping to the core's :class:`~akd_blender.core.job.request.JobRequest` (:func:`job_request`; the panel builds a CliJob and uses it too)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass, field, replace

from ...core.errors import InputError
from ...core.settings import KEY_MODES, KEYS_DEFAULT, DistillConfig, SettingError, parse_redraw, setting_name, with_tunables

__all__ = [
    "CliJob",
    "EXPORT_FORMATS",
    "armature_request",
    "check_settings",
    "check_usage",
    "distill_config",
    "job_dict",
    "job_request",
    "on_floor",
]


EXPORT_FORMATS = (".fbx", ".bvh", ".glb", ".gltf")


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
    tunables: dict = field(default_factory=dict)  # core.settings.TUNABLES given: {name: value}


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
    to a job, used by the command line (:func:`~.cli.distill.run_one`) and the panel (``panel_run.snapshot``, whose
    properties become a CliJob through ``properties.panel_job``).

    Args:
        job: the settings (``job.fps`` None: ``scene_fps``, the scene's frames per second).
        rig: the :class:`~akd_blender.core.character.rig.RigAsset`; init_pose: the MotionClip whose first frame
            the motion starts from (the armature's current pose), or None for the rest pose.
        frame_start: the Blender frame the clip starts at. preview_every: see :func:`distill_config`.
    Raises SettingError for a bad tunable or redraw (:meth:`JobRequest.validate` checks the rest)."""
    from ...core.job.request import JobRequest

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
    """The job :func:`~.cli.distill.run_one` runs on armature ``arm`` of the open scene (``rig``: its RigAsset):
    :func:`job_request` with the pose the file shows as the start, the clip from the scene's first
    frame, at the scene's fps unless ``--fps``."""
    import bpy

    from ..character.deform_skeleton import start_pose
    from ..character.io import scene_fps

    scene = bpy.context.scene
    return job_request(job, rig, start_pose(arm, rig), int(scene.frame_start), scene_fps(scene))


def job_dict(job: CliJob) -> dict:
    """A job as the JSON object ``--jobs`` accepts."""
    return {k: v for k, v in asdict(job).items() if v is not None}
