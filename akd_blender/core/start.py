"""How a distillation starts: the settings a prior decides (start mode, steps, sizes), the held
starting pose, and the sample-then-fit start (the prior draws, the pose search fits each frame)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import torch

from .config import DistillConfig
from .errors import Cancelled, InputError
from .motion import MotionClip, MotionParams
from .rig import RigAsset

__all__ = [
    "search_size",
    "resolve_start",
    "resolve_sizes",
    "held_pose",
    "start_from_sample",
    "StartProgress",
    "eta_seconds",
    "character_kind",
    "first_frame",
    "render_as_distilled",
]


def _name(prior) -> str:
    return str(getattr(prior, "name", prior))


def resolve_start(config: DistillConfig, prior) -> DistillConfig:
    """``config`` with ``start`` ("auto" → "sample" if ``prior`` can draw, else "pose") and ``steps``
    (None → 0 after a drawn video, 200 from a pose) decided. InputError: "sample" with a prior that
    cannot draw, or 0 steps from a pose."""
    can_draw = callable(getattr(prior, "sample", None))
    start = ("sample" if can_draw else "pose") if config.start == "auto" else config.start
    if start == "sample" and not can_draw:
        raise InputError(f"distill: start 'sample' needs a prior that can draw videos; '{_name(prior)}' cannot")
    steps = (0 if start == "sample" else 200) if config.steps is None else config.steps
    if steps == 0 and start == "pose":
        raise InputError(f"distill: steps 0 needs start 'sample'; '{_name(prior)}' cannot draw")
    return replace(config, start=start, steps=steps)


def resolve_sizes(config: DistillConfig, prior) -> DistillConfig:
    """``config`` with ``frames``, ``height``, ``width`` and ``supersample`` filled in from the prior
    where None (see :class:`DistillConfig`)."""
    frames = config.frames
    if frames is None:
        native = int(getattr(prior, "frames", 16) or 16)
        prior_fps = getattr(prior, "fps", None)
        frames = max(2, round(native * config.fps / prior_fps)) if prior_fps else native
    height = config.height or int(getattr(prior, "height", 64) or 64)
    width = config.width or int(getattr(prior, "width", 64) or 64)
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
    """The rig's kind as its bone roles read it (:func:`~akd_blender.core.roles.find_roles`: "biped",
    "quadruped", …), or None when its roles cannot be read."""
    from .roles import find_roles

    try:
        return find_roles(rig).kind
    except (InputError, ValueError):  # RigError is an InputError
        return None


def render_as_distilled(
    rig: RigAsset, vertices: torch.Tensor, renderer, config: DistillConfig, camera_options: dict, views: int = 1
) -> torch.Tensor:
    """Skinned vertices [F,V,3] (world) rendered as the distillation renders them: the loop's camera
    rule (``config.camera``, ``views`` per frame) at ``renderer``'s supersampled size, area-downsampled
    to ``config``'s size. Returns RGBA [F·views,4,H,W] in [0,1]."""
    from .render import make_cameras, root_path

    cameras = make_cameras(
        rig, root_path(vertices), renderer.height, renderer.width, mode=config.camera, views=views, **camera_options
    )
    rgba = renderer.render(vertices, cameras)
    ss = renderer.height // config.height
    if ss > 1:
        rgba = torch.nn.functional.avg_pool2d(rgba, ss)
    return rgba


@torch.no_grad()
def first_frame(
    rig: RigAsset, params: MotionParams, skeleton, renderer, config: DistillConfig, camera_options: dict
) -> torch.Tensor:
    """The character in its start pose (``params``' first frame, offsets as they stand) as the
    distillation renders it: [3,H,W] in [0,1] at ``config``'s size (``renderer`` renders at the
    supersampled size), from the camera of a one-frame clip of that pose (what an image prior is
    asked to animate)."""
    rotations, locations = params.pose_channels()
    vertices = skeleton((rotations[:1], locations[:1]))  # [1,V,3]
    return render_as_distilled(rig, vertices, renderer, config, camera_options)[0, :3]


def search_size(height: int, width: int, max_side: int) -> tuple[int, int]:
    """(h, w): ``height`` × ``width`` scaled down (aspect kept, at least 8 px) so that the longer side
    is at most ``max_side``; unchanged when it already is."""
    scale = max_side / max(height, width)
    if scale >= 1:
        return height, width
    return max(8, round(height * scale)), max(8, round(width * scale))


StartProgress = Callable[[str, int, int, float | None, str], None]
"""``(phase, done, total, eta_seconds, detail)``: phase "draw" (DDIM steps) or "search" (candidate
clips scored, :class:`~akd_blender.core.pose_search.SearchProgress`), detail e.g. "sweep 2/6 · hips"."""


def eta_seconds(seconds: float, done: int, total: int) -> float | None:
    """Seconds left at the pace so far: ``seconds`` spent on ``done`` of ``total`` (None before any)."""
    return seconds / done * (total - done) if done > 0 else None


@torch.no_grad()
def start_from_sample(
    rig: RigAsset,
    prior,
    text,
    generator,
    config: DistillConfig,
    params: MotionParams,
    renderer,
    camera_options: dict,
    progress: StartProgress | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> dict:
    """Sample-then-fit start: the prior draws a video for the prompt, the pose search fits each of its
    frames (rendering with ``renderer`` resized to the search's size; settings for the motion the
    prompt was understood as, :func:`~akd_blender.core.pose_search.search_config_for`), and the fitted
    per-frame offsets become ``params``' keys (in place). ``progress`` is told of each drawing step and
    each batch the search scores; ``should_cancel`` is checked after each drawing step and before each
    search pass (True raises :class:`~akd_blender.core.errors.Cancelled`). With
    ``config.search.stabilise`` the drawing's camera shake is taken out before the fit
    (:func:`~akd_blender.core.stabilise.stabilised`). Returns figures for the report: image error per
    frame before / after (``search_error_start``, ``search_error``), ``search_renders``,
    ``sample_frames``, ``search_start`` (the motion-prior start the search began from,
    :func:`~akd_blender.core.motion_prior.prior_starts`, or "standing pose"), ``drawing_shake`` (the
    drawing's camera shake, root-mean-square pixels at the search's size)."""
    from .motion_prior import prior_starts, prompt_start_weights, starts_as_channels
    from .pose_search import SearchProgress, keys_from_frames, search_config_for, search_poses, smooth_frames
    from .render import make_cameras
    from .stabilise import stabilised

    search = config.search
    device = params.rotvec.device
    began = time.perf_counter()

    def drawn(done: int, total: int) -> None:
        if progress is not None:
            progress("draw", done, total, eta_seconds(time.perf_counter() - began, done, total), f"step {done}/{total}")
        if should_cancel is not None and should_cancel():
            raise Cancelled(f"drawing cancelled at step {done} of {total}")

    def searched(p: SearchProgress) -> None:
        if progress is not None:
            progress(
                "search", p.done, p.total, eta_seconds(p.seconds, p.done, p.total), f"sweep {p.sweep + 1}/{p.sweeps} · {p.stage}"
            )

    video = prior.sample(text, generator=generator, guidance=search.guidance, steps=search.steps, progress=drawn)
    video = video.to(device, torch.float32)  # [Fp,3,h,w] in [0,1]
    fit = search_size(config.height, config.width, search.max_side)
    if video.shape[-2:] != fit:
        video = torch.nn.functional.interpolate(video, size=fit, mode="area")
    shake = 0.0
    if search.stabilise:
        video, shake = stabilised(video)
    frames = video.shape[0]
    motion = (getattr(text, "extra", None) or {}).get("motion")
    starts = prior_starts(rig, frames, float(getattr(prior, "fps", None) or config.fps)) if search.motion_prior else []
    ss = max(1, min(search.supersample, config.supersample))
    size = (fit[0] * ss, fit[1] * ss)
    result = search_poses(
        rig,
        video,
        params.base_rotations[:1].expand(frames, -1, -1),
        params.base_locations[:1].expand(frames, -1, -1),
        renderer.resized(*size),
        lambda path: make_cameras(rig, path, *size, mode=config.camera, **camera_options),
        ss,
        search_config_for(
            motion,
            scales=tuple(search.scales),
            prior_scales=None if search.prior_scales is None else tuple(search.prior_scales),
            appearance=search.appearance,
        ),
        progress=searched,
        should_cancel=should_cancel,
        starts=starts_as_channels(rig, starts, params.base_rotations[:1].expand(frames, -1, -1)),
        start_weights=prompt_start_weights(starts, motion, search.prompt_prior),
    )
    keys = params.rotvec.shape[0]
    rotvec = smooth_frames(result.rotvec, search.smooth)
    # The steady travel and a library start's own path (smooth already) are kept as they are.
    root = smooth_frames(result.lift, search.smooth, hold_first=True) + result.travel + result.drift
    params.rotvec.copy_(keys_from_frames(rotvec, keys, config.interpolation) * params.axis_mask)
    params.root_offset.copy_(keys_from_frames(root, keys, config.interpolation))
    return {
        "sample_frames": frames,
        "search_error_start": float(result.start_errors.mean()),
        "search_error": float(result.errors.mean()),
        "search_renders": result.renders,
        "drawing_shake": shake,
        "search_start": starts[result.start].name if result.start >= 0 else "standing pose",
    }
