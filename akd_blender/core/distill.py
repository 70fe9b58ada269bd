"""The SDS distillation loop: a prompt and a rig → a MotionClip.

One step::

    MotionParams ──pose_channels──▶ Skeleton (FK + LBS) ──▶ vertices [F,V,3] (world)
        ──Renderer──▶ video [F,3,H,W] ──prior.sds_loss──▶ SDS loss
    total = w_sds·SDS + w_smooth·smoothness + w_ground·penetration + w_skate·foot skate
            + w_limits·joint limits (+ w_loop·loop)
    Adam on the motion parameters only (rotation offsets per key and bone, root path).

Deterministic on CPU for a seed (noise and timesteps come from one seeded generator).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np
import torch

from .errors import AkdError, Cancelled, InputError
from .kinematics import Skeleton
from .losses import foot_joints, foot_skate_loss, ground_penetration_loss, joint_limit_loss, loop_loss, smoothness_loss
from .motion import MotionClip, MotionParams
from .priors.base import character_region, crop_video, multiscale_mse
from .rig import RigAsset

START_MODES: tuple[str, ...] = ("auto", "pose", "sample")

__all__ = [
    "START_MODES",
    "resolve_start",
    "DistillConfig",
    "DistillProgress",
    "DistillCallbacks",
    "DistillResult",
    "NumericalError",
    "distill",
]


class NumericalError(AkdError):
    """The optimisation produced NaN/Inf (exit 1); the message names the step and the loss term."""


@dataclass
class DistillConfig:
    """Settings of one distillation (defaults suit the embedded teacher on a CPU).

    Video and schedule:
        steps: optimiser steps (None → 0 after a drawn video, i.e. the fitted drawing as it is, and 200
            from a pose; 0 needs start "sample").
        frames: clip length in frames (None → the prior's clip duration at ``fps``: the embedded
            teacher's 16 frames at 8 fps become 48 frames at 24 fps; a prior that states no fps gives
            its own frame count); fps: frames per second (24.0); frame_start: first Blender frame (1).
        height, width: render size in pixels (None → the prior's own size: 32 × 32 for the embedded
            teacher, 480 × 720 for CogVideoX, 480 × 832 for Wan; priors pad/round what they get).
        seed: random seed (0). device: "auto" (CUDA when available), "cpu" or "cuda".
    Start (how the motion is first decided):
        start: "auto" (default: "sample" when the prior can draw, i.e. has ``sample`` like the
            embedded teacher, else "pose"), "pose" (hold the starting pose and let SDS move it) or
            "sample" (the prior draws a video for the prompt,
            :func:`~akd_blender.core.pose_search.search_poses` fits the rig's pose to each of its frames
            without gradients, and SDS steps, if any, refine from there).
        sample_guidance: CFG scale of that drawing (3.0); sample_steps: its DDIM steps (30).
        search_scales: the search's candidate angles per sweep, radians, coarse to fine.
        search_supersample: supersampling of the search's renders (2; the loop's own is 4 at 32 px).
        search_smooth: Gaussian smoothing of the searched poses over the drawn video's frames, in
            frames (0.75; 0 = none): calms the frame-to-frame jitter of the search's discrete choices.
    Motion parameters:
        keys: temporal keys interpolated over the frames (None → every other frame, at least 2);
            fewer keys = smoother, lower-dimensional motion. interpolation: "cubic" or "linear".
        lr: Adam learning rate of the rotation offsets, radians (0.03).
        root_lr: Adam learning rate of the root path, in character heights (0.01).
    SDS (see :class:`akd_blender.core.priors.SDSSettings`):
        cfg_scale: classifier-free guidance (2.0; the spike's most faithful value with target form).
        sds_mode: "target" (regress onto the model's detached clean prediction) or "score" (classic).
        target_space: "pixel" (target mode: multi-scale image loss against the decoded target video;
            no VAE encoder backward pass; the loop hands the prior the character's pixel box so a
            latent-video prior decodes the target only around it; default) or "latent".
        t_min, t_max, t_max_end: timestep range (fractions), t_max annealed linearly to t_max_end.
        grad_clip: elementwise clip of the latent SDS gradient (1.0).
        negative_prompt: text for the unconditional branch ("").
        target_reuse: with sds_mode "target" and target_space "pixel", query the prior every N steps
            and regress the render onto the same decoded target video in between (1 = every step);
            amortises the teacher over N cheap render-only steps (4; priors that return no decoded
            target are queried every step).
    Rendering:
        camera: "follow" (default), "fixed" or "orbit"; views: cameras per frame (1);
        render_backend: "auto", "torch" or "nvdiffrast".
        supersample: render at this multiple of height × width and area-downsample what the prior
            sees (None → 4 for videos of at most 64 pixels, else 1). Small renders alias: without it
            the image loss is so rough in the joint angles that a step along its gradient raises it.
    Regulariser weights (lengths in character heights, angles in radians; 0 disables):
        w_sds (1.0), w_smooth (1.0, joint acceleration), w_ground (10.0, penetration depth²),
        w_skate (1.0, planted-foot sliding), w_limits (1.0, Limit Rotation excess²),
        loop (False) with w_loop (1.0): first frame = last frame.
    Reporting:
        preview_every: call the preview callback every N steps (25; 0 = never) and at the end.
    """

    steps: int | None = None
    frames: int | None = None
    fps: float = 24.0
    frame_start: int = 1
    height: int | None = None
    width: int | None = None
    seed: int = 0
    device: str = "auto"
    start: str = "auto"
    sample_guidance: float = 3.0
    sample_steps: int = 30
    search_scales: tuple[float, ...] = (2.4, 1.6, 1.0, 0.6, 0.3, 0.15)
    search_supersample: int = 2
    search_smooth: float = 0.75
    keys: int | None = None
    interpolation: str = "cubic"
    lr: float = 0.03
    root_lr: float = 0.01
    cfg_scale: float = 2.0
    sds_mode: str = "target"
    target_space: str = "pixel"
    t_min: float = 0.02
    t_max: float = 0.98
    t_max_end: float | None = 0.5
    grad_clip: float | None = 1.0
    negative_prompt: str = ""
    target_reuse: int = 4
    camera: str = "follow"
    views: int = 1
    render_backend: str = "auto"
    supersample: int | None = None
    w_sds: float = 1.0
    w_smooth: float = 1.0
    w_ground: float = 10.0
    w_skate: float = 1.0
    w_limits: float = 1.0
    loop: bool = False
    w_loop: float = 1.0
    preview_every: int = 25

    def validate(self) -> None:
        """InputError naming the first bad field."""
        if (self.steps or 0) < 0 or (self.frames or 2) < 2 or (self.height or 8) < 8 or (self.width or 8) < 8:
            raise InputError(
                f"distill: need steps >= 0, frames >= 2 and a render of at least 8x8 "
                f"(got steps={self.steps}, frames={self.frames}, {self.height}x{self.width})"
            )
        if self.steps == 0 and self.start == "pose":
            raise InputError("distill: steps 0 needs start 'sample' (from the current pose, only the steps move the motion)")
        if self.device not in ("auto", "cpu", "cuda") and not self.device.startswith("cuda:"):
            raise InputError(f"distill: device must be auto, cpu or cuda, not {self.device!r}")
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise InputError("distill: device 'cuda' requested but no CUDA device is available")
        if self.sds_mode not in ("score", "target"):
            raise InputError(f"distill: sds_mode must be 'score' or 'target', not {self.sds_mode!r}")
        if self.start not in START_MODES:
            raise InputError(f"distill: start must be auto, pose or sample, not {self.start!r}")
        if self.camera not in ("follow", "fixed", "orbit"):
            raise InputError(f"distill: camera must be follow, fixed or orbit, not {self.camera!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise InputError(f"distill: lr must be a positive number, not {self.lr}")

    def resolved_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class DistillProgress:
    """One progress report: ``step`` (1-based, done), ``total``, ``losses`` (name → float), ``eta_seconds``."""

    step: int
    total: int
    losses: dict[str, float]
    eta_seconds: float


@dataclass
class DistillCallbacks:
    """Hooks called from the loop (on the thread running it).

    progress: after every step. preview: (current MotionClip, step) every ``preview_every`` steps and
    at the end. should_cancel: checked before every step; True → :class:`Cancelled`.
    """

    progress: Callable[[DistillProgress], None] | None = None
    preview: Callable[[MotionClip, int], None] | None = None
    should_cancel: Callable[[], bool] | None = None


@dataclass
class DistillResult:
    """``clip``: the distilled motion; ``history``: per-step losses; ``seconds``: wall time;
    ``timings``: seconds per phase (setup, text, sample_and_search, pose, render, prior, backward,
    optimiser); ``config``: the settings used; ``extra``: plain facts for the report — what the prior
    understood the prompt as (the embedded teacher: ``understood_as``, ``motion``, ``similarity``) and the
    sample-then-fit start's figures (search_error_start / search_error per frame, search_renders,
    sample_frames)."""

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


def _held_pose(rig: RigAsset, pose: MotionClip, config: DistillConfig) -> MotionClip:
    """The first frame of ``pose`` held for ``config.frames`` frames (InputError if it is another rig's)."""
    if not pose.matches(rig):
        raise InputError(f"distill: the starting pose is for other bones than armature '{rig.name}'")
    rotations = np.repeat(pose.rotations[:1], config.frames, axis=0)
    locations = np.repeat(pose.locations[:1], config.frames, axis=0)
    return MotionClip(rig.bone_names, config.fps, config.frame_start, rotations, locations)


def resolve_start(config: DistillConfig, prior) -> DistillConfig:
    """``config`` with ``start`` ("auto" → "sample" if ``prior`` can draw, else "pose") and ``steps``
    (None → 0 after a drawn video, 200 from a pose) decided. InputError: "sample" with a prior that
    cannot draw, or 0 steps from a pose."""
    can_draw = callable(getattr(prior, "sample", None))
    start = ("sample" if can_draw else "pose") if config.start == "auto" else config.start
    if start == "sample" and not can_draw:
        raise InputError(f"distill: start 'sample' needs a prior that can draw videos; '{getattr(prior, 'name', prior)}' cannot")
    steps = (0 if start == "sample" else 200) if config.steps is None else config.steps
    if steps == 0 and start == "pose":
        raise InputError(f"distill: steps 0 needs start 'sample'; '{getattr(prior, 'name', prior)}' cannot draw")
    return replace(config, start=start, steps=steps)


@torch.no_grad()
def _start_from_sample(
    rig: RigAsset, prior, text, generator, config: DistillConfig, params: MotionParams, camera_options: dict, style
) -> dict:
    """Sample-then-fit start: the prior draws a video for the prompt, the pose search fits each of its
    frames, and the fitted per-frame offsets become ``params``' keys (in place). Returns figures for
    the report (image error per frame before / after, renders, the drawn video's frame count)."""
    from .pose_search import SearchConfig, keys_from_frames, search_poses, smooth_frames
    from .render import Renderer, make_cameras

    device = params.rotvec.device
    video = prior.sample(text, generator=generator, guidance=config.sample_guidance, steps=config.sample_steps)
    video = video.to(device, torch.float32)  # [Fp,3,h,w] in [0,1]
    if video.shape[-2:] != (config.height, config.width):
        video = torch.nn.functional.interpolate(video, size=(config.height, config.width), mode="area")
    frames = video.shape[0]
    ss = max(1, min(config.search_supersample, config.supersample))
    size = (config.height * ss, config.width * ss)
    renderer = Renderer(rig, *size, backend=config.render_backend, device=device, style=style)
    result = search_poses(
        rig,
        video,
        params.base_rotations[:1].expand(frames, -1, -1),
        params.base_locations[:1].expand(frames, -1, -1),
        renderer,
        lambda path: make_cameras(rig, path, *size, mode=config.camera, **camera_options),
        ss,
        SearchConfig(scales=tuple(config.search_scales)),
    )
    keys = params.rotvec.shape[0]
    rotvec = smooth_frames(result.rotvec, config.search_smooth)
    root = smooth_frames(result.lift, config.search_smooth) + result.travel  # the steady travel is kept as is
    params.rotvec.copy_(keys_from_frames(rotvec, keys, config.interpolation) * params.axis_mask)
    params.root_offset.copy_(keys_from_frames(root, keys, config.interpolation))
    return {
        "sample_frames": frames,
        "search_error_start": float(result.start_errors.mean()),
        "search_error": float(result.errors.mean()),
        "search_renders": result.renders,
    }


def resolve_sizes(config: DistillConfig, prior) -> DistillConfig:
    """``config`` with ``frames``, ``height`` and ``width`` filled in from the prior where None."""
    frames = config.frames
    if frames is None:
        native = int(getattr(prior, "frames", 16) or 16)
        prior_fps = getattr(prior, "fps", None)
        frames = max(2, round(native * config.fps / prior_fps)) if prior_fps else native
    height = config.height or int(getattr(prior, "height", 64) or 64)
    width = config.width or int(getattr(prior, "width", 64) or 64)
    supersample = config.supersample or (4 if max(height, width) <= 64 else 1)
    return replace(config, frames=frames, height=height, width=width, supersample=supersample)


def _configure_prior(prior, config: DistillConfig) -> None:
    """Hand the SDS switches to priors that expose ``settings`` (SDSSettings)."""
    from .priors.base import SDSSettings

    settings = getattr(prior, "settings", None)
    if isinstance(settings, SDSSettings):
        prior.settings = replace(
            settings,
            cfg_scale=config.cfg_scale,
            mode=config.sds_mode,
            target_space=config.target_space,
            t_min=config.t_min,
            t_max=config.t_max,
            t_max_end=config.t_max_end,
            grad_clip=config.grad_clip,
        )


def _check_finite(step: int, losses: dict[str, torch.Tensor]) -> None:
    for name, value in losses.items():
        if not torch.isfinite(value).all():
            raise NumericalError(
                f"distillation diverged at step {step}: loss '{name}' is {float(value.detach())}; try a lower learning rate or CFG scale"
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

    Raises InputError (bad config / prompt), ModelNotAvailable (prior missing), Cancelled (within one
    step of ``should_cancel`` returning True), NumericalError (NaN/Inf loss or gradient).
    """
    t_start = time.perf_counter()
    config = config or DistillConfig()
    config.validate()
    if not prompt or not prompt.strip():
        raise InputError("distill: the prompt is empty")
    callbacks = callbacks or DistillCallbacks()
    device = config.resolved_device()
    timer = _Timer(device)
    torch.manual_seed(config.seed)
    generator = torch.Generator("cpu").manual_seed(config.seed)

    # 1. Prior and text (the text embedding is computed once).
    if prior is None:
        from .priors import load_prior

        prior = load_prior("tiny", device=device)
    _configure_prior(prior, config)
    config = resolve_sizes(resolve_start(config, prior), prior)
    from .render import Renderer, make_cameras, root_path

    t = timer("setup", t_start)
    text = prior.encode_text(prompt, config.negative_prompt)
    extra = {k: v for k, v in (getattr(text, "extra", None) or {}).items() if isinstance(v, str | int | float)}
    t = timer("text", t)

    # 2. Motion, skeleton, renderer, optimiser.
    keys = config.keys or max(2, (config.frames + 1) // 2)
    base = _held_pose(rig, init_pose, config) if init_pose is not None else None
    params = MotionParams(rig, config.frames, config.fps, keys=keys, interpolation=config.interpolation, base=base).to(device)
    params.frame_start = config.frame_start
    skeleton = Skeleton(rig).to(device)
    # Priors that learnt one look (the embedded teacher) say which ground and framing they expect.
    style, camera_options = getattr(prior, "render_style", None), dict(getattr(prior, "camera_options", None) or {})
    ss = config.supersample
    renderer = Renderer(rig, config.height * ss, config.width * ss, backend=config.render_backend, device=device, style=style)
    scale = float(rig.height) or 1.0
    ground = float(rig.ground_height)
    feet = torch.as_tensor(foot_joints(rig), device=device)
    limited = np.flatnonzero(~np.isnan(rig.rotation_limits).all(axis=(1, 2)))
    limit_bones = torch.as_tensor(limited, dtype=torch.int64, device=device)
    limits = torch.as_tensor(rig.rotation_limits[limited], dtype=torch.float32, device=device)
    bone_len = torch.as_tensor(rig.lengths, dtype=torch.float32, device=device)
    world = skeleton.armature_world
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
    cached_target = cached_box = None
    t = timer("setup", t)
    if config.start == "sample":
        extra |= _start_from_sample(rig, prior, text, generator, config, params, camera_options, style)
        t = timer("sample_and_search", t)
    loop_start = time.perf_counter()

    for step in range(config.steps):
        if callbacks.should_cancel is not None and callbacks.should_cancel():
            raise Cancelled(f"distillation cancelled at step {step} of {config.steps}")
        t = time.perf_counter()
        # 3. Pose: channels → FK → world joints, foot tips and skinned vertices.
        rotations, locations = params.pose_channels()
        pose = skeleton.pose_matrices(rotations, locations)  # [F,J,4,4] armature space
        joints = pose[..., :3, 3] @ world[:3, :3].T + world[:3, 3]  # [F,J,3] world
        tips = (pose[:, feet, :3, 1] * bone_len[feet, None] + pose[:, feet, :3, 3]) @ world[:3, :3].T + world[:3, 3]
        vertices = skeleton.deform(rotations, locations)  # [F,V,3] world
        t = timer("pose", t)
        # 4. Render what the prior sees.
        cameras = make_cameras(
            rig,
            root_path(vertices),
            config.height * ss,
            config.width * ss,
            mode=config.camera,
            views=config.views,
            **camera_options,
        )
        rgba = renderer.render(vertices, cameras)  # [F·views,4,H·ss,W·ss]
        if ss > 1:
            rgba = torch.nn.functional.avg_pool2d(rgba, ss)  # [F·views,4,H,W], antialiased
        video = rgba[:, :3]
        t = timer("render", t)
        # 5. Losses.
        if cached_target is not None and step % max(config.target_reuse, 1):
            sds = {"loss": multiscale_mse(crop_video(video.float(), cached_box), cached_target)}
        else:
            # The character's box lets a latent-video prior decode its target only there (SDSPrior.crop_context).
            sds = prior.sds_loss(video, text, step, config.steps, generator, region=character_region(rgba[:, 3]))
            cached_target = sds.pop("target_video", None) if config.target_reuse > 1 else None
            box = sds.pop("target_box", None)
            cached_box = (0, 0, *video.shape[-2:]) if box is None else box
        t = timer("prior", t)
        terms = {"sds": sds["loss"].float().to(device)}
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
        total = config.w_sds * terms["sds"] + sum(weights[k] * v for k, v in terms.items() if k != "sds")
        terms["total"] = total
        _check_finite(step, terms)
        # 6. Backward and update (motion parameters only).
        optimiser.zero_grad(set_to_none=True)
        total.backward()
        t = timer("backward", t)
        for p in (params.rotvec, params.root_offset):
            if p.grad is not None and not torch.isfinite(p.grad).all():
                raise NumericalError(f"distillation diverged at step {step}: non-finite gradient on the motion parameters")
        optimiser.step()
        timer("optimiser", t)
        record = {k: float(v.detach()) for k, v in terms.items()}
        record.update({f"sds_{k}": float(v) for k, v in sds.items() if k != "loss" and v.numel() == 1})
        history.append(record)
        done = step + 1
        if callbacks.progress is not None:
            elapsed = time.perf_counter() - loop_start
            callbacks.progress(DistillProgress(done, config.steps, record, elapsed / done * (config.steps - done)))
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


def config_from_dict(data: dict) -> DistillConfig:
    """A DistillConfig from a dict, ignoring unknown keys (e.g. a report's "config")."""
    names = {f.name for f in fields(DistillConfig)}
    return DistillConfig(**{k: v for k, v in data.items() if k in names})
