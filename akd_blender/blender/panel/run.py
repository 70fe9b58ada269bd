"""The panel's job from the main thread's side: the settings and the armature copied into a request (:func:`snapshot`), the pose remembered (:class:`PanelRun`), and the worker's messages applied to the panel, the pose and the scene (:func:`handle_messages`: progress, previews, the result through :mod:`.job.apply`). Plain functions: tests feed them messages by hand."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import bpy

from ...core.errors import AkdError
from ...core.job import worker as wk
from ...core.job.request import JobRequest, JobResult
from ...core.prompt.understanding import understood_line
from ..character.io import scene_fps
from ..controls.bound import BoundArmature
from ..job.settings import job_request
from .properties import frame_range, panel_floor, panel_job

__all__ = [
    "PanelRun",
    "active_run",
    "apply_preview",
    "check_request",
    "ensure_main_thread",
    "handle_messages",
    "panel_request",
    "progress_text",
    "restore_pose",
    "set_active_run",
    "set_run_state",
    "snapshot",
]


_ACTIVE: dict[str, object] = {}  # "run": the PanelRun of the job in progress (one at a time)


def ensure_main_thread() -> None:
    """Guard for everything here that touches bpy: it must run on Blender's main thread."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("akd_blender: Blender data touched from a worker thread")


@dataclass
class PanelRun:
    """One Distill Motion run as the main thread sees it.

    Attributes:
        armature: the armature object's name (looked up again on each use; never held across ticks).
        request: the job (plain data).
        saved_pose: each pose bone's ``matrix_basis`` before the run, restored on error/cancel.
        report: ``report(level_set, text)``, e.g. ``Operator.report``.
        worker: the thread runner (None until started).
        action: the new action's name once written.
        keys: how the new action is keyed (``core.settings.KEY_MODES``).
        set_scene_range: set the scene's frame range to the new action's.
        warnings: the finished job's warnings (``core.job.job_warnings``), one line each.
        scene_changes: what the finished job changed in the scene, one line each.
        bound: the armature bound when the job started (:func:`~akd_blender.blender.job.rig.bind_job`), its
            control probe taken by the write unless the rig was edited meanwhile (then it is probed again).
    """

    armature: str
    request: JobRequest
    saved_pose: list = field(default_factory=list)
    report: Callable[[set[str], str], None] = lambda level, text: print(f"{'/'.join(level)}: {text}")
    worker: wk.Worker | None = None
    action: str | None = None
    result: JobResult | None = None
    keys: str = "sparse"
    set_scene_range: bool = False
    warnings: list[str] = field(default_factory=list)
    scene_changes: list[str] = field(default_factory=list)
    bound: BoundArmature | None = None


def check_request(request: JobRequest) -> None:
    """:meth:`JobRequest.validate`, a bad setting named by its panel label (e.g. "Steps must be …")."""
    from ...core.settings import SettingError

    try:
        request.validate()
    except SettingError as exc:
        raise _labelled(exc) from None


def _labelled(exc) -> Exception:
    """A core ``SettingError`` as an InputError naming the setting by its panel label."""
    from ...core.errors import InputError
    from .properties import LABELS

    return InputError(f"{LABELS.get(exc.field, exc.field)} {exc.reason}")


def panel_request(scene: bpy.types.Scene) -> JobRequest:
    """The job the panel's settings (``scene.akd``) describe, without rig and starting pose (``snapshot``
    adds them), built as the command line builds its own (:func:`~akd_blender.blender.panel.properties.panel_job`
    then :func:`~akd_blender.blender.job.settings.job_request`): the clip from the first frame of the panel's
    range, the scene's fps unless FPS is set, previews every Preview Every steps. Raises InputError
    naming a bad tunable or Redraw by its panel label."""
    from ...core.settings import SettingError

    settings = scene.akd
    first = frame_range(scene, settings)[0]
    try:
        return job_request(panel_job(settings, scene), None, None, first, scene_fps(scene), int(settings.preview_every))
    except SettingError as exc:  # a tunable out of its range, a bad Redraw
        raise _labelled(exc) from None


def snapshot(context: bpy.types.Context, armature_obj: bpy.types.Object) -> PanelRun:
    """Copy what the job needs out of Blender (main thread). Raises InputError/RigError naming the
    problem: an empty prompt, a bad setting (fewer than 2 frames, …), an armature the mirror cannot read."""
    ensure_main_thread()
    from ..character.deform_skeleton import start_pose
    from ..character.io import character_armature
    from ..job.rig import bind_job

    armature_obj = character_armature(armature_obj)  # a control rig with a game rig over it: the game rig

    settings = context.scene.akd
    request = panel_request(context.scene)
    check_request(request)
    rig, bound = bind_job(armature_obj, panel_floor(settings))
    request = replace(request, rig=rig, init_pose=start_pose(armature_obj, rig))  # the pose the user sees
    saved = [pb.matrix_basis.copy() for pb in armature_obj.pose.bones]
    return PanelRun(
        armature_obj.name, request, saved, keys=settings.keys, set_scene_range=bool(settings.set_scene_range), bound=bound
    )


def active_run() -> PanelRun | None:
    """The job in progress, if any."""
    return _ACTIVE.get("run")  # type: ignore[return-value]


def set_active_run(run: PanelRun | None) -> None:
    """Make ``run`` the job in progress (:func:`active_run`), or, with None, leave none in progress."""
    if run is None:
        _ACTIVE.pop("run", None)
    else:
        _ACTIVE["run"] = run


def _run_state(context) -> object | None:
    wm = context.window_manager
    return getattr(wm, "akd_run", None) if wm is not None else None


def set_run_state(context: bpy.types.Context, **values: object) -> None:
    """Set the fields named in ``values`` (running, step, total, progress, eta, loss, status, warnings,
    understood, armature) of the window manager's ``akd_run`` state that the panel shows, and redraw the
    3D views; nothing when that state is not registered."""
    state = _run_state(context)
    if state is None:
        return
    for key, value in values.items():
        setattr(state, key, value)
    screen = getattr(context, "screen", None)
    for area in screen.areas if screen else ():
        if area.type == "VIEW_3D":
            area.tag_redraw()


def restore_pose(run: PanelRun) -> None:
    """Put the armature's pose back as it was before the run."""
    ensure_main_thread()
    obj = bpy.data.objects.get(run.armature)
    if obj is None or obj.pose is None:
        return
    for pb, basis in zip(obj.pose.bones, run.saved_pose):
        pb.matrix_basis = basis
    bpy.context.view_layer.update()


def apply_preview(armature_obj: bpy.types.Object, clip, frame: int) -> None:
    """Pose ``armature_obj`` as ``clip`` at scene frame ``frame`` (clamped to the clip), in each
    pose bone's own rotation mode. Keys nothing."""
    ensure_main_thread()
    from ..keys.keyframes import channel_values

    i = min(max(int(frame) - clip.frame_start, 0), clip.num_frames - 1)
    for j, name in enumerate(clip.bone_names):
        pb = armature_obj.pose.bones.get(name)
        if pb is None:
            continue
        for prop, values in channel_values(clip, j, pb.rotation_mode).items():
            setattr(pb, prop, values[i].tolist())
    bpy.context.view_layer.update()


def handle_messages(context: bpy.types.Context, run: PanelRun, messages: list) -> str | None:
    """Apply drained worker messages on the main thread.

    Progress → the panel's bar and text; Preview → the armature's pose; Done → a new action named
    after the prompt, made active (the old one kept), reported; Failed → the pose restored, the
    error reported; Stopped → the pose restored, "cancelled" reported.
    Returns None while the job runs, ``"FINISHED"`` after Done, ``"CANCELLED"`` after Failed/Stopped.
    """
    ensure_main_thread()
    for message in messages:
        if isinstance(message, wk.Progress):
            loss = message.losses.get("total", next(iter(message.losses.values()), 0.0)) if message.losses else 0.0
            eta = -1.0 if message.eta_seconds is None else float(message.eta_seconds)
            text = progress_text(message)
            factor = message.step / message.total if message.total else 0.0
            set_run_state(context, step=message.step, total=message.total, progress=factor, eta=eta, loss=loss, status=text)
        elif isinstance(message, wk.Preview):
            obj = bpy.data.objects.get(run.armature)
            if obj is not None:
                apply_preview(obj, message.clip, context.scene.frame_current)
        elif isinstance(message, wk.Done):
            return _finish(context, run, message.result)
        elif isinstance(message, wk.Failed):
            restore_pose(run)
            set_run_state(context, running=False, status=message.message)
            run.report({"ERROR"}, message.message)
            if message.details:
                print(message.details)
            return "CANCELLED"
        elif isinstance(message, wk.Stopped):
            restore_pose(run)
            set_run_state(context, running=False, status="Cancelled")
            run.report({"WARNING"}, "Distill Motion cancelled: nothing was changed")
            return "CANCELLED"
    return None


def _finish(context, run: PanelRun, result: JobResult) -> str:
    """Done: the job's clip written as a new action named after the prompt (:func:`.job.apply.apply_result`;
    with physics only the grounded clip), the panel's status, warnings and understood line set and
    reported. An armature deleted meanwhile or a clip it cannot take: reported, the pose restored."""
    from ..job.apply import apply_result

    obj = bpy.data.objects.get(run.armature)
    if obj is None:
        run.report({"ERROR"}, f"armature '{run.armature}' was deleted while the job ran")
        set_run_state(context, running=False, status="Armature deleted")
        return "CANCELLED"
    request = run.request
    try:
        applied = apply_result(
            obj,
            request.rig,
            result,
            name=request.prompt,
            keys=run.keys,
            set_scene_range=run.set_scene_range,
            physics=request.physics,
            keep_distilled=False,
            scene=context.scene,
            bound=run.bound,
        )
    except AkdError as exc:
        restore_pose(run)
        run.report({"ERROR"}, str(exc))
        set_run_state(context, running=False, status=str(exc))
        return "CANCELLED"
    run.action, run.result = applied.action, result
    run.scene_changes, run.warnings = applied.scene_changes, applied.warnings
    understood = understood_line(result.facts) or ""
    understood = understood[:1].upper() + understood[1:]
    text = f"New action '{applied.action}': {result.clip.num_frames} frames in {result.seconds:.1f} s on {result.device}"
    set_run_state(context, running=False, progress=1.0, status=text, warnings="\n".join(run.warnings), understood=understood)
    for line in run.warnings:
        run.report({"WARNING"}, line)
    if understood:
        run.report({"INFO"}, understood)
    run.report({"INFO"}, text)
    return "FINISHED"


_PHASE_LABELS = {"load": "Loading model", "draw": "Drawing", "search": "Pose search", "physics": "Physics"}


def progress_text(message: wk.Progress) -> str:
    """The panel's bar text for a progress message: the phase, its count, its detail (the search's
    sweep and bone), the ETA and, for optimiser steps, the loss; e.g. "Pose search 120/900 · sweep 2/6
    · hips · ETA 0:41" or "Step 3/200 · ETA 1:05 · loss 0.12"."""
    label = _PHASE_LABELS.get(message.phase, "Step")
    parts = [f"{label} {message.step}/{message.total}"]
    if message.detail and message.phase != "steps":
        parts.append(message.detail)
    if message.eta_seconds is not None and message.eta_seconds >= 0:
        parts.append(f"ETA {_clock(float(message.eta_seconds))}")
    if message.losses:
        parts.append(f"loss {message.losses.get('total', next(iter(message.losses.values()))):.4g}")
    return " · ".join(parts)


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"
