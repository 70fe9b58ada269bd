"""The SDS distillation loop: a prompt and a rig → a MotionClip.

Before the steps the motion starts from the library clip of the motion the prompt is understood as
(start "library", :mod:`~akd_blender.core.distillation.library_start`; by default whenever the prompt is read as a
motion of the rig's kind, and for the embedded teacher the whole job), the held pose, a drawn video
fitted by the pose search (start "sample") or a prompt-ranked library motion, and then goes through the redraw rounds
(``config.redraw``: the prior redraws the render of the motion from a noise level, the search fits
it; by default three from a held pose).

One step::

    MotionParams ──pose_channels──▶ FK (once) ──▶ joints, foot tips, skinned vertices [F,V,3] (world)
        ──Renderer──▶ video [F,3,H,W] ──prior.sds_loss(settings=config.sds)──▶ SDS loss
    total = w_sds·SDS + w_smooth·smoothness + w_ground·penetration + w_skate·foot skate
            + w_limits·joint limits (+ w_loop·loop)
    Adam on the motion parameters only (rotation offsets per key and bone, root path).

The settings are :class:`~akd_blender.core.settings.DistillConfig` (re-exported here); the prior gets
its SDS settings with every query and is never changed. Deterministic on CPU for a seed (noise and
timesteps come from one seeded generator).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from ..character.kinematics import Skeleton
from ..character.rig import RigAsset
from ..errors import AkdError, Cancelled, InputError
from ..motion.clip import MotionClip, MotionParams
from ..prompt.understanding import Understanding, require_understood
from ..render.image_losses import character_region, crop_video, multiscale_mse
from ..settings import START_MODES, DistillConfig, SDSSettings, SearchSettings, SettingError, config_from_dict
from ..video_models.capabilities import capabilities_of
from . import parallel
from .library_start import (
    LibraryChoice,
    LibraryReader,
    choose_library_motion,
    library_motion,
    library_only,
    plan_facts,
    plan_frames,
    write_library_start,
)
from .regularisers import foot_joints, foot_skate_loss, ground_penetration_loss, joint_limit_loss, loop_loss, smoothness_loss
from .starts import first_frame, held_pose, redraw_rounds, render_as_distilled, resolve_sizes, resolve_start, start_from_sample

__all__ = [
    "START_MODES",
    "resolve_start",
    "resolve_sizes",
    "DistillConfig",
    "SDSSettings",
    "SearchSettings",
    "config_from_dict",
    "DistillProgress",
    "DistillCallbacks",
    "DistillResult",
    "NumericalError",
    "distill",
]


class NumericalError(AkdError):
    """The optimisation produced NaN/Inf (exit 1); the message names the step and the loss term."""


@dataclass
class DistillProgress:
    """One progress report: ``step`` (1-based, done) of ``total`` in ``phase``, ``losses`` (name →
    float; empty outside "steps"), ``eta_seconds`` of the phase (None: not known yet) and ``detail``
    (e.g. "sweep 2/6 · hips").

    Phases in order: "draw" (the prior's denoising steps), "search" (candidate clips the pose search
    scored, :class:`~akd_blender.core.fitting.pose_search.SearchProgress`), "steps" (optimiser steps); the
    job adds "load" (the prior) before and "physics" (simulation steps) after."""

    step: int
    total: int
    losses: dict[str, float]
    eta_seconds: float | None
    phase: str = "steps"
    detail: str = ""


@dataclass
class DistillCallbacks:
    """Hooks called from the loop (on the thread running it).

    progress: after every step, drawing step and batch of the pose search (:class:`DistillProgress`).
    preview: (current MotionClip, step) every ``preview_every`` steps and at the end. should_cancel:
    checked before every step, after every drawing step and before every pose search pass; True →
    :class:`Cancelled`.
    """

    progress: Callable[[DistillProgress], None] | None = None
    preview: Callable[[MotionClip, int], None] | None = None
    should_cancel: Callable[[], bool] | None = None


@dataclass
class DistillResult:
    """``clip``: the distilled motion; ``history``: per-step losses; ``seconds``: wall time;
    ``timings``: seconds per phase (setup, text, sample_and_search or ranked_start, pose, render, prior,
    backward, optimiser); ``config``: the settings used; ``extra``: plain facts for the report — what the prior
    understood the prompt as (the embedded teacher: ``understood_as``, ``motion``, ``similarity``), the
    library start's ``start`` ("library"), ``library_motion`` (e.g. "walk"), ``library_variation``
    ("default" or e.g. "speed 0.8 (slowly)") and ``search_start`` (:attr:`~akd_blender.core.distillation.library_start.LibraryChoice.name`), the
    sample-then-fit start's figures (search_error_start / search_error per frame, search_renders,
    sample_frames, drawing_shake, search_start: the motion-prior start the search began from, or "standing pose"; with
    ``ranked_start`` search_start is the start the prompt ranked best, with ranked_starts, ranked_score,
    ranked_margin, ranked_runner_up: :func:`~akd_blender.core.distillation.ranked_start.start_from_ranking`)."""

    clip: MotionClip
    history: list[dict[str, float]]
    seconds: float
    timings: dict[str, float]
    config: DistillConfig
    prior_name: str = ""
    extra: dict = field(default_factory=dict)


class _Timer:
    def __init__(self, device: torch.device) -> None:
        self.device, self.totals = device, {}

    def __call__(self, name: str, start: float) -> float:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        now = time.perf_counter()
        self.totals[name] = self.totals.get(name, 0.0) + now - start
        return now


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


def distill(
    rig: RigAsset,
    prompt: str,
    config: DistillConfig | None = None,
    prior=None,
    callbacks: DistillCallbacks | None = None,
    init_pose: MotionClip | None = None,
) -> DistillResult:
    """Distil ``prompt`` into a motion of ``rig`` with a video prior (default: the embedded teacher).

    The motion starts from ``init_pose`` (its first frame, held; e.g. the armature's current pose)
    or from the rest pose; the optimised rotations are offsets from it.

    Raises InputError (bad config / prompt; PromptNotUnderstood when the prior reads the prompt as no
    known motion and ``config.allow_nearest`` is off), ModelNotAvailable (prior missing), Cancelled (within one
    step of ``should_cancel`` returning True), NumericalError (NaN/Inf loss or gradient).
    On the CPU the same seed and torch thread count give the same motion bit for bit
    (:func:`reproducible_on_cpu`).
    """
    config = config or DistillConfig()
    config.validate()
    with reproducible_on_cpu(config.resolved_device()):
        return _distill(rig, prompt, config, prior, callbacks, init_pose)


@contextmanager
def reproducible_on_cpu(device: torch.device) -> Iterator[None]:
    """On the CPU, torch's deterministic algorithms for the ``with`` block (warnings only where an op has
    none), then the previous setting again; other devices are left alone. Without them, index_put with
    accumulate (the backward of the renderer's gathers over faces and pixels) adds in thread order on
    several threads, and two runs of one job differ in the last bits."""
    if device.type != "cpu" or torch.are_deterministic_algorithms_enabled():
        yield
        return
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)


def _roles(rig: RigAsset):
    """The rig's bone roles (:func:`~akd_blender.core.character.roles.find_roles`), or None when they cannot be read."""
    from ..character.roles import find_roles

    try:
        return find_roles(rig)
    except (InputError, ValueError):  # RigError is an InputError
        return None


def _default_prior(config: DistillConfig, kind: str | None, device: torch.device):
    """The embedded teacher, or for a job that is its library clip alone
    (:func:`~akd_blender.core.distillation.library_start.library_only`) the teacher's
    :class:`~akd_blender.core.distillation.library_start.LibraryReader`: the prompt is read as the teacher reads
    it and its weights are never loaded."""
    if library_only(config, kind):
        return LibraryReader()
    from ..video_models import load_prior

    return load_prior("tiny", device=device)


def _library_only(
    rig: RigAsset,
    roles,
    library: LibraryChoice,
    config: DistillConfig,
    prior,
    extra: dict,
    init_pose: MotionClip | None,
    callbacks: DistillCallbacks,
    timer: _Timer,
    t_start: float,
) -> DistillResult:
    """Start "library" with no steps and no redraw rounds: the library clip played on the held pose
    is the motion (:func:`~akd_blender.core.distillation.library_start.library_motion`); nothing is rendered and the
    prior is not queried."""
    if callbacks.should_cancel is not None and callbacks.should_cancel():
        raise Cancelled("distillation cancelled before the library start")
    t = time.perf_counter()
    held = held_pose(rig, init_pose, config) if init_pose is not None else None
    clip = library_motion(rig, roles, library, config.frames, config.fps, held, config.frame_start)
    timer("library_start", t)
    if callbacks.preview is not None and config.preview_every:
        callbacks.preview(clip, 0)
    return DistillResult(
        clip=clip,
        history=[],
        seconds=time.perf_counter() - t_start,
        timings=dict(timer.totals),
        config=config,
        prior_name=str(getattr(prior, "name", "")),
        extra=extra | library.facts(),
    )


def _distill(
    rig: RigAsset,
    prompt: str,
    config: DistillConfig | None,
    prior,
    callbacks: DistillCallbacks | None,
    init_pose: MotionClip | None,
) -> DistillResult:
    t_start = time.perf_counter()
    config = config or DistillConfig()
    config.validate()
    if not prompt or not prompt.strip():
        raise InputError("distill: the prompt is empty")
    callbacks = callbacks or DistillCallbacks()
    device = config.resolved_device()
    timer = _Timer(device)
    torch.manual_seed(config.seed)
    rank, world_size = parallel.world()
    draws = config.draws or world_size
    if draws < world_size:
        raise SettingError("draws", f"must be at least the number of processes, {world_size} (got {draws})")
    mine = parallel.own_draws(draws, rank, world_size)
    config = replace(config, draws=draws)
    generator = parallel.draw_generator(config.seed, 0)  # the start's drawing, then SDS draw 0
    generators = {d: generator if d == 0 else parallel.draw_generator(config.seed, d) for d in mine}

    # 1. Prior and text (the text embedding is computed once), the library motion the prompt asks for.
    roles = _roles(rig)
    kind = roles.kind if roles is not None else None
    if prior is None:
        prior = _default_prior(config, kind, device)
    capabilities = capabilities_of(prior)
    sds_settings = config.sds if capabilities.takes_settings else None
    if config.start not in ("auto", "library"):  # a start that needs no reading of the prompt is checked first
        config = resolve_start(config, prior)
    t = timer("setup", t_start)
    image_prior = capabilities.image_conditioned  # draws the character it is shown
    if image_prior or capabilities.reads_kind:
        text = prior.encode_text(prompt, config.negative_prompt, kind=kind)
    else:
        text = prior.encode_text(prompt, config.negative_prompt)
    understanding = (getattr(text, "extra", None) or {}).get("understanding")
    reads_motions = isinstance(understanding, Understanding)  # a prior that reads prompts as known motions
    extra = {k: v for k, v in (getattr(text, "extra", None) or {}).items() if isinstance(v, str | int | float)}
    if world_size > 1:
        extra["processes"] = world_size  # the draws were shared out over this many ranks
    library = None
    if config.start in ("auto", "library"):
        library, reading = choose_library_motion(prompt, kind, understanding, prior, config.allow_nearest)
        if config.start == "library" and library is None and reading is not None:
            require_understood(reading, config.allow_nearest)  # names the prompt and the nearest motions
        if library is not None and library.plan is not None:  # a composed prompt: read part by part
            extra |= plan_facts(library.plan)
            if config.frames is None:
                config = replace(config, frames=plan_frames(library.plan, config.fps))
        elif library is not None and not reads_motions and reading is not None:
            extra |= {k: v for k, v in reading.facts().items() if isinstance(v, str | int | float)}
    if reads_motions and (library is None or library.plan is None):
        require_understood(understanding, config.allow_nearest)
    config = resolve_sizes(resolve_start(config, prior, library, reads_motions), prior)
    t = timer("text", t)
    if config.start == "library" and config.steps == 0 and not config.redraw.noise:
        return _library_only(rig, roles, library, config, prior, extra, init_pose, callbacks, timer, t_start)
    from ..render import Renderer

    # 2. Motion, skeleton, renderer, optimiser.
    keys = config.keys or max(2, (config.frames + 1) // 2)
    base = held_pose(rig, init_pose, config) if init_pose is not None else None
    params = MotionParams(rig, config.frames, config.fps, keys=keys, interpolation=config.interpolation, base=base).to(device)
    params.frame_start = config.frame_start
    if config.start == "library":
        extra |= write_library_start(rig, roles, library, params)
        parallel.broadcast_parameters([params.rotvec, params.root_offset])
    skeleton = Skeleton(rig).to(device)
    # Priors that learnt one look (the embedded teacher) say which ground and framing they expect.
    style, camera_options = capabilities.render_style, dict(capabilities.camera_options)
    ss = config.supersample
    renderer = Renderer(rig, config.height * ss, config.width * ss, backend=config.render_backend, device=device, style=style)
    scale = float(rig.height) or 1.0
    ground = float(rig.ground_height)
    feet = torch.as_tensor(foot_joints(rig), device=device)
    limited = np.flatnonzero(~np.isnan(rig.rotation_limits).all(axis=(1, 2)))
    limit_bones = torch.as_tensor(limited, dtype=torch.int64, device=device)
    limits = torch.as_tensor(rig.rotation_limits[limited], dtype=torch.float32, device=device)
    bone_len = torch.as_tensor(rig.lengths, dtype=torch.float32, device=device)
    optimiser = torch.optim.Adam(
        [{"params": [params.rotvec], "lr": config.lr}, {"params": [params.root_offset], "lr": config.root_lr * scale}]
    )
    weights = {
        "smooth": config.w_smooth,
        "ground": config.w_ground,
        "skate": config.w_skate,
        "limits": config.w_limits,
        "loop": config.w_loop if config.loop else 0.0,
    }
    history: list[dict[str, float]] = []
    cached: dict[int, tuple[torch.Tensor, tuple]] = {}  # draw → (decoded target video, its box) for reuse steps
    if image_prior:
        text = replace(text, first_frame=first_frame(rig, params, skeleton, renderer, config, camera_options))
    t = timer("setup", t)
    prior_name = str(getattr(prior, "name", prior))

    def started(phase: str, done: int, total: int, eta: float | None, detail: str) -> None:
        if callbacks.progress is not None:
            callbacks.progress(DistillProgress(done, total, {}, eta, phase, detail))

    if config.start == "sample":
        extra |= start_from_sample(
            rig, prior, text, generator, config, params, renderer, camera_options, started, callbacks.should_cancel
        )
        parallel.broadcast_parameters([params.rotvec, params.root_offset])  # every rank steps from rank 0's fit
        t = timer("sample_and_search", t)
    elif config.ranked_start and config.start == "pose":
        if not capabilities.ranks:
            raise SettingError("ranked_start", f"needs a prior that scores videos by a prompt; '{prior_name}' cannot")
        from .ranked_start import start_from_ranking

        extra |= start_from_ranking(
            rig, prior, text, config, params, skeleton, renderer, camera_options, started, callbacks.should_cancel
        )
        parallel.broadcast_parameters([params.rotvec, params.root_offset])  # every rank steps from rank 0's choice
        t = timer("ranked_start", t)
    if config.redraw.noise:
        extra |= redraw_rounds(
            rig, prior, text, generator, config, params, skeleton, renderer, camera_options, started, callbacks.should_cancel
        )
        parallel.broadcast_parameters([params.rotvec, params.root_offset])  # every rank steps from rank 0's fit
        t = timer("redraw", t)
    loop_start = time.perf_counter()

    for step in range(config.steps):
        if callbacks.should_cancel is not None and callbacks.should_cancel():
            raise Cancelled(f"distillation cancelled at step {step} of {config.steps}")
        t = time.perf_counter()
        # 3. Pose: channels → one FK pass → world joints, foot tips and skinned vertices.
        rotations, locations = params.pose_channels()
        joints, tips, vertices = _posed(skeleton, rotations, locations, feet, bone_len)
        t = timer("pose", t)
        # 4. Render what the prior sees.
        rgba = render_as_distilled(rig, vertices, renderer, config, camera_options, config.views)  # [F·views,4,H,W]
        video = rgba[:, :3]
        t = timer("render", t)
        # 5. Losses: this process's SDS draws (each with its own generator), then the regularisers.
        reuse = bool(cached) and step % max(config.target_reuse, 1) != 0
        region = None if reuse else character_region(rgba[:, 3])
        sds_sum, sds_facts = torch.zeros((), device=device), {}
        for d in mine:
            if reuse:
                target, box = cached[d]
                sds = {"loss": multiscale_mse(crop_video(video.float(), box), target)}
            else:
                sds = _query(prior, video, text, step, config.steps, generators[d], region, sds_settings)
                target, box = sds.pop("target_video", None), sds.pop("target_box", None)
                if target is not None and config.target_reuse > 1:
                    cached[d] = (target, (0, 0, *video.shape[-2:]) if box is None else tuple(int(v) for v in box))
            sds_sum = sds_sum + sds["loss"].float().to(device)
            for k, v in sds.items():
                if k != "loss" and v.numel() == 1:
                    sds_facts[f"sds_{k}"] = sds_facts.get(f"sds_{k}", 0.0) + float(v) / draws
        t = timer("prior", t)
        terms = {"sds": sds_sum / draws}
        if weights["smooth"]:
            terms["smooth"] = smoothness_loss(joints, scale)
        if weights["ground"]:
            terms["ground"] = ground_penetration_loss(vertices, ground, scale)
        if weights["skate"]:
            terms["skate"] = foot_skate_loss(tips, ground, scale)
        if weights["limits"]:
            terms["limits"] = joint_limit_loss(rotations, limits, limit_bones)
        if weights["loop"]:
            terms["loop"] = loop_loss(rotations, joints, scale)
        regularisers = sum(weights[k] * v for k, v in terms.items() if k != "sds")
        # 6. Backward (this rank's share: its draws, 1/N of the regularisers), gradients summed over ranks, update.
        optimiser.zero_grad(set_to_none=True)
        (config.w_sds * terms["sds"] + regularisers / world_size).backward()
        parallel.sum_gradients([params.rotvec, params.root_offset])
        t = timer("backward", t)
        # 7. The step's figures over all draws (one process: exactly its own).
        summed = parallel.sum_values({"sds": float(terms["sds"].detach()), **sds_facts}, device)
        record = {k: float(v.detach()) for k, v in terms.items()} | {"sds": summed.pop("sds")}
        total = config.w_sds * torch.tensor(record["sds"], dtype=torch.float32) + torch.as_tensor(regularisers).detach().cpu()
        record["total"] = float(total)
        record |= summed
        _check_finite(step, record)
        for p in (params.rotvec, params.root_offset):
            if p.grad is not None and not torch.isfinite(p.grad).all():
                raise NumericalError(f"distillation diverged at step {step}: non-finite gradient on the motion parameters")
        optimiser.step()
        timer("optimiser", t)
        history.append(record)
        done = step + 1
        if callbacks.progress is not None:
            elapsed = time.perf_counter() - loop_start
            eta = elapsed / done * (config.steps - done)
            callbacks.progress(DistillProgress(done, config.steps, record, eta, "steps", f"step {done}/{config.steps}"))
        if callbacks.preview is not None and config.preview_every and done % config.preview_every == 0 and done < config.steps:
            callbacks.preview(params.to_clip(), done)

    clip = params.to_clip()
    if callbacks.preview is not None and config.preview_every:
        callbacks.preview(clip, config.steps)
    return DistillResult(
        clip=clip,
        history=history,
        seconds=time.perf_counter() - t_start,
        timings=dict(timer.totals),
        config=config,
        prior_name=str(getattr(prior, "name", "")),
        extra=extra,
    )
