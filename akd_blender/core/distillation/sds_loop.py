"""The SDS distillation loop: a prompt and a rig → a MotionClip.

Before the steps the motion starts from the library clip of the motion the prompt is understood as
(start "library", :mod:`~akd_blender.core.distillation.library_start`; by default whenever the prompt is read as a
motion of the rig's kind, and for the embedded teacher the whole job), the held pose, a drawn video
fitted by the pose search (start "sample") or a prompt-ranked library motion, and then goes through the redraw rounds
(``config.redraw``: the prior redraws the render of the motion from a noise level, the search fits
it; by default three from a held pose).

The steps themselves are :mod:`.sds_steps`. The settings are :class:`~akd_blender.core.settings.DistillConfig` (re-exported here); the prior gets
its SDS settings with every query and is never changed. Deterministic on CPU for a seed (noise and
timesteps come from one seeded generator).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from ..character.kinematics import Skeleton
from ..character.rig import RigAsset
from ..character.roles.sides import side_name_warning
from ..errors import InputError
from ..motion.clip import MotionClip, MotionParams
from ..progress import Callbacks
from ..prompt.reading import LibraryChoice, read_prompt
from ..prompt.understanding import Understanding, require_understood
from ..settings import START_MODES, DistillConfig, SDSSettings, SearchSettings, SettingError, config_from_dict
from ..video_models.capabilities import capabilities_of
from . import parallel
from .context import RunContext, first_frame
from .library_reader import LibraryReader, library_only
from .library_start import library_motion, write_library_start
from .plan import held_pose, resolve_sizes, resolve_start
from .sds_steps import NumericalError, Timer, optimise
from .unplayable import refuse_unplayable

__all__ = [
    "START_MODES",
    "resolve_start",
    "resolve_sizes",
    "DistillConfig",
    "SDSSettings",
    "SearchSettings",
    "config_from_dict",
    "DistillResult",
    "NumericalError",
    "distill",
]


@dataclass
class DistillResult:
    """``clip``: the distilled motion; ``history``: per-step losses; ``seconds``: wall time;
    ``timings``: seconds per phase (setup, text, sample_and_search or ranked_start, pose, render, prior,
    backward, optimiser); ``config``: the settings used; ``extra``: plain facts for the report — what the prior
    understood the prompt as (the embedded teacher: ``understood_as``, ``motion``, ``similarity``), the
    library start's ``start`` ("library"), ``library_motion`` (e.g. "walk"), ``library_variation``
    ("default" or e.g. "speed 0.8 (slowly)") and ``search_start`` (:attr:`~akd_blender.core.distillation.prompt.reading.LibraryChoice.name`), the
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


def distill(
    rig: RigAsset,
    prompt: str,
    config: DistillConfig | None = None,
    prior=None,
    callbacks: Callbacks | None = None,
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
    (:func:`~akd_blender.core.distillation.library_reader.library_only`) the teacher's
    :class:`~akd_blender.core.distillation.library_reader.LibraryReader`: the prompt is read as the teacher reads
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
    callbacks: Callbacks,
    timer: Timer,
    t_start: float,
) -> DistillResult:
    """Start "library" with no steps and no redraw rounds: the library clip played on the held pose
    is the motion (:func:`~akd_blender.core.distillation.library_start.library_motion`); nothing is rendered and the
    prior is not queried."""
    callbacks.stop_if_cancelled("distillation cancelled before the library start")
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


def _read_prompt(
    prompt: str, config: DistillConfig, prior, kind: str | None, world_size: int, timer: Timer, t: float
) -> tuple[DistillConfig, Any, LibraryChoice | None, dict]:
    """The prompt read once: the prior's text embedding, the library motion it asks for (None: not
    read as one) and the settings the reading decides (start, redraw rounds, steps, sizes; a composed
    prompt's frames). Returns (config, text, library choice, report facts). Raises
    PromptNotUnderstood where the reading requires an understood prompt and it is not."""
    capabilities = capabilities_of(prior)
    if config.start not in ("auto", "library"):  # a start that needs no reading of the prompt is checked first
        config = resolve_start(config, prior)
    t = timer("setup", t)
    if capabilities.image_conditioned or capabilities.reads_kind:
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
        read = read_prompt(prompt, kind, understanding, prior, config.allow_nearest)
        library, reading = read.choice, read.understanding
        if reading is not None and ((config.start == "library" and library is None) or reading.other_kind is not None):
            require_understood(reading, config.allow_nearest)  # names the prompt and the nearest motions
        if read.plan is not None:  # a composed prompt: read part by part
            extra |= read.facts()
            if config.frames is None:
                config = replace(config, frames=read.frames(config.fps))
        elif library is not None and reading is not None and (not reads_motions or reading.other_kind is not None):
            extra |= read.facts()
    if reads_motions and (library is None or library.plan is None):
        require_understood(understanding, config.allow_nearest)
    config = resolve_sizes(resolve_start(config, prior, library, reads_motions), prior)
    timer("text", t)
    return config, text, library, extra


def _context(
    rig: RigAsset,
    roles,
    config: DistillConfig,
    prior,
    text,
    library: LibraryChoice | None,
    init_pose: MotionClip | None,
    callbacks: Callbacks,
    generator: torch.Generator,
    device: torch.device,
) -> tuple[RunContext, dict]:
    """The run's motion parameters (on the held pose; the library clip written into them for start
    "library"), skeleton and renderer (the prior's look and framing; an image prior gets the first
    frame it animates) as one :class:`RunContext`, and the library start's report facts."""
    from ..render import Renderer

    keys = config.keys or max(2, (config.frames + 1) // 2)
    base = held_pose(rig, init_pose, config) if init_pose is not None else None
    params = MotionParams(rig, config.frames, config.fps, keys=keys, interpolation=config.interpolation, base=base).to(device)
    params.frame_start = config.frame_start
    extra = {}
    if config.start == "library":
        extra = write_library_start(rig, roles, library, params)
        parallel.broadcast_parameters([params.rotvec, params.root_offset])
    skeleton = Skeleton(rig).to(device)
    # Priors that learnt one look (the embedded teacher) say which ground and framing they expect.
    capabilities = capabilities_of(prior)
    style, camera_options = capabilities.render_style, dict(capabilities.camera_options)
    ss = config.supersample
    renderer = Renderer(rig, config.height * ss, config.width * ss, backend=config.render_backend, device=device, style=style)
    if capabilities.image_conditioned:  # draws the character it is shown
        text = replace(text, first_frame=first_frame(rig, params, skeleton, renderer, config, camera_options))
    ctx = RunContext(rig, prior, text, config, params, skeleton, renderer, camera_options, generator, callbacks)
    return ctx, extra


def _start(ctx: RunContext, timer: Timer, t: float) -> dict:
    """The drawn start (start "sample"), the prompt-ranked start or neither, then the redraw rounds,
    each written into ``ctx.params`` and shared from rank 0 (``timer`` counts each from ``t``).
    Returns their report facts."""
    config, extra = ctx.config, {}
    shared = [ctx.params.rotvec, ctx.params.root_offset]
    if config.start == "sample":
        from .drawn_start import start_from_sample

        extra |= start_from_sample(ctx)
        parallel.broadcast_parameters(shared)  # every rank steps from rank 0's fit
        t = timer("sample_and_search", t)
    elif config.ranked_start and config.start == "pose":
        if not capabilities_of(ctx.prior).ranks:
            name = str(getattr(ctx.prior, "name", ctx.prior))
            raise SettingError("ranked_start", f"needs a prior that scores videos by a prompt; '{name}' cannot")
        from .ranked_start import start_from_ranking

        extra |= start_from_ranking(ctx)
        parallel.broadcast_parameters(shared)  # every rank steps from rank 0's choice
        t = timer("ranked_start", t)
    if config.redraw.noise:
        from .drawn_start import redraw_rounds

        extra |= redraw_rounds(ctx)
        parallel.broadcast_parameters(shared)  # every rank steps from rank 0's fit
        timer("redraw", t)
    return extra


def _distill(
    rig: RigAsset,
    prompt: str,
    config: DistillConfig | None,
    prior,
    callbacks: Callbacks | None,
    init_pose: MotionClip | None,
) -> DistillResult:
    t_start = time.perf_counter()
    config = config or DistillConfig()  # validated by distill()
    if not prompt or not prompt.strip():
        raise InputError("distill: the prompt is empty")
    callbacks = callbacks or Callbacks()
    device = config.resolved_device()
    timer = Timer(device)
    torch.manual_seed(config.seed)
    rank, world_size = parallel.world()
    draws = config.draws or world_size
    if draws < world_size:
        raise SettingError("draws", f"must be at least the number of processes, {world_size} (got {draws})")
    config = replace(config, draws=draws)
    generator = parallel.draw_generator(config.seed, 0)  # the start's drawing, then SDS draw 0

    # 1. Prior and text (the text embedding is computed once), the library motion the prompt asks for.
    roles = _roles(rig)
    kind = roles.kind if roles is not None else None
    if config.start == "auto" and roles is not None:  # a body that cannot play the prompt stops before any drawing
        refuse_unplayable(prompt, roles, refuse_unknown=prior is None or capabilities_of(prior).reads_motions)
    if prior is None:
        prior = _default_prior(config, kind, device)
    config, text, library, extra = _read_prompt(prompt, config, prior, kind, world_size, timer, t_start)
    sides = side_name_warning(rig, roles) if roles is not None else None
    if sides is not None:
        extra["side_names"] = sides  # the job warns: the names state the other sides from the body's
    if config.start == "library" and config.steps == 0 and not config.redraw.noise:
        return _library_only(rig, roles, library, config, prior, extra, init_pose, callbacks, timer, t_start)
    # 2. Motion, skeleton, renderer; 3. the start; 4. the SDS steps.
    t = time.perf_counter()
    ctx, started = _context(rig, roles, config, prior, text, library, init_pose, callbacks, generator, device)
    t = timer("setup", t)
    facts = _start(ctx, timer, t)
    history = optimise(ctx, timer, rank, world_size)
    clip = ctx.params.to_clip()
    if callbacks.preview is not None and config.preview_every:
        callbacks.preview(clip, config.steps)
    return DistillResult(
        clip=clip,
        history=history,
        seconds=time.perf_counter() - t_start,
        timings=dict(timer.totals),
        config=config,
        prior_name=str(getattr(prior, "name", "")),
        extra=extra | started | facts,
    )
