"""The drawn starts: the prior draws a video for the prompt (start "sample") or redraws the motion as
it stands from a noise level (the redraw rounds, SDEdit), and the pose search fits the video into the
run's motion keys."""

from __future__ import annotations

import torch

from ..character.rotations import quat_multiply, rotvec_to_quat
from ..fitting.frame_paths import keys_from_frames, smooth_frames
from ..fitting.motion_starts import prior_starts, prompt_start_weights, starts_as_channels
from ..fitting.pose_search import search_poses
from ..fitting.search_config import search_config_for
from ..fitting.stabilise import stabilised
from ..motion.clip import MotionParams, interpolation_basis
from ..render import make_cameras
from ..video_models.capabilities import capabilities_of
from .context import RunContext
from .heading import held_heading

__all__ = ["start_from_sample", "redraw_rounds", "fit_to_video", "motion_at", "search_size"]


def search_size(height: int, width: int, max_side: int) -> tuple[int, int]:
    """(h, w): ``height`` × ``width`` scaled down (aspect kept, at least 8 px) so that the longer side
    is at most ``max_side``; unchanged when it already is."""
    scale = max_side / max(height, width)
    if scale >= 1:
        return height, width
    return max(8, round(height * scale)), max(8, round(width * scale))


@torch.no_grad()
def start_from_sample(ctx: RunContext) -> dict:
    """Sample-then-fit start: the prior draws a video for the prompt, the pose search fits each of its
    frames (:func:`fit_to_video`), and the fitted per-frame offsets become ``ctx.params``' keys (in
    place). Progress: "draw" for each drawing step, "search" for each batch the search scores; a
    cancel is seen after each drawing step and before each search pass
    (:class:`~akd_blender.core.errors.Cancelled`). Returns figures for the report: image error per
    frame before / after (``search_error_start``, ``search_error``), ``search_renders``,
    ``sample_frames``, ``search_start`` (the motion-prior start the search began from,
    :func:`~akd_blender.core.fitting.motion_starts.prior_starts`, or "standing pose"), ``drawing_shake`` (the
    drawing's camera shake, root-mean-square pixels at the search's size)."""
    search = ctx.config.search
    drawn = ctx.callbacks.counter("draw")
    video = ctx.prior.sample(ctx.text, generator=ctx.generator, guidance=search.guidance, steps=search.steps, progress=drawn)
    facts = fit_to_video(ctx, video, float(capabilities_of(ctx.prior).fps or ctx.config.fps))
    return {"sample_frames": facts.pop("frames"), **facts}


@torch.no_grad()
def redraw_rounds(ctx: RunContext) -> dict:
    """Iterated targets (``config.redraw``, SDEdit): for each noise level ``t`` of
    ``config.redraw.noise`` the motion in ``ctx.params`` as it stands is rendered as the distillation
    renders it, at the prior's frame count (at most the clip's), the prior redraws that video from ``t`` for the prompt
    (:meth:`~akd_blender.core.video_models.base.SDSPrior.redraw`, the drawing's guidance and steps) and the
    pose search fits the redrawn video (:func:`fit_to_video`, the motion as it stands one of its
    starts, swept at ``config.redraw.scales``); the fit becomes ``params``' keys (in place).
    Progress: "draw" and "search" with the round in the detail ("round 2/3 · …").
    Returns figures for the report: ``redraw_rounds``, the last round's ``search_error_start`` /
    ``search_error`` / ``search_renders`` (summed over rounds) / ``drawing_shake``, and
    ``redraw_starts`` (each round's start, "; "-joined: "motion so far", a library start or "standing pose")."""
    config, params = ctx.config, ctx.params
    noise = tuple(config.redraw.noise or ())
    capabilities = capabilities_of(ctx.prior)
    frames = min(capabilities.frames or config.frames, config.frames)  # never more than the clip has
    span = (config.frames - 1) / config.fps  # seconds from the first frame to the last
    fps = capabilities.fps if capabilities.fps and frames == capabilities.frames else (frames - 1) / max(span, 1e-9)
    facts: dict = {"redraw_rounds": len(noise)}
    starts, renders = [], 0
    for i, t in enumerate(noise):
        label = f"round {i + 1}/{len(noise)} · "
        rotations, locations, root = motion_at(params, frames)
        moved = bool(params.rotvec.detach().abs().max() > 0 or params.root_offset.detach().abs().max() > 0)
        video = ctx.render(ctx.skeleton((rotations, locations)))[:, :3]
        drawn = ctx.callbacks.counter("draw", label)
        target = ctx.prior.redraw(video, ctx.text, float(t), ctx.generator, config.search.guidance, config.search.steps, drawn)
        current = (rotations[None], root[None]) if moved else None
        fitted = fit_to_video(ctx, target, fps, current, label)
        renders += fitted["search_renders"]
        starts.append(fitted["search_start"])
        facts |= {k: fitted[k] for k in ("search_error_start", "search_error", "drawing_shake")}
    if noise:
        facts |= {"search_renders_redraw": renders, "redraw_starts": "; ".join(starts)}
    return facts


def motion_at(params: MotionParams, frames: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``params``' motion sampled at ``frames`` evenly spaced times over its span (first and last on
    its first and last key, as :func:`~akd_blender.core.fitting.frame_paths.keys_from_frames` reads them), on
    top of its held first frame: rotations [frames,J,4], locations [frames,J,3] and the root's offset
    [frames,3] (armature space), detached."""
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
    ctx: RunContext,
    video: torch.Tensor,
    fps: float,
    current: tuple[torch.Tensor, torch.Tensor] | None = None,
    label: str = "",
) -> dict:
    """The pose search fits ``ctx.params`` to ``video`` [Fp,3,h,w] in [0,1] (``fps`` its frame rate) and
    writes the fit into its keys (in place); ``label`` goes before the search's progress details.

    The video is area-downsampled to the search's size and, with ``config.search.stabilise``, its
    camera shake taken out (:func:`~akd_blender.core.fitting.stabilise.stabilised`). The search (settings for
    the motion the prompt was understood as, :func:`~akd_blender.core.fitting.search_config.search_config_for`)
    renders with ``ctx.renderer`` resized to its size and begins from the best of the standing pose, the
    library motions of the rig's kind (``config.search.motion_prior``, the understood motion favoured
    by ``prompt_prior``) and ``current`` (a motion as the search's channels: rotations [1,Fp,J,4] and
    root offsets [1,Fp,3], e.g. :func:`motion_at`; then the sweeps after a start are
    ``config.redraw.scales``). Returns ``frames``, ``search_error_start``, ``search_error``,
    ``search_renders``, ``drawing_shake`` and ``search_start`` ("motion so far" for ``current``)."""
    rig, config, params, search = ctx.rig, ctx.config, ctx.params, ctx.config.search
    device = params.rotvec.device
    video = video.to(device, torch.float32)  # [Fp,3,h,w] in [0,1]
    fit = search_size(config.height, config.width, search.max_side)
    if video.shape[-2:] != fit:
        video = torch.nn.functional.interpolate(video, size=fit, mode="area")
    shake = 0.0
    if search.stabilise:
        video, shake = stabilised(video)
    frames = video.shape[0]
    motion = (getattr(ctx.text, "extra", None) or {}).get("motion")
    heading = held_heading(rig, params) if search.motion_prior else None
    pose = params.base_rotations[0].detach().cpu().double().numpy()
    starts = prior_starts(rig, frames, fps, held=pose, heading=heading) if search.motion_prior else []
    held = params.base_rotations[:1].expand(frames, -1, -1)
    channels = starts_as_channels(rig, starts, held, heading if starts else None)
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
        ctx.renderer.resized(*size),
        lambda path: make_cameras(rig, path, *size, mode=config.camera, **ctx.camera_options),
        ss,
        search_config_for(motion, scales=tuple(search.scales), prior_scales=prior_scales, appearance=search.appearance),
        callbacks=ctx.callbacks,
        starts=channels,
        start_weights=weights,
        label=label,
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
