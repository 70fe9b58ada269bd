"""Operators: Distill Motion (modal, worker thread), Cancel, Free GPU Memory, Ground Action.

Distill Motion (``akd.distill``), DESIGN §5:

1. main thread: :func:`snapshot` copies the armature and the panel's settings into a bpy-free
   :class:`~akd_blender.core.job.request.JobRequest` and remembers the pose (:class:`PanelRun`); the
   settings become the request through the command line's own mapping (:func:`panel_request`:
   ``properties.panel_job`` then ``cli_job.job_request``), so the panel and the CLI run the same job;
2. with a window: a :class:`~akd_blender.core.job.worker.Worker` thread runs the job and a modal timer
   drains its queue; in background mode (``blender -b``, the bpy module) the same job runs on this
   thread and its queue is drained once at the end;
3. :func:`handle_messages` (a plain function; tests feed it messages by hand) applies progress to the
   panel, previews to the pose, and the result as a new action named after the prompt through
   :mod:`.job.apply`, the command line's apply step too (the previous
   action is kept with a fake user; the panel's Keys choice, sparse by default; the job's warnings
   reported and kept for the panel, with what the model understood the prompt as; the scene's frame
   range changed only with Set Scene Range).
   Errors and cancellation restore the pose: the scene is left as it was. The operator has the UNDO flag: one undo step removes the new action and its keys.

Needs: OBJECT or POSE mode, an active armature with a skinned mesh. torch is imported only when a
job starts, never when registering or drawing.
"""

from __future__ import annotations

import bpy

from ...core.errors import AkdError
from ...core.job import worker as wk
from ...core.job.request import action_name
from ..job.settings import on_floor
from .properties import panel_floor
from .run import PanelRun, active_run, ensure_main_thread, handle_messages, set_active_run, set_run_state, snapshot

__all__ = ["AKD_OT_distill", "AKD_OT_cancel", "AKD_OT_free_gpu", "AKD_OT_ground_action", "CLASSES", "ground_active_action"]


def _armature_poll(context) -> bool:
    obj = context.active_object
    return obj is not None and obj.type == "ARMATURE" and context.mode in {"OBJECT", "POSE"}


class AKD_OT_distill(bpy.types.Operator):
    """Distil a motion for the active armature from the prompt (a new action; the old one is kept)"""

    bl_idname = "akd.distill"
    bl_label = "Distill Motion"
    bl_options = {"REGISTER", "UNDO"}

    _timer = None

    @classmethod
    def poll(cls, context) -> bool:
        return _armature_poll(context) and active_run() is None

    def _start(self, context) -> PanelRun | None:
        try:
            run = snapshot(context, context.active_object)
        except AkdError as exc:
            self.report({"ERROR"}, str(exc))
            return None
        run.report = self.report
        run.worker = wk.Worker(run.request)
        set_run_state(
            context,
            running=True,
            armature=run.armature,
            step=0,
            total=0 if run.request.config.steps is None else run.request.config.steps,
            progress=0.0,
            eta=-1.0,
            status="Starting…",
            warnings="",
            understood="",
        )
        return run

    def execute(self, context):
        """Synchronous run (background mode, scripts): the job runs on this thread."""
        run = self._start(context)
        if run is None:
            return {"CANCELLED"}
        set_active_run(run)
        try:
            run.worker.run_sync()
            result = handle_messages(context, run, wk.drain(run.worker.queue))
        finally:
            set_active_run(None)
        return {result or "CANCELLED"}

    def invoke(self, context, event):
        if bpy.app.background or context.window is None:
            return self.execute(context)
        run = self._start(context)
        if run is None:
            return {"CANCELLED"}
        set_active_run(run)
        run.worker.start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.2, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        run = active_run()
        if run is None:
            return self._end(context, "CANCELLED")
        if event.type == "ESC":
            run.worker.cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        result = handle_messages(context, run, wk.drain(run.worker.queue))
        if result is None and not run.worker.alive and run.worker.queue.empty():
            result = handle_messages(context, run, [wk.Failed("the worker stopped without a result")])
        return {"RUNNING_MODAL"} if result is None else self._end(context, result)

    def _end(self, context, result: str):
        if self._timer is not None:
            context.window_manager.event_timer_remove(self._timer)
            self._timer = None
        set_active_run(None)
        return {result}


class AKD_OT_cancel(bpy.types.Operator):
    """Stop the running distillation; the scene is left as it was and GPU memory is freed"""

    bl_idname = "akd.cancel"
    bl_label = "Cancel"

    @classmethod
    def poll(cls, context) -> bool:
        return active_run() is not None

    def execute(self, context):
        run = active_run()
        if run is not None and run.worker is not None:
            run.worker.cancel()
            set_run_state(context, status="Cancelling…")
        return {"FINISHED"}


class AKD_OT_free_gpu(bpy.types.Operator):
    """Unload the video model and release the GPU memory it holds"""

    bl_idname = "akd.free_gpu"
    bl_label = "Free GPU Memory"

    @classmethod
    def poll(cls, context) -> bool:
        return active_run() is None

    def execute(self, context):
        from ...core.job.model_cache import free_gpu_memory

        count = free_gpu_memory()
        self.report({"INFO"}, f"Freed {count} loaded model(s)" if count else "No model was loaded")
        return {"FINISHED"}


class AKD_OT_ground_action(bpy.types.Operator):
    """Make the active action physically plausible with MuJoCo (gravity, ground contact) as a new action"""

    bl_idname = "akd.ground_action"
    bl_label = "Ground Action"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context) -> bool:
        obj = context.active_object
        return (
            _armature_poll(context)
            and active_run() is None
            and obj.animation_data is not None
            and obj.animation_data.action is not None
        )

    def execute(self, context):
        obj = context.active_object
        try:
            name = ground_active_action(context, obj)
        except AkdError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"New action '{name}' (grounded with physics)")
        return {"FINISHED"}


def ground_active_action(context, obj, action=None) -> str:
    """Ground ``action`` (default: the active one) of ``obj`` with ``core.physics.ground_clip``
    and write the result as a new action ``"<name> grounded"`` (made active), keyed as the panel's Keys
    setting says (``scene.akd.keys``). Returns its name. ``obj`` may be the rig a game rig copies
    (:func:`.character.io.character_armature`): the game rig's motion is grounded and keyed back on ``obj``."""
    ensure_main_thread()
    from ...core.motion.physics import ground_clip
    from ..character.extract import rig_from_armature
    from ..character.io import character_armature
    from ..keys.actions import write_action
    from ..keys.keyframes import read_clip, sparse_keys_for

    action = action or obj.animation_data.action
    start, end = (int(round(v)) for v in action.frame_range)
    character = character_armature(obj)
    rig = on_floor(rig_from_armature(character), panel_floor(context.scene.akd))
    keyed_on = obj if character != obj else None
    clip = read_clip(character, start, max(end, start + 1), action=action, rig=rig, keyed_on=keyed_on)
    result = ground_clip(rig, clip)
    sparse = sparse_keys_for(context.scene.akd.keys, rig.height)
    return write_action(character, result.clip, action_name(f"{action.name} grounded"), sparse=sparse).name


CLASSES = (AKD_OT_distill, AKD_OT_cancel, AKD_OT_free_gpu, AKD_OT_ground_action)
