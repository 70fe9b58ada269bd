"""The add-on's settings (one PropertyGroup on the scene) and run state (one on the window manager).

``scene.akd`` (:class:`AKD_Settings`) is saved with the file; ``window_manager.akd_run``
(:class:`AKD_RunState`) is what the panel shows while a job runs and is never saved.
No torch here: the panel must draw in a Blender without torch.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ...core.settings import CAMERA_MODES, DEVICES, KEY_MODES, KEYS_DEFAULT, MODEL_CHOICES, START_MODES, TUNABLES, DistillConfig
from ..job.settings import CliJob

__all__ = [
    "AKD_Settings",
    "AKD_RunState",
    "MODELS",
    "CHOICES",
    "LABELS",
    "model_spec",
    "frame_range",
    "panel_job",
    "tunable_values",
    "CLASSES",
]

# (label, description) of each choice of the core's lists (core.settings); a test checks they match
CHOICES = {
    "camera": {
        "follow": ("Follow", "The camera tracks the character's root"),
        "fixed": ("Fixed", "A still camera framing the whole motion"),
        "orbit": ("Orbit", "The camera follows and turns around the character"),
    },
    "start": {
        "auto": (
            "Automatic",
            "The library motion the prompt is understood as, when the character's kind has it (the embedded model: that "
            "motion alone; a video model: then SDS steps); else a drawn video when the model can draw, else the current pose",
        ),
        "pose": (
            "Current pose",
            "Start from the pose the armature has now: the model redraws it moving and a pose search fits each redrawing "
            "(Redraw), then SDS steps (if any)",
        ),
        "sample": ("Drawn video", "The model draws a video, a pose search fits the rig to it, SDS steps (if any) refine"),
        "library": (
            "Library motion",
            "The motion the prompt is understood as, from the library of the character's kind, played on its bones from "
            "the current pose",
        ),
    },
    "device": {"auto": ("Auto", "CUDA GPU when available, else CPU"), "cpu": ("CPU", "CPU"), "cuda": ("CUDA", "NVIDIA GPU")},
    "keys": {
        "sparse": ("Sparse", "The fewest keys that stay within 0.5° and 0.2% of the character's height of the motion"),
        "dense": ("Every Frame", "A key on every frame of every channel"),
    },
}
_LISTS = {"camera": CAMERA_MODES, "start": START_MODES, "device": DEVICES, "keys": KEY_MODES}

# DistillConfig field → the panel's label for it (errors name the setting as the user sees it)
LABELS = {
    "steps": "Steps",
    "frames": "Frames",
    "fps": "FPS",
    "height": "Resolution",
    "width": "Resolution",
    "seed": "Seed",
    "device": "Device",
    "camera": "Camera",
    "start": "Start",
    "redraw": "Redraw",
    "preview_every": "Preview Every",
} | {t.field: t.label for t in TUNABLES}


def _items(name: str) -> list[tuple[str, str, str]]:
    return [(ident, *CHOICES[name][ident]) for ident in _LISTS[name]]


# identifier, label, description, spec passed to core.video_models.load_prior (None: the folder field)
MODELS = (
    (
        "TINY",
        "Embedded (offline)",
        "The small teacher shipped with the add-on: it animates your own character; runs on any computer",
        "tiny",
    ),
    (
        "TINY_TEXT",
        "Embedded, text only",
        "The shipped text-only teacher (draws its own two characters; for comparison)",
        "tiny-text",
    ),
    *((m.ident, m.label, f"{m.hub_id} from the Hugging Face cache, {m.task}: {m.gpu}", m.hub_id) for m in MODEL_CHOICES),
    ("FOLDER", "Folder…", "A diffusers model saved in a local folder", None),
)


def model_spec(settings: AKD_Settings) -> str:
    """What ``load_prior`` gets for these settings: ``"tiny"``, a hub id, or the chosen folder."""
    for ident, _label, _desc, spec in MODELS:
        if ident == settings.model:
            return spec if spec is not None else bpy.path.abspath(settings.model_folder).rstrip("/\\")
    return "tiny"


def frame_range(scene: bpy.types.Scene, settings: AKD_Settings) -> tuple[int, int]:
    """(first, last) frame of the motion: the scene's range or the settings' own."""
    if settings.use_scene_range:
        return int(scene.frame_start), int(scene.frame_end)
    return int(settings.frame_start), int(settings.frame_end)


def panel_job(settings: AKD_Settings, scene: bpy.types.Scene) -> CliJob:
    """The panel's settings as the command line's :class:`~akd_blender.blender.job.settings.CliJob` (what the
    equivalent flags give): the frame count of :func:`frame_range`, ``fps`` None with Scene FPS,
    ``steps`` None with Auto Steps, ``height`` / ``width`` None with Auto Resolution (the model's own
    size), every Advanced tunable. ``cli_job.job_request`` turns it into the job, as it does the CLI's."""
    first, last = frame_range(scene, settings)
    size = None if settings.auto_resolution else int(settings.resolution)
    return CliJob(
        prompt=settings.prompt,
        negative_prompt=settings.negative_prompt,
        model=model_spec(settings),
        frames=last - first + 1,
        fps=None if settings.use_scene_fps else float(settings.fps),
        steps=None if settings.auto_steps else int(settings.steps),
        seed=int(settings.seed),
        device=settings.device,
        height=size,
        width=size,
        camera=settings.camera,
        start=settings.start,
        redraw=settings.redraw,
        loop=bool(settings.loop),
        physics=bool(settings.physics),
        ground_height=panel_floor(settings),
        keys=settings.keys,
        set_scene_range=bool(settings.set_scene_range),
        allow_nearest=bool(settings.allow_nearest),
        tunables=tunable_values(settings),
    )


def panel_floor(settings: AKD_Settings) -> float | None:
    """The floor's world Z the panel asks for (scene units), or None with Rest Floor on (the mirror's
    own: the rest pose's floor, as the command line's default)."""
    return None if settings.rest_floor else float(settings.ground_height)


def tunable_values(settings: AKD_Settings) -> dict[str, float | int]:
    """The Advanced section's :data:`~akd_blender.core.settings.TUNABLES` as set in the panel (floats
    rounded to 6 significant digits: Blender keeps them in single precision)."""
    return {
        t.name: int(getattr(settings, t.name)) if t.kind is int else float(f"{getattr(settings, t.name):.6g}") for t in TUNABLES
    }


def _tunable_property(t):
    """The panel property of a tunable: its label, description, range and the core's default."""
    if t.kind is int:
        return IntProperty(
            name=t.label, description=t.description.capitalize(), default=t.default(), min=t.minimum, max=t.maximum
        )
    return FloatProperty(
        name=t.label, description=t.description.capitalize(), default=t.default(), min=t.minimum, max=t.maximum, precision=3
    )


def _resolution_changed(settings: AKD_Settings, _context) -> None:
    """A Resolution typed in (or set from Python) is the one used: Auto Resolution goes off."""
    if settings.auto_resolution:
        settings.auto_resolution = False


class AKD_Settings(bpy.types.PropertyGroup):
    """Settings of the Distill Motion operator (``scene.akd``)."""

    prompt: StringProperty(name="Prompt", description="What the character should do, e.g. 'a fox trots forward'", default="")
    negative_prompt: StringProperty(name="Negative", description="What the video should not look like", default="")
    allow_nearest: BoolProperty(
        name="Allow nearest motion",
        description="When the model matches the prompt to no known motion well enough, go ahead with the nearest one "
        "(off: the job stops and names the nearest motions)",
        default=DistillConfig.allow_nearest,
    )
    model: EnumProperty(
        name="Model",
        description="The video model the motion is distilled from",
        items=[(i, label, desc) for i, label, desc, _spec in MODELS],
        default="TINY",
    )
    model_folder: StringProperty(name="Folder", description="A local diffusers model folder", subtype="DIR_PATH", default="")
    use_scene_range: BoolProperty(name="Scene Range", description="Use the scene's frame range", default=True)
    frame_start: IntProperty(name="Start", description="First frame of the motion", default=1, min=0)
    frame_end: IntProperty(name="End", description="Last frame of the motion", default=48, min=1)
    use_scene_fps: BoolProperty(name="Scene FPS", description="Use the scene's frame rate", default=True)
    fps: IntProperty(name="FPS", description="Frames per second of the motion", default=24, min=1, max=240)
    auto_steps: BoolProperty(
        name="Auto Steps",
        description="No steps after a drawn video or redraw rounds (the fitted drawing as it is), 200 from the current pose "
        "without them",
        default=True,
    )
    steps: IntProperty(
        name="Steps",
        description="Optimisation steps (more: better, slower; 0 with Start 'Drawn video': the fitted drawing as it is)",
        default=300,
        min=0,
        max=100000,
    )
    seed: IntProperty(name="Seed", description="Random seed", default=0, min=0)
    auto_resolution: BoolProperty(
        name="Auto Resolution",
        description="Render at the model's own size (32 pixels for the embedded teacher, 480 × 720 for CogVideoX); "
        "setting a Resolution turns this off",
        default=True,
    )
    resolution: IntProperty(
        name="Resolution",
        description="Render size the model sees (pixels, square), used when Auto Resolution is off",
        default=64,
        min=8,
        max=1024,
        update=_resolution_changed,
    )
    camera: EnumProperty(
        name="Camera",
        description="How the distillation camera films the character",
        items=_items("camera"),
        default=DistillConfig.camera,
    )
    start: EnumProperty(
        name="Start",
        description="How the motion is first decided",
        items=_items("start"),
        default=DistillConfig.start,
    )
    loop: BoolProperty(name="Loop", description="Make the last frame flow into the first (cyclic motion)", default=False)
    physics: BoolProperty(name="Physics", description="Ground the distilled motion with MuJoCo (gravity, contact)", default=False)
    rest_floor: BoolProperty(
        name="Rest Floor",
        description="The floor is z = 0 where the rest pose stands within 2% of its height of it, else the rest pose's "
        "lowest point (off: the Floor height below)",
        default=True,
    )
    ground_height: FloatProperty(
        name="Floor",
        description="World Z of the floor the motion stands on, used when Rest Floor is off",
        default=0.0,
        subtype="DISTANCE",
    )
    device: EnumProperty(
        name="Device",
        description="Where the model runs",
        items=_items("device"),
        default=DistillConfig.device,
    )
    keys: EnumProperty(name="Keys", description="How the new action is keyed", items=_items("keys"), default=KEYS_DEFAULT)
    set_scene_range: BoolProperty(
        name="Set Scene Range",
        description="Set the scene's frame range to the new action's (off: the scene's range is left as it is)",
        default=False,
    )
    preview_every: IntProperty(name="Preview Every", description="Update the pose every N steps (0: off)", default=10, min=0)
    redraw: StringProperty(
        name="Redraw",
        description="Redraw rounds: the model redraws the motion as it stands from each noise level (0-1] and the pose "
        "search fits it. auto: 0.9,0.7,0.5 from the current pose, none after a drawn video; none; or levels like 0.5",
        default="auto",
    )


AKD_Settings.__annotations__.update({t.name: _tunable_property(t) for t in TUNABLES})  # the Advanced section's


class AKD_RunState(bpy.types.PropertyGroup):
    """What the panel shows about the running job (``window_manager.akd_run``; not saved)."""

    running: BoolProperty(default=False)
    armature: StringProperty(default="")
    step: IntProperty(default=0)
    total: IntProperty(default=0)
    progress: FloatProperty(default=0.0, min=0.0, max=1.0, subtype="FACTOR")
    eta: FloatProperty(default=-1.0)
    loss: FloatProperty(default=0.0)
    status: StringProperty(default="")
    warnings: StringProperty(default="", description="The last job's warnings, one a line")
    understood: StringProperty(default="", description="What the last job's model understood the prompt as")


CLASSES = (AKD_Settings, AKD_RunState)
