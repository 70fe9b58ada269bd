"""The "AKD" tab in the 3D Viewport sidebar (N-panel), shown for the active armature.

Draws settings from ``scene.akd`` and, while a job runs, the progress bar and Cancel from
``window_manager.akd_run``. Imports no torch.
"""

from __future__ import annotations

import bpy

from ...core.settings import TUNABLES
from ..character.io import scene_fps
from .run import active_run

__all__ = ["VIEW3D_PT_akd", "VIEW3D_PT_akd_advanced", "CLASSES"]


class _AKDPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "AKD"

    @classmethod
    def poll(cls, context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE"


class VIEW3D_PT_akd(_AKDPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_akd"
    bl_label = "Text to Motion"

    def draw(self, context) -> None:
        layout = self.layout
        settings = context.scene.akd
        state = context.window_manager.akd_run
        obj = context.active_object
        layout.label(text=obj.name, icon="ARMATURE_DATA")

        col = layout.column(align=True)
        col.prop(settings, "prompt", text="", icon="TEXT")
        col.prop(settings, "negative_prompt", text="Avoid")
        layout.prop(settings, "allow_nearest")

        col = layout.column()
        col.use_property_split = True
        col.use_property_decorate = False
        col.prop(settings, "model")
        if settings.model == "FOLDER":
            col.prop(settings, "model_folder")
        row = col.row(heading="Frames")
        scene_range = f"Scene ({context.scene.frame_start}–{context.scene.frame_end})"
        row.prop(settings, "use_scene_range", text=scene_range)
        if not settings.use_scene_range:
            sub = col.column(align=True)
            sub.prop(settings, "frame_start")
            sub.prop(settings, "frame_end", text="End")
        row = col.row(heading="FPS")
        row.prop(settings, "use_scene_fps", text=f"Scene ({scene_fps(context.scene):g})")
        if not settings.use_scene_fps:
            col.prop(settings, "fps")
        row = col.row(heading="Steps")
        row.prop(settings, "auto_steps", text="Auto")  # the tooltip says what Auto means
        if not settings.auto_steps:
            col.prop(settings, "steps")
        col.prop(settings, "seed")
        col.prop(settings, "camera")
        col.prop(settings, "start")
        col.prop(settings, "loop")
        col.prop(settings, "physics")
        col.prop(settings, "device")
        col.prop(settings, "keys")
        col.prop(settings, "set_scene_range")

        running = active_run() is not None and state.running
        if running:
            box = layout.box()
            _progress(box, state)
            box.operator("akd.cancel", icon="CANCEL")
        else:
            row = layout.row()
            row.scale_y = 1.5
            row.operator("akd.distill", icon="ARMATURE_DATA")
            if state.status:
                layout.label(text=state.status, icon="INFO")
            if state.understood:
                layout.label(text=state.understood, icon="TEXT")
            for line in state.warnings.splitlines():
                layout.label(text=line, icon="ERROR")
        row = layout.row(align=True)
        row.operator("akd.ground_action", icon="PHYSICS")
        row.operator("akd.free_gpu", icon="TRASH")


class VIEW3D_PT_akd_advanced(_AKDPanel, bpy.types.Panel):
    bl_idname = "VIEW3D_PT_akd_advanced"
    bl_label = "Advanced"
    bl_parent_id = "VIEW3D_PT_akd"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context) -> None:
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.scene.akd
        row = layout.row(heading="Resolution")
        row.prop(settings, "auto_resolution", text="Auto")  # the tooltip names the model's own size
        if not settings.auto_resolution:
            layout.prop(settings, "resolution")
        row = layout.row(heading="Floor")
        row.prop(settings, "rest_floor", text="Rest Pose")
        if not settings.rest_floor:
            layout.prop(settings, "ground_height")
        layout.prop(settings, "preview_every")
        layout.prop(settings, "redraw")
        for t in TUNABLES:
            layout.prop(settings, t.name)


def _progress(layout, state) -> None:
    text = state.status or f"Step {state.step}/{state.total}"
    if hasattr(layout, "progress"):  # 4.0+
        layout.progress(factor=state.progress, type="BAR", text=text)
    else:
        layout.label(text=text)


CLASSES = (VIEW3D_PT_akd, VIEW3D_PT_akd_advanced)
