"""The SDS steps: each step poses the motion (one FK pass), renders it as the prior sees it, asks the prior for its SDS loss, adds the motion regularisers and takes one Adam step on the motion parameters (rotation offsets per key and bone, the root path).

One step::

    MotionParams ──pose_channels──▶ FK (once) ──▶ joints, foot tips, skinned vertices [F,V,3] (world)
        ──Renderer──▶ video [F,3,H,W] ──prior.sds_loss(settings=config.sds)──▶ SDS loss
    total = w_sds·SDS + w_smooth·smoothness + w_ground·penetration + w_skate·foot skate
            + w_limits·joint limits (+ w_loop·loop) (+ STAY_CLOSE_WEIGHT·stay, after a library start)

With pixel targets a step that queries the prior renders twice: once without a graph for the query
(the target is cached as a reuse step's), then with one for the step's loss against it, so the
render's graph is never held while the prior runs (the two largest memory terms of a step at full size).

A prior whose queries resample any clip to its own frame count (``Capabilities.resamples_frames``: the
image-to-video models, 49 frames at 8 fps for CogVideoX-I2V) is shown the motion at those frames' times
only: the skinned vertices are resampled in time before the render (147 → 49 frames for a 6 s clip at
24 fps), so the render, its graph and the pixel targets are that many frames, while the regularisers
read every frame.

After the library start (start "library") the steps refine the library motion: a stay-close term
(:func:`stay_close_loss`) holds the motion near the library clip written into the parameters, so that
only the video model's gradient moves it away (where it is zero the library motion is kept).

With several processes (:mod:`.parallel`) each takes its share of the draws and gradients are summed."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ..character.kinematics import Skeleton
from ..errors import AkdError
from ..progress import eta_seconds
from ..render.image_losses import character_region, crop_video, multiscale_mse
from ..settings import SDSSettings
from ..video_models.base import SDSPrior
from ..video_models.capabilities import capabilities_of
from ..video_models.frames import resample_frames
from . import parallel
from .context import RunContext
from .regularisers import foot_joints, foot_skate_loss, ground_penetration_loss, joint_limit_loss, loop_loss, smoothness_loss

__all__ = ["NumericalError", "Timer", "optimise", "shown_frames", "STAY_CLOSE_WEIGHT", "stay_close_loss"]

STAY_CLOSE_WEIGHT: float = 100.0
"""Weight of :func:`stay_close_loss` in the steps after a library start."""


class NumericalError(AkdError):
    """The optimisation produced NaN/Inf (exit 1); the message names the step and the loss term."""


class Timer:
    """Seconds per named phase (``totals``), the device synchronised first on CUDA."""

    def __init__(self, device: torch.device) -> None:
        self.device, self.totals = device, {}

    def __call__(self, name: str, start: float) -> float:
        """Add the seconds since ``start`` to ``name``; returns now (the next phase's start)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        now = time.perf_counter()
        self.totals[name] = self.totals.get(name, 0.0) + now - start
        return now


def stay_close_loss(
    rotvec: torch.Tensor, root_offset: torch.Tensor, anchor: tuple[torch.Tensor, torch.Tensor], scale: float
) -> torch.Tensor:
    """How far the motion's keys moved from ``anchor`` (the keys as the start wrote them): the squared
    rotation-offset change summed over each bone's axes and the root's squared travel change in
    character heights (``scale``: the rig's height), each averaged over keys (and bones).
    ``rotvec`` [K,B,3] radians, ``root_offset`` [K,3] armature units; a scalar."""
    rotations = (rotvec - anchor[0]).pow(2).sum(-1).mean()
    root = ((root_offset - anchor[1]) / scale).pow(2).sum(-1).mean()
    return rotations + root


def _posed(skeleton: Skeleton, rotations, locations, feet: torch.Tensor, bone_len: torch.Tensor):
    """One FK pass → (joints [F,J,3], foot tips [F,len(feet),3], vertices [F,V,3]), all in world space."""
    pose = skeleton.pose_matrices(rotations, locations)  # [F,J,4,4] armature space
    world = skeleton.armature_world
    joints = pose[..., :3, 3] @ world[:3, :3].T + world[:3, 3]
    tips = (pose[:, feet, :3, 1] * bone_len[feet, None] + pose[:, feet, :3, 3]) @ world[:3, :3].T + world[:3, 3]
    return joints, tips, skeleton.skin(pose)


def _query(prior, video, text, step: int, steps: int, generator, region, settings: SDSSettings | None) -> dict:
    """``prior.sds_loss`` with this run's SDS settings (priors that hold none get the call without them).
    The character's box lets a latent-video prior decode its target only there (SDSPrior.crop_context)."""
    if settings is None:
        return prior.sds_loss(video, text, step, steps, generator, region=region)
    return prior.sds_loss(video, text, step, steps, generator, region=region, settings=settings)


def _check_finite(step: int, losses: dict[str, float]) -> None:
    for name, value in losses.items():
        if not math.isfinite(value):
            raise NumericalError(
                f"distillation diverged at step {step}: loss '{name}' is {value}; try a lower learning rate or CFG scale"
            )


@dataclass
class _Loop:
    """The SDS loop's fixed parts: this rank's draws and their generators, the optimiser, the
    regularisers' weights and the rig's measures they use (on the run's device)."""

    mine: list[int]
    generators: dict[int, torch.Generator]
    optimiser: torch.optim.Optimizer
    weights: dict[str, float]
    scale: float
    ground: float
    feet: torch.Tensor
    limit_bones: torch.Tensor
    limits: torch.Tensor
    bone_len: torch.Tensor
    sds_settings: SDSSettings | None
    anchor: tuple[torch.Tensor, torch.Tensor] | None = None
    shown_frames: int | None = None
    cached: dict[int, tuple[torch.Tensor, tuple]] = field(default_factory=dict)


def _loop(ctx: RunContext, rank: int, world_size: int) -> _Loop:
    """The loop's fixed parts for ``ctx`` (Adam on the rotation offsets and the root path)."""
    rig, config, params = ctx.rig, ctx.config, ctx.params
    device = params.rotvec.device
    mine = parallel.own_draws(config.draws, rank, world_size)
    generators = {d: ctx.generator if d == 0 else parallel.draw_generator(config.seed, d) for d in mine}
    scale = float(rig.height) or 1.0
    limited = np.flatnonzero(~np.isnan(rig.rotation_limits).all(axis=(1, 2)))
    optimiser = torch.optim.Adam(
        [{"params": [params.rotvec], "lr": config.lr}, {"params": [params.root_offset], "lr": config.root_lr * scale}]
    )
    weights = {
        "smooth": config.w_smooth,
        "ground": config.w_ground,
        "skate": config.w_skate,
        "limits": config.w_limits,
        "loop": config.w_loop if config.loop else 0.0,
        "stay": STAY_CLOSE_WEIGHT if config.start == "library" else 0.0,
    }
    anchor = (params.rotvec.detach().clone(), params.root_offset.detach().clone()) if weights["stay"] else None
    capabilities = capabilities_of(ctx.prior)
    return _Loop(
        mine=mine,
        generators=generators,
        optimiser=optimiser,
        weights=weights,
        scale=scale,
        ground=float(rig.ground_height),
        feet=torch.as_tensor(foot_joints(rig), device=device),
        limit_bones=torch.as_tensor(limited, dtype=torch.int64, device=device),
        limits=torch.as_tensor(rig.rotation_limits[limited], dtype=torch.float32, device=device),
        bone_len=torch.as_tensor(rig.lengths, dtype=torch.float32, device=device),
        sds_settings=config.sds if capabilities.takes_settings else None,
        anchor=anchor,
        shown_frames=shown_frames(capabilities.frames if capabilities.resamples_frames else None, config.frames, config.views),
    )


def shown_frames(prior_frames: int | None, clip_frames: int, views: int) -> int | None:
    """How many frames of a ``clip_frames`` clip the SDS steps render for a prior that resamples every
    clip to ``prior_frames`` (None: render every frame; also for several views per frame, which the
    prior reads as one stack)."""
    return prior_frames if prior_frames and prior_frames < clip_frames and views == 1 else None


def _queries(loop: _Loop, step: int, target_reuse: int) -> bool:
    """Whether this step queries the prior (else it regresses onto the cached targets)."""
    return not loop.cached or step % max(target_reuse, 1) == 0


def _pixel_targets(prior, loop: _Loop) -> bool:
    """Whether the prior's queries return decoded pixel targets (an SDSPrior in target mode, pixel space)."""
    s = loop.sds_settings
    return isinstance(prior, SDSPrior) and s is not None and s.mode == "target" and s.target_space == "pixel"


@torch.no_grad()
def _query_targets(ctx: RunContext, loop: _Loop, video: torch.Tensor, alpha: torch.Tensor, step: int) -> dict:
    """Pixel-target queries of this rank's draws on a detached render ``video`` [F·views,3,H,W] (no
    render graph held while the prior runs): each draw's target and box cached, as a query step
    leaves them; returns the draws' scalar figures (averaged over all draws)."""
    config, region, facts = ctx.config, character_region(alpha), {}
    for d in loop.mine:
        sds = _query(ctx.prior, video, ctx.text, step, config.steps, loop.generators[d], region, loop.sds_settings)
        target, box = sds.pop("target_video"), sds.pop("target_box", None)
        loop.cached[d] = (target, (0, 0, *video.shape[-2:]) if box is None else tuple(int(v) for v in box))
        for k, v in sds.items():
            if k != "loss" and v.numel() == 1:
                facts[f"sds_{k}"] = facts.get(f"sds_{k}", 0.0) + float(v) / config.draws
    return facts


def _sds_terms(
    ctx: RunContext, loop: _Loop, video: torch.Tensor, alpha: torch.Tensor, step: int, reuse: bool
) -> tuple[torch.Tensor, dict]:
    """This rank's SDS draws on ``video`` [F·views,3,H,W] (each with its own generator; with ``reuse``
    the cached target of its last query): their summed loss and the draws' scalar figures (averaged
    over all draws)."""
    config = ctx.config
    region = None if reuse else character_region(alpha)
    sds_sum, facts = torch.zeros((), device=video.device), {}
    for d in loop.mine:
        if reuse:
            target, box = loop.cached[d]
            sds = {"loss": multiscale_mse(crop_video(video.float(), box), target)}
        else:
            sds = _query(ctx.prior, video, ctx.text, step, config.steps, loop.generators[d], region, loop.sds_settings)
            target, box = sds.pop("target_video", None), sds.pop("target_box", None)
            if target is not None and config.target_reuse > 1:
                loop.cached[d] = (target, (0, 0, *video.shape[-2:]) if box is None else tuple(int(v) for v in box))
        sds_sum = sds_sum + sds["loss"].float().to(video.device)
        for k, v in sds.items():
            if k != "loss" and v.numel() == 1:
                facts[f"sds_{k}"] = facts.get(f"sds_{k}", 0.0) + float(v) / config.draws
    return sds_sum, facts


def _regulariser_terms(loop: _Loop, params, joints, tips, vertices, rotations) -> dict[str, torch.Tensor]:
    """The motion regularisers whose weight is not zero: smoothness, ground penetration, foot skate,
    joint limits, loop, staying close to the library start (``params``: the motion's parameters)."""
    terms, w = {}, loop.weights
    if w["smooth"]:
        terms["smooth"] = smoothness_loss(joints, loop.scale)
    if w["ground"]:
        terms["ground"] = ground_penetration_loss(vertices, loop.ground, loop.scale)
    if w["skate"]:
        terms["skate"] = foot_skate_loss(tips, loop.ground, loop.scale)
    if w["limits"]:
        terms["limits"] = joint_limit_loss(rotations, loop.limits, loop.limit_bones)
    if w["loop"]:
        terms["loop"] = loop_loss(rotations, joints, loop.scale)
    if w["stay"] and loop.anchor is not None:
        terms["stay"] = stay_close_loss(params.rotvec, params.root_offset, loop.anchor, loop.scale)
    return terms


def optimise(ctx: RunContext, timer: Timer, rank: int, world_size: int) -> list[dict[str, float]]:
    """``ctx.config.steps`` SDS steps on ``ctx.params``; returns each step's losses (the history).
    Progress "steps" after each step, previews every ``preview_every`` steps, a cancel seen before each."""
    config, params, callbacks = ctx.config, ctx.params, ctx.callbacks
    loop = _loop(ctx, rank, world_size)
    device = params.rotvec.device
    history: list[dict[str, float]] = []
    loop_start = time.perf_counter()
    for step in range(config.steps):
        callbacks.stop_if_cancelled(f"distillation cancelled at step {step} of {config.steps}")
        t = time.perf_counter()
        # Pose: channels → one FK pass → world joints, foot tips and skinned vertices.
        rotations, locations = params.pose_channels()
        joints, tips, vertices = _posed(ctx.skeleton, rotations, locations, loop.feet, loop.bone_len)
        shown = vertices if loop.shown_frames is None else resample_frames(vertices, loop.shown_frames)
        t = timer("pose", t)
        # Render what the prior sees.
        queried, reuse = {}, not _queries(loop, step, config.target_reuse)
        if _pixel_targets(ctx.prior, loop) and not reuse:
            # Pixel targets: the prior queried on a render without a graph, then the step regresses onto them
            # (the same loss as the query's own); the render graph and the prior's activations never coexist.
            with torch.no_grad():
                plain = ctx.render(shown.detach(), config.views)
            t = timer("render", t)
            queried = _query_targets(ctx, loop, plain[:, :3], plain[:, 3], step)
            del plain
            t, reuse = timer("prior", t), True
        rgba = ctx.render(shown, config.views)  # [F·views,4,H,W] (F: the shown frames)
        video = rgba[:, :3]
        t = timer("render", t)
        # Losses: this process's SDS draws, then the regularisers.
        sds_sum, sds_facts = _sds_terms(ctx, loop, video, rgba[:, 3], step, reuse)
        sds_facts |= queried
        t = timer("prior", t)
        terms = {"sds": sds_sum / config.draws} | _regulariser_terms(loop, params, joints, tips, vertices, rotations)
        regularisers = sum(loop.weights[k] * v for k, v in terms.items() if k != "sds")
        # Backward (this rank's share: its draws, 1/N of the regularisers), gradients summed over ranks, update.
        loop.optimiser.zero_grad(set_to_none=True)
        (config.w_sds * terms["sds"] + regularisers / world_size).backward()
        parallel.sum_gradients([params.rotvec, params.root_offset])
        t = timer("backward", t)
        # The step's figures over all draws (one process: exactly its own).
        summed = parallel.sum_values({"sds": float(terms["sds"].detach()), **sds_facts}, device)
        record = {k: float(v.detach()) for k, v in terms.items()} | {"sds": summed.pop("sds")}
        total = config.w_sds * torch.tensor(record["sds"], dtype=torch.float32) + torch.as_tensor(regularisers).detach().cpu()
        record["total"] = float(total)
        record |= summed
        _check_finite(step, record)
        for p in (params.rotvec, params.root_offset):
            if p.grad is not None and not torch.isfinite(p.grad).all():
                raise NumericalError(f"distillation diverged at step {step}: non-finite gradient on the motion parameters")
        loop.optimiser.step()
        timer("optimiser", t)
        history.append(record)
        done = step + 1
        eta = eta_seconds(time.perf_counter() - loop_start, done, config.steps)
        callbacks.report("steps", done, config.steps, eta, f"step {done}/{config.steps}", record)
        if callbacks.preview is not None and config.preview_every and done % config.preview_every == 0 and done < config.steps:
            callbacks.preview(params.to_clip(), done)
    return history
