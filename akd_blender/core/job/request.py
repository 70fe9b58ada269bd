"""One job, as the command line, the panel and the benchmarks hand it to the core, and what comes back.

:class:`JobRequest` is plain data copied out of Blender on the main thread (a RigAsset, the prompt,
the starting pose, the model, a :class:`~akd_blender.core.settings.DistillConfig`, physics on/off);
:func:`run_request` loads the prior (cached, :mod:`akd_blender.core.job.model_cache`), distils, optionally grounds the
motion with MuJoCo and returns a :class:`JobResult`. The thread and queue around it are in
:mod:`akd_blender.core.job.worker`. Imports no torch at module level (the panel imports this module in
a Blender whose Python may have no torch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InputError
from ..progress import Callbacks
from ..settings import DistillConfig

__all__ = [
    "JobRequest",
    "JobResult",
    "run_request",
    "action_name",
    "plain_data",
    "job_warnings",
]


@dataclass(frozen=True)
class JobRequest:
    """Everything a distillation job needs, as plain data.

    Attributes:
        rig: the character (:class:`~akd_blender.core.character.rig.RigAsset`), numpy only.
        prompt: what the character should do (not empty).
        config: the distillation settings; ``config.frame_start`` and ``config.fps`` place the clip on
            Blender's timeline, ``config.device`` says where it runs ("auto": CUDA when available).
        model: ``"tiny"`` (embedded teacher), a local diffusers folder or a hub id.
        init_pose: the pose the motion starts from (a MotionClip, first frame used: the armature's
            current pose), or None for the rest pose.
        physics: ground the distilled motion with MuJoCo (``core.physics.ground_clip``) afterwards.
    """

    rig: Any
    prompt: str
    config: DistillConfig = field(default_factory=DistillConfig)
    model: str = "tiny"
    init_pose: Any = None
    physics: bool = False

    def validate(self) -> None:
        """InputError naming the problem: an empty prompt, or a bad setting (:meth:`DistillConfig.validate`)."""
        if not self.prompt or not self.prompt.strip():
            raise InputError("the prompt is empty: describe the motion, e.g. 'a fox trots forward'")
        self.config.validate()


@dataclass
class JobResult:
    """What a finished job hands back.

    Attributes:
        clip: the final MotionClip (grounded when physics ran), placed at ``config.frame_start``.
        distilled: the clip before physics (``clip`` itself without physics).
        history: per-step loss dicts of the distillation {name: float}.
        seconds: wall time of the whole job (prior loading, distillation, physics).
        timings: seconds per phase: ``load_prior``, ``distill``, ``distill.<phase>`` (the loop's own),
            ``physics``.
        device: the device used ("cpu", "cuda").
        config: the DistillConfig as the loop resolved it (steps, frames, sizes decided from the prior).
        facts: plain facts from the distillation (the prompt as the model understood it, the
            sample-then-fit start's search figures: ``DistillResult.extra``).
        physics: {"before": metrics, "after": metrics} of the grounding, or None.
    """

    clip: Any
    distilled: Any
    history: list[dict[str, float]]
    seconds: float
    timings: dict[str, float]
    device: str
    config: DistillConfig
    facts: dict = field(default_factory=dict)
    physics: dict | None = None

    @property
    def final_losses(self) -> dict[str, float]:
        """The last step's losses {name: float} ({} without steps)."""
        return {k: float(v) for k, v in self.history[-1].items()} if self.history else {}

    def report(self) -> dict:
        """The job's part of a JSON report: device, frames, steps, final_losses, loss_history,
        config (nested settings as dicts), distill (the facts), physics, timings."""
        return {
            "device": self.device,
            "frames": self.clip.num_frames,
            "steps": 0 if self.config.steps is None else int(self.config.steps),
            "final_losses": self.final_losses,
            "loss_history": [{k: float(v) for k, v in row.items()} for row in self.history],
            "config": plain_data(self.config.as_dict()),
            "distill": dict(self.facts),
            "physics": self.physics,
            "timings": dict(self.timings),
        }


def _library_only(request: JobRequest, config) -> bool:
    """Whether ``request`` is the embedded teacher's library clip alone
    (:func:`~akd_blender.core.distillation.library_reader.library_only`): then the teacher's weights are not loaded
    and :func:`~akd_blender.core.distillation.sds_loop.distill` reads the prompt as the teacher does without them."""
    from ..distillation.library_reader import library_only
    from ..distillation.plan import character_kind

    return request.model == "tiny" and library_only(config, character_kind(request.rig))


def run_request(request: JobRequest, callbacks: Callbacks | None = None, prior: Any = None) -> JobResult:
    """Run ``request``: prior (``prior``, else the cached one for ``request.model``; none for a job that
    is the embedded teacher's library clip alone), distil, ground. ``callbacks`` hear every phase in
    order: "load" (0 of 1 before the prior is loaded, 1 of 1 after), "draw", "search", "steps",
    "physics" (each simulated frame); previews are placed on the timeline (``config.frame_start``,
    ``config.fps``); a cancel is seen before and after loading, during every phase and before physics.

    Raises InputError (bad request), ModelNotAvailable, Cancelled, NumericalError. Touches no Blender data.
    """
    from ..distillation.sds_loop import distill
    from .model_cache import get_prior, resolve_device

    callbacks = callbacks or Callbacks()
    t0 = time.perf_counter()
    request.validate()
    device = resolve_device(request.config.device)
    config = replace(request.config, device=device)
    callbacks.stop_if_cancelled("cancelled before the job started")
    callbacks.report("load", 0, 1, None, f"model {request.model}")
    if prior is None and not _library_only(request, config):
        prior = get_prior(request.model, device)
    callbacks.report("load", 1, 1, 0.0, f"model {request.model}")
    callbacks.stop_if_cancelled("cancelled after loading the model")
    timings = {"load_prior": time.perf_counter() - t0}

    def on_preview(clip, step: int) -> None:
        callbacks.preview(_placed(clip, config), step)

    loop_callbacks = replace(callbacks, preview=on_preview if callbacks.preview else None)
    t1 = time.perf_counter()
    result = distill(
        request.rig, request.prompt.strip(), config, prior=prior, callbacks=loop_callbacks, init_pose=request.init_pose
    )
    timings["distill"] = time.perf_counter() - t1
    timings.update({f"distill.{k}": float(v) for k, v in result.timings.items()})
    clip = distilled = _placed(result.clip, config)
    physics = None
    if request.physics:
        callbacks.stop_if_cancelled("cancelled before physics")
        from ..motion.physics import ground_clip

        t2 = time.perf_counter()
        grounded = ground_clip(request.rig, clip, callbacks=callbacks)
        timings["physics"] = time.perf_counter() - t2
        clip = _placed(grounded.clip, config)
        physics = {"before": plain_data(grounded.metrics_before), "after": plain_data(grounded.metrics_after)}
    history = [{k: float(v) for k, v in row.items() if isinstance(v, int | float)} for row in result.history]
    return JobResult(
        clip, distilled, history, time.perf_counter() - t0, timings, device, result.config, dict(result.extra), physics
    )


def _placed(clip: Any, config: DistillConfig) -> Any:
    """``clip`` starting at ``config.frame_start`` with ``config.fps``."""
    if clip.frame_start == config.frame_start and clip.fps == config.fps:
        return clip
    return type(clip)(clip.bone_names, float(config.fps), int(config.frame_start), clip.rotations, clip.locations)


def plain_data(value: Any) -> Any:
    """Metrics and settings as JSON-ready values (dicts, lists, floats, strings, None, bools, ints)."""
    if isinstance(value, dict):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def action_name(prompt: str, limit: int = 63) -> str:
    """The new action's name: the prompt, whitespace collapsed, cut to Blender's 63-byte limit."""
    name = " ".join(prompt.split()) or "AKD motion"
    while len(name.encode("utf-8")) > limit:
        name = name[:-2] + "…"
    return name


def job_warnings(rig: Any, metrics: dict[str, float], facts: dict) -> list[str]:
    """A job's warnings, one line each: the rig's (``rig.warnings``, what the mirror does not reproduce),
    then where the bone names state the other sides from those the body shows (``facts["side_names"]``,
    :func:`~akd_blender.core.character.roles.sides.side_name_warning`), then, when the prompt matched no
    known motion well enough, or another kind's motion better (``facts["other_kind"]``), and the job went ahead with the nearest (``facts["understood"]`` False), a
    line saying so, then
    :func:`~akd_blender.core.motion.metrics.motion_warnings` of ``metrics`` (:func:`motion_metrics` of the
    final clip) against the thresholds of the motion the model understood (``facts["motion"]``, None
    when the model names none)."""
    from ..motion.metrics import motion_thresholds, motion_warnings

    nearest = []
    if facts.get("understood") is False and facts.get("other_kind"):
        nearest.append(
            f"the prompt asks for {facts['other_kind']} (similarity {float(facts['other_kind_similarity']):.2f}), another "
            f"kind of character's motion: went ahead with this character's nearest, {facts['motion']}"
        )
    elif facts.get("understood") is False:
        nearest.append(
            f"the prompt matches no known motion well enough (similarity {float(facts['similarity']):.2f}, "
            f"needs {float(facts['threshold']):.2f}): went ahead with the nearest, {facts['motion']}"
        )
    sides = [str(facts["side_names"])] if facts.get("side_names") else []
    return [*rig.warnings, *sides, *nearest, *motion_warnings(metrics, motion_thresholds(facts.get("motion")))]
