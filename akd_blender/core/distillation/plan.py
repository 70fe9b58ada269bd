"""A distillation's plan: the settings a prior decides (start mode, redraw rounds, steps, sizes), the
held starting pose, and the character's kind as its bone roles read it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..character.rig import RigAsset
from ..errors import InputError
from ..motion.clip import MotionClip
from ..settings import POSE_REDRAW_NOISE, DistillConfig
from ..video_models.capabilities import capabilities_of

__all__ = ["resolve_start", "resolve_sizes", "held_pose", "character_kind"]


def _name(prior) -> str:
    return str(getattr(prior, "name", prior))


def resolve_start(config: DistillConfig, prior, library=None, reads_motions: bool = False) -> DistillConfig:
    """``config`` with ``start``, the redraw rounds and ``steps`` decided.

    ``library``: the prompt read as a library motion of the rig's kind
    (:class:`~akd_blender.core.prompt.reading.LibraryChoice`, None when it is not understood as one);
    ``reads_motions``: ``prior`` reads prompts as known motions (the embedded teacher: its text carries
    an :class:`~akd_blender.core.prompt.understanding.Understanding`). "auto" → "library" when there is a
    ``library`` choice, else "sample" if ``prior`` can draw, else "pose". Redraw rounds
    (``redraw.noise`` None → :data:`~akd_blender.core.settings.POSE_REDRAW_NOISE` from a pose when
    ``prior`` can redraw, else none) and ``steps`` (None → 0 after a drawn video or redraw rounds and
    after the library clip for a prior that reads prompts as known motions, 200 from a pose without
    rounds and after the library clip for a video model that knows any prompt). InputError:
    "library" without a ``library`` choice, "sample" with a prior that cannot draw, redraw rounds
    with one that cannot redraw, or 0 steps from a pose without rounds."""
    capabilities = capabilities_of(prior)
    can_draw, can_redraw = capabilities.draws, capabilities.redraws
    start = config.start
    if start == "auto":
        start = "library" if library is not None else ("sample" if can_draw else "pose")
    if start == "library" and library is None:
        raise InputError(
            "distill: start 'library' needs a prompt understood as a library motion of the character's kind "
            "and a character whose bone roles can be read"
        )
    if start == "sample" and not can_draw:
        raise InputError(f"distill: start 'sample' needs a prior that can draw videos; '{_name(prior)}' cannot")
    noise = config.redraw.noise
    if noise is None:
        noise = POSE_REDRAW_NOISE if start == "pose" and can_redraw else ()
    if noise and not can_redraw:
        raise InputError(f"distill: redraw rounds need a prior that can redraw a video; '{_name(prior)}' cannot")
    steps = config.steps
    if steps is None:
        if start == "library":
            steps = 0 if reads_motions or noise else 200
        else:
            steps = 0 if start == "sample" or noise else 200
    if steps == 0 and start == "pose" and not noise:
        raise InputError(f"distill: steps 0 needs start 'sample' or redraw rounds; '{_name(prior)}' can do neither")
    return replace(config, start=start, steps=steps, redraw=replace(config.redraw, noise=tuple(float(t) for t in noise)))


def resolve_sizes(config: DistillConfig, prior) -> DistillConfig:
    """``config`` with ``frames``, ``height``, ``width`` and ``supersample`` filled in from the prior
    where None (see :class:`DistillConfig`)."""
    capabilities = capabilities_of(prior)
    frames = config.frames
    if frames is None:
        native = capabilities.frames or 16
        prior_fps = capabilities.fps
        frames = max(2, round(native * config.fps / prior_fps)) if prior_fps else native
    height = config.height or capabilities.height or 64
    width = config.width or capabilities.width or 64
    supersample = config.supersample or (4 if max(height, width) <= 64 else 1)
    return replace(config, frames=frames, height=height, width=width, supersample=supersample)


def held_pose(rig: RigAsset, pose: MotionClip, config: DistillConfig) -> MotionClip:
    """The first frame of ``pose`` held for ``config.frames`` frames (InputError if it is another rig's)."""
    if not pose.matches(rig):
        raise InputError(f"distill: the starting pose is for other bones than armature '{rig.name}'")
    rotations = np.repeat(pose.rotations[:1], config.frames, axis=0)
    locations = np.repeat(pose.locations[:1], config.frames, axis=0)
    return MotionClip(rig.bone_names, config.fps, config.frame_start, rotations, locations)


def character_kind(rig: RigAsset) -> str | None:
    """The rig's kind as its bone roles read it (:func:`~akd_blender.core.character.roles.find_roles`: "biped",
    "quadruped", …), or None when its roles cannot be read."""
    from ..character.roles import find_roles

    try:
        return find_roles(rig).kind
    except (InputError, ValueError):  # RigError is an InputError
        return None
