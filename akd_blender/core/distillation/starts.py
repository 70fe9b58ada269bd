"""How a distillation starts: the settings a prior decides (start mode, steps, sizes), the held
starting pose, and the sample-then-fit start (the prior draws, the pose search fits each frame)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import torch

from ..character.rig import RigAsset
from ..errors import Cancelled, InputError
from ..motion.clip import MotionClip, MotionParams
from ..settings import POSE_REDRAW_NOISE, DistillConfig
from ..video_models.capabilities import capabilities_of

__all__ = [
    "search_size",
    "resolve_start",
    "resolve_sizes",
    "held_pose",
    "start_from_sample",
    "redraw_rounds",
    "fit_to_video",
    "motion_at",
    "StartProgress",
    "eta_seconds",
    "character_kind",
    "first_frame",
    "render_as_distilled",
]


def _name(prior) -> str:
    return str(getattr(prior, "name", prior))


def resolve_start(config: DistillConfig, prior, library=None, reads_motions: bool = False) -> DistillConfig:
    """``config`` with ``start``, the redraw rounds and ``steps`` decided.

    ``library``: the prompt read as a library motion of the rig's kind
    (:class:`~akd_blender.core.distillation.library_start.LibraryChoice`, None when it is not understood as one);
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


def render_as_distilled(
    rig: RigAsset, vertices: torch.Tensor, renderer, config: DistillConfig, camera_options: dict, views: int = 1
) -> torch.Tensor:
    """Skinned vertices [F,V,3] (world) rendered as the distillation renders them: the loop's camera
    rule (``config.camera``, ``views`` per frame) at ``renderer``'s supersampled size, area-downsampled
    to ``config``'s size. Returns RGBA [F·views,4,H,W] in [0,1]."""
    from ..render import make_cameras, root_path

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
clips scored, :class:`~akd_blender.core.fitting.pose_search.SearchProgress`), detail e.g. "sweep 2/6 · hips"."""


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
    frames (:func:`fit_to_video`), and the fitted per-frame offsets become ``params``' keys (in
    place). ``progress`` is told of each drawing step and each batch the search scores;
    ``should_cancel`` is checked after each drawing step and before each search pass (True raises
    :class:`~akd_blender.core.errors.Cancelled`). Returns figures for the report: image error per
    frame before / after (``search_error_start``, ``search_error``), ``search_renders``,
    ``sample_frames``, ``search_start`` (the motion-prior start the search began from,
    :func:`~akd_blender.core.fitting.motion_starts.prior_starts`, or "standing pose"), ``drawing_shake`` (the
    drawing's camera shake, root-mean-square pixels at the search's size)."""
    search = config.search
    drawn = _drawing_progress(progress, should_cancel, "")
    video = prior.sample(text, generator=generator, guidance=search.guidance, steps=search.steps, progress=drawn)
    facts = fit_to_video(
        rig,
        text,
        video,
        config,
        params,
        renderer,
        camera_options,
        float(capabilities_of(prior).fps or config.fps),
        progress,
        should_cancel,
    )
    return {"sample_frames": facts.pop("frames"), **facts}


@torch.no_grad()
def redraw_rounds(
    rig: RigAsset,
    prior,
    text,
    generator,
    config: DistillConfig,
    params: MotionParams,
    skeleton,
    renderer,
    camera_options: dict,
    progress: StartProgress | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> dict:
    """Iterated targets (``config.redraw``, SDEdit): for each noise level ``t`` of
    ``config.redraw.noise`` the motion in ``params`` as it stands is rendered as the distillation
    renders it, at the prior's frame count (at most the clip's), the prior redraws that video from ``t`` for the prompt
    (:meth:`~akd_blender.core.video_models.base.SDSPrior.redraw`, the drawing's guidance and steps) and the
    pose search fits the redrawn video (:func:`fit_to_video`, the motion as it stands one of its
    starts, swept at ``config.redraw.scales``); the fit becomes ``params``' keys (in place).
    ``progress`` phases "draw" and "search" with the round in the detail ("round 2/3 · …").
    Returns figures for the report: ``redraw_rounds``, the last round's ``search_error_start`` /
    ``search_error`` / ``search_renders`` (summed over rounds) / ``drawing_shake``, and
    ``redraw_starts`` (each round's start, "; "-joined: "motion so far", a library start or "standing pose")."""
    noise = tuple(config.redraw.noise or ())
    capabilities = capabilities_of(prior)
    frames = min(capabilities.frames or config.frames, config.frames)  # never more than the clip has
    span = (config.frames - 1) / config.fps  # seconds from the first frame to the last
    fps = capabilities.fps if capabilities.fps and frames == capabilities.frames else (frames - 1) / max(span, 1e-9)
    facts: dict = {"redraw_rounds": len(noise)}
    starts, renders = [], 0
    for i, t in enumerate(noise):
        label = f"round {i + 1}/{len(noise)} · "
        rotations, locations, root = motion_at(params, frames)
        moved = bool(params.rotvec.detach().abs().max() > 0 or params.root_offset.detach().abs().max() > 0)
        video = render_as_distilled(rig, skeleton((rotations, locations)), renderer, config, camera_options)[:, :3]
        drawn = _drawing_progress(progress, should_cancel, label)
        target = prior.redraw(video, text, float(t), generator, config.search.guidance, config.search.steps, drawn)
        current = (rotations[None], root[None]) if moved else None
        fitted = fit_to_video(
            rig, text, target, config, params, renderer, camera_options, fps, progress, should_cancel, current, label
        )
        renders += fitted["search_renders"]
        starts.append(fitted["search_start"])
        facts |= {k: fitted[k] for k in ("search_error_start", "search_error", "drawing_shake")}
    if noise:
        facts |= {"search_renders_redraw": renders, "redraw_starts": "; ".join(starts)}
    return facts


def _drawing_progress(progress: StartProgress | None, should_cancel: Callable[[], bool] | None, label: str):
    """A drawing's ``progress(done, total)``: reports phase "draw" and checks for cancelling."""
    began = time.perf_counter()

    def drawn(done: int, total: int) -> None:
        if progress is not None:
            progress("draw", done, total, eta_seconds(time.perf_counter() - began, done, total), f"{label}step {done}/{total}")
        if should_cancel is not None and should_cancel():
            raise Cancelled(f"drawing cancelled at step {done} of {total}")

    return drawn


def motion_at(params: MotionParams, frames: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``params``' motion sampled at ``frames`` evenly spaced times over its span (first and last on
    its first and last key, as :func:`~akd_blender.core.fitting.pose_search.keys_from_frames` reads them), on
    top of its held first frame: rotations [frames,J,4], locations [frames,J,3] and the root's offset
    [frames,3] (armature space), detached."""
    from ..character.rotations import quat_multiply, rotvec_to_quat
    from ..motion.clip import interpolation_basis

    keys = params.rotvec.shape[0]
    basis = torch.as_tensor(
        interpolation_basis(frames, keys, params.interpolation), dtype=torch.float32, device=params.rotvec.device
    )
    offsets = torch.einsum("fk,kbc->fbc", basis, params.rotvec.detach()) * params.axis_mask
    base = params.base_rotations[:1].expand(frames, -1, -1)
    free = params.free_bones
    rotations = base.index_copy(1, free, quat_multiply(base[:, free], rotvec_to_quat(offsets)))
    root = basis @ params.root_offset.detach()  # [frames,3] armature space
    root_local = torch.einsum("rji,fj->fri", params.root_axes, root)
    locations = params.base_locations[:1].expand(frames, -1, -1).index_add(1, params.root_bones, root_local)
    return rotations, locations, root


@torch.no_grad()
def fit_to_video(
    rig: RigAsset,
    text,
    video: torch.Tensor,
    config: DistillConfig,
    params: MotionParams,
    renderer,
    camera_options: dict,
    fps: float,
    progress: StartProgress | None = None,
    should_cancel: Callable[[], bool] | None = None,
    current: tuple[torch.Tensor, torch.Tensor] | None = None,
    label: str = "",
) -> dict:
    """The pose search fits ``params`` to ``video`` [Fp,3,h,w] in [0,1] (``fps`` its frame rate) and
    writes the fit into ``params``' keys (in place).

    The video is area-downsampled to the search's size and, with ``config.search.stabilise``, its
    camera shake taken out (:func:`~akd_blender.core.fitting.stabilise.stabilised`). The search (settings for
    the motion the prompt was understood as, :func:`~akd_blender.core.fitting.pose_search.search_config_for`)
    renders with ``renderer`` resized to its size and begins from the best of the standing pose, the
    library motions of the rig's kind (``config.search.motion_prior``, the understood motion favoured
    by ``prompt_prior``) and ``current`` (a motion as the search's channels: rotations [1,Fp,J,4] and
    root offsets [1,Fp,3], e.g. :func:`motion_at`; then the sweeps after a start are
    ``config.redraw.scales``). Returns ``frames``, ``search_error_start``, ``search_error``,
    ``search_renders``, ``drawing_shake`` and ``search_start`` ("motion so far" for ``current``)."""
    from ..fitting.motion_starts import prior_starts, prompt_start_weights, starts_as_channels
    from ..fitting.pose_search import SearchProgress, keys_from_frames, search_config_for, search_poses, smooth_frames
    from ..fitting.stabilise import stabilised
    from ..render import make_cameras

    search = config.search
    device = params.rotvec.device

    def searched(p: SearchProgress) -> None:
        if progress is not None:
            progress(
                "search",
                p.done,
                p.total,
                eta_seconds(p.seconds, p.done, p.total),
                f"{label}sweep {p.sweep + 1}/{p.sweeps} · {p.stage}",
            )

    video = video.to(device, torch.float32)  # [Fp,3,h,w] in [0,1]
    fit = search_size(config.height, config.width, search.max_side)
    if video.shape[-2:] != fit:
        video = torch.nn.functional.interpolate(video, size=fit, mode="area")
    shake = 0.0
    if search.stabilise:
        video, shake = stabilised(video)
    frames = video.shape[0]
    motion = (getattr(text, "extra", None) or {}).get("motion")
    starts = prior_starts(rig, frames, fps) if search.motion_prior else []
    held = params.base_rotations[:1].expand(frames, -1, -1)
    channels = starts_as_channels(rig, starts, held)
    weights = prompt_start_weights(starts, motion, search.prompt_prior)
    prior_scales = None if search.prior_scales is None else tuple(search.prior_scales)
    if current is not None:
        channels = (torch.cat([channels[0], current[0].cpu().float()]), torch.cat([channels[1], current[1].cpu().float()]))
        weights = None if weights is None else torch.cat([weights, torch.ones(1)])
        prior_scales = tuple(config.redraw.scales)
    ss = max(1, min(search.supersample, config.supersample))
    size = (fit[0] * ss, fit[1] * ss)
    result = search_poses(
        rig,
        video,
        held,
        params.base_locations[:1].expand(frames, -1, -1),
        renderer.resized(*size),
        lambda path: make_cameras(rig, path, *size, mode=config.camera, **camera_options),
        ss,
        search_config_for(motion, scales=tuple(search.scales), prior_scales=prior_scales, appearance=search.appearance),
        progress=searched,
        should_cancel=should_cancel,
        starts=channels,
        start_weights=weights,
    )
    keys = params.rotvec.shape[0]
    rotvec = smooth_frames(result.rotvec, search.smooth)
    # The steady travel and a start's own path (smooth already) are kept as they are.
    root = smooth_frames(result.lift, search.smooth, hold_first=True) + result.travel + result.drift
    params.rotvec.copy_(keys_from_frames(rotvec, keys, config.interpolation) * params.axis_mask)
    params.root_offset.copy_(keys_from_frames(root, keys, config.interpolation))
    if result.start < 0:
        start = "standing pose"
    elif result.start < len(starts):
        start = starts[result.start].name
    else:
        start = "motion so far"
    return {
        "frames": frames,
        "search_error_start": float(result.start_errors.mean()),
        "search_error": float(result.errors.mean()),
        "search_renders": result.renders,
        "drawing_shake": shake,
        "search_start": start,
    }
