"""Blender GUI script for `make screenshot`: the AKD panel with the Fox's armature selected.

    real-blender gui OUT.png --factory-startup -P scripts/screenshot_panel.py -- [--running MODEL_DIR]

Registers the add-on from the project folder, imports build/real-blender/Fox/Fox.gltf, selects its
armature, opens the 3D Viewport sidebar on the "AKD" tab and frames the character. With
``--running MODEL_DIR`` it also starts Distill Motion (modal operator, worker thread) with that
model, so the capture shows the progress bar, Cancel and the live preview pose. Prints
``AKD-GUI-READY`` when the screen is ready to capture (real-blender waits for that line).
"""

import os
import sys

import bpy

ROOT = os.getcwd()
sys.path.insert(0, ROOT)
ARGS = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
MODEL = ARGS[ARGS.index("--running") + 1] if "--running" in ARGS else None
FOX = os.path.join(ROOT, "build/real-blender/Fox/Fox.gltf")

import akd_blender  # noqa: E402

akd_blender.register()


def log(*parts) -> None:
    print("akd-screenshot:", *parts, flush=True)


def view3d():
    for window in bpy.context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                regions = {r.type: r for r in area.regions}
                return window, area, regions.get("WINDOW"), regions.get("UI")
    return None, None, None, None


def setup():
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.import_scene.gltf(filepath=FOX, disable_bone_shape=True)
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj == arm or obj.parent == arm)
    bpy.context.view_layer.objects.active = arm
    settings = bpy.context.scene.akd
    settings.prompt = "a fox trots forward"
    window, area, region, ui = view3d()
    space = area.spaces.active
    space.show_region_ui = True
    space.shading.type = "SOLID"
    bpy.context.preferences.view.ui_scale = 1.2
    with bpy.context.temp_override(window=window, area=area, region=region):
        bpy.ops.view3d.view_axis(type="RIGHT")
        bpy.ops.view3d.view_all()
    log("armature", arm.name)
    bpy.app.timers.register(switch_tab, first_interval=1.0)
    return None


def switch_tab(tries=[0]):  # noqa: B006 - a counter kept between timer calls
    """Blender offers no API to pick a sidebar tab (``Region.active_panel_category`` is read-only),
    so click down the sidebar's tab strip (its right edge), as a user would, until "AKD" is shown.
    Clicks there only switch tabs; nothing in the scene changes."""
    import subprocess

    window, area, region, ui = view3d()
    category = getattr(ui, "active_panel_category", "?")
    if category == "AKD" or tries[0] > 60:
        log("sidebar tab", category, "after", tries[0], "clicks")
        start()
        return None
    if tries[0] == 0:  # close the splash screen first
        subprocess.run(["xdotool", "mousemove", str(window.width // 2), str(window.height // 2), "key", "Escape"], check=False)
    tries[0] += 1
    x = ui.x + ui.width - 10
    y = window.height - (ui.y + ui.height) + 8 * tries[0]
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], check=False)
    return 0.2


def start() -> None:
    window, area, region, ui = view3d()
    settings = bpy.context.scene.akd
    if MODEL:
        settings.model, settings.model_folder = "FOLDER", MODEL
        settings.auto_steps, settings.steps, settings.resolution, settings.preview_every = False, 400, 16, 3
        settings.use_scene_range, settings.frame_start, settings.frame_end = False, 1, 8
        settings.device = "cpu"
        with bpy.context.temp_override(window=window, area=area, region=region):
            log("distill", bpy.ops.akd.distill("INVOKE_DEFAULT"))
        bpy.app.timers.register(wait_for_progress, first_interval=1.0)
    else:
        bpy.app.timers.register(ready, first_interval=2.0)
    return None


def wait_for_progress():
    state = bpy.context.window_manager.akd_run
    log("progress", state.step, state.total, state.status)
    if state.step >= 20:
        return ready()
    if not state.running:  # the job ended before showing progress: no READY, so the target fails
        log("the job stopped before its 20th step:", state.status)
        return None
    return 0.5


def ready():
    for window in bpy.context.window_manager.windows:
        for area in window.screen.areas:
            area.tag_redraw()
    print("AKD-GUI-READY", flush=True)
    return None


bpy.app.timers.register(setup, first_interval=1.0)
