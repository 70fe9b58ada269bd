"""One distillation job as plain data, run on a worker thread that never touches Blender.

This module must not import ``bpy`` (directly or through anything it imports at module level;
``tests/blender/test_operators.py`` imports it with ``bpy`` blocked). The seam:

1. main thread: snapshot the scene into a :class:`JobSpec` (a RigAsset and plain settings);
2. worker thread (or the caller's thread in background mode): :func:`run_job` loads the video prior
   (cached between jobs, :func:`free_gpu_memory` drops it), distils, optionally grounds with physics,
   and reports through a :class:`queue.Queue` of messages: :class:`Progress`, :class:`Preview`, and
   exactly one terminal message, :class:`Done`, :class:`Failed` or :class:`Stopped`;
3. main thread: :func:`drain` empties the queue (keeping only the newest progress/preview) and the
   operator applies the messages to Blender.

torch and the core modules are imported inside functions, so that registering the add-on and
drawing its panel work in a Blender whose Python has no torch.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import AkdError, Cancelled

__all__ = [
    "JobSpec",
    "JobOutcome",
    "Progress",
    "Preview",
    "Done",
    "Failed",
    "Stopped",
    "Message",
    "Worker",
    "run_job",
    "drain",
    "resolve_device",
    "get_prior",
    "free_gpu_memory",
]


@dataclass(frozen=True)
class JobSpec:
    """Everything a distillation job needs, copied out of Blender on the main thread.

    Attributes:
        rig: the character (``akd_blender.core.rig.RigAsset``), numpy only.
        prompt: what the character should do.
        model: ``"tiny"`` (embedded teacher), a local diffusers folder or a hub id.
        frames: number of frames F (≥ 2; None: the DistillConfig default); the clip covers
            ``frame_start … frame_start + F - 1``.
        frame_start: Blender frame number of the first frame.
        fps: frames per second of the motion.
        steps: optimisation steps (None: the DistillConfig default).
        seed: random seed.
        device: ``"auto"``, ``"cpu"`` or ``"cuda"`` (``auto`` picks CUDA when available).
        height, width: render size in pixels the prior sees (None: DistillConfig default).
        negative_prompt, camera, start, loop, cfg_scale: passed to DistillConfig when it has them.
        physics: ground the result with MuJoCo (``core.physics.ground_clip``) after distilling.
        preview_every: send a :class:`Preview` every N steps (0: never).
        init_pose: the pose the motion starts from (a MotionClip, first frame used; the armature's
            current pose), or None for the rest pose.
    """

    rig: Any
    prompt: str
    model: str = "tiny"
    frames: int | None = None
    frame_start: int = 1
    fps: float = 24.0
    steps: int | None = None
    seed: int = 0
    device: str = "auto"
    height: int | None = None
    width: int | None = None
    negative_prompt: str = ""
    camera: str | None = None
    start: str | None = None
    loop: bool = False
    cfg_scale: float | None = None
    physics: bool = False
    preview_every: int = 0
    init_pose: Any = None


@dataclass
class JobOutcome:
    """What a finished job hands back: the motion and what the report needs.

    Attributes:
        clip: the final MotionClip (grounded when physics ran).
        distilled: the clip before physics (same as ``clip`` without physics).
        history: per-step dicts from the distillation (losses, …).
        final_losses: the last step's losses {name: float}.
        seconds: wall time of the whole job (prior loading, distillation, physics).
        timings: named durations in seconds (``load_prior``, ``distill``, ``physics`` …).
        device: the device actually used (``"cpu"``, ``"cuda"``).
        physics: metrics before/after grounding, or None.
        config: the DistillConfig actually used, as a dict (steps, frames, height, width, …).
        facts: plain facts from the distillation (``DistillResult.extra``: the prompt as the model
            understood it, the sample-then-fit start's search figures).
    """

    clip: Any
    distilled: Any
    history: list[dict] = field(default_factory=list)
    final_losses: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    device: str = "cpu"
    physics: dict | None = None
    config: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    """Step ``step`` of ``total`` done; ``losses`` {name: float}; ``eta_seconds`` (None: unknown)."""

    step: int
    total: int
    losses: dict[str, float]
    eta_seconds: float | None = None


@dataclass(frozen=True)
class Preview:
    """The motion as it stands after ``step`` steps (a MotionClip)."""

    clip: Any
    step: int


@dataclass(frozen=True)
class Done:
    """The job finished; ``outcome`` is a :class:`JobOutcome`."""

    outcome: JobOutcome


@dataclass(frozen=True)
class Failed:
    """The job failed: one line for the user and the CLI exit code (2 input, 3 model, 1 internal)."""

    message: str
    exit_code: int = 1
    details: str = ""


@dataclass(frozen=True)
class Stopped:
    """The job was cancelled before it finished; nothing is to be written."""

    step: int = 0


Message = Progress | Preview | Done | Failed | Stopped
TERMINAL = (Done, Failed, Stopped)


# --- the prior cache -------------------------------------------------------------------------

_PRIORS: dict[tuple[str, str], Any] = {}
_PRIORS_LOCK = threading.Lock()


def resolve_device(device: str) -> str:
    """``"auto"`` → ``"cuda"`` when torch sees a CUDA GPU, else ``"cpu"``; others pass through."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def get_prior(model: str, device: str) -> Any:
    """The video prior for ``model`` on ``device``, loaded once and kept for the next job.

    Raises ``ModelNotAvailable`` (exit 3) when it cannot be found. Only one prior is kept: loading
    another frees the previous one first, so GPU memory holds at most one model.
    """
    key = (model, device)
    with _PRIORS_LOCK:
        if key in _PRIORS:
            return _PRIORS[key]
    free_gpu_memory()
    from ..core.priors import load_prior

    prior = load_prior(model, device=device)
    with _PRIORS_LOCK:
        _PRIORS[key] = prior
    return prior


def cached_priors() -> list[tuple[str, str]]:
    """(model, device) of the priors held in memory."""
    with _PRIORS_LOCK:
        return list(_PRIORS)


def free_gpu_memory() -> int:
    """Drop every cached prior (``prior.free()``) and empty torch's CUDA cache. Returns how many."""
    with _PRIORS_LOCK:
        priors = list(_PRIORS.values())
        _PRIORS.clear()
    for prior in priors:
        free = getattr(prior, "free", None)
        if callable(free):
            free()
    import gc
    import sys

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
    return len(priors)


# --- the job ---------------------------------------------------------------------------------


def distill_config(spec: JobSpec, device: str) -> Any:
    """A ``core.distill.DistillConfig`` from ``spec``; options left at None keep the config's default."""
    from ..core.distill import DistillConfig

    wanted = {
        "frames": spec.frames,
        "frame_start": spec.frame_start,
        "fps": spec.fps,
        "seed": spec.seed,
        "device": device,
        "loop": spec.loop,
        "negative_prompt": spec.negative_prompt,
        "preview_every": spec.preview_every,
        "steps": spec.steps,
        "height": spec.height,
        "width": spec.width,
        "camera": spec.camera,
        "start": spec.start,
        "cfg_scale": spec.cfg_scale,
    }
    kwargs = {k: v for k, v in wanted.items() if v is not None}
    return DistillConfig(**kwargs)


def run_job(
    spec: JobSpec,
    post: Callable[[Message], None],
    should_cancel: Callable[[], bool] | None = None,
) -> Message:
    """Run one job, posting :class:`Progress` / :class:`Preview` and then one terminal message.

    Never raises: errors become :class:`Failed` (exit code from ``AkdError.exit_code``, 1 for
    anything else, with the traceback in ``details``), cancellation becomes :class:`Stopped`.
    Returns the terminal message it posted. Touches no Blender data.
    """
    try:
        outcome = _run(spec, post, should_cancel or (lambda: False))
        message: Message = Done(outcome)
    except Cancelled as exc:
        message = Stopped(step=getattr(exc, "step", 0))
    except AkdError as exc:
        message = Failed(_one_line(exc), exc.exit_code)
    except Exception as exc:  # an internal error: one line for the user, the traceback for logs
        message = Failed(f"internal error: {_one_line(exc)}", 1, traceback.format_exc())
    post(message)
    return message


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _run(spec: JobSpec, post: Callable[[Message], None], should_cancel: Callable[[], bool]) -> JobOutcome:
    from ..core.distill import DistillCallbacks, distill

    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    device = resolve_device(spec.device)
    config = distill_config(spec, device)
    if should_cancel():
        raise Cancelled("cancelled before the job started")
    prior = get_prior(spec.model, device)
    timings["load_prior"] = time.perf_counter() - t0

    def on_progress(p) -> None:
        losses = {k: float(v) for k, v in (p.losses or {}).items()}
        post(Progress(int(p.step), int(p.total), losses, p.eta_seconds))

    def on_preview(clip, step: int) -> None:
        post(Preview(_placed(clip, spec), int(step)))

    callbacks = DistillCallbacks(progress=on_progress, preview=on_preview, should_cancel=should_cancel)
    t1 = time.perf_counter()
    result = distill(spec.rig, spec.prompt, config, prior=prior, callbacks=callbacks, init_pose=spec.init_pose)
    timings["distill"] = time.perf_counter() - t1
    timings.update({f"distill.{k}": float(v) for k, v in result.timings.items()})
    clip = _placed(result.clip, spec)
    history = list(result.history or [])
    final = {k: float(v) for k, v in history[-1].items() if isinstance(v, int | float)} if history else {}

    distilled, physics = clip, None
    if spec.physics:
        if should_cancel():
            raise Cancelled("cancelled before physics")
        from ..core.physics import ground_clip

        t2 = time.perf_counter()
        grounded = ground_clip(spec.rig, clip, callbacks=_PhysicsCallbacks(should_cancel))
        timings["physics"] = time.perf_counter() - t2
        clip = _placed(grounded.clip, spec)
        physics = {"before": _plain(grounded.metrics_before), "after": _plain(grounded.metrics_after)}
    used = result.config.as_dict()  # as resolved by distill (frames, size from the prior)
    return JobOutcome(
        clip, distilled, history, final, time.perf_counter() - t0, timings, device, physics, used, dict(result.extra)
    )


class _PhysicsCallbacks:
    """What ``core.physics.ground_clip`` calls: progress (unused here) and the cancel check."""

    def __init__(self, should_cancel: Callable[[], bool]) -> None:
        self.should_cancel = should_cancel

    def progress(self, step: int, total: int, **info) -> None:
        pass


def _placed(clip: Any, spec: JobSpec) -> Any:
    """``clip`` starting at ``spec.frame_start`` with ``spec.fps`` (the loop counts from 0)."""
    if clip.frame_start == spec.frame_start and clip.fps == spec.fps:
        return clip
    return type(clip)(clip.bone_names, float(spec.fps), int(spec.frame_start), clip.rotations, clip.locations)


def _plain(metrics: Any) -> Any:
    """Metrics as JSON-ready floats/dicts."""
    if isinstance(metrics, dict):
        return {str(k): _plain(v) for k, v in metrics.items()}
    try:
        return float(metrics)
    except (TypeError, ValueError):
        return str(metrics)


# --- thread and queue ------------------------------------------------------------------------


class Worker:
    """Runs :func:`run_job` on a daemon thread; messages arrive in :attr:`queue`.

    ``cancel()`` asks the job to stop at its next step; the worker then posts :class:`Stopped` and
    frees GPU memory. ``run_sync()`` runs the same job on the calling thread (background mode).
    """

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec
        self.queue: queue.Queue[Message] = queue.Queue()
        self.cancel_event = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._target, name="akd-distill", daemon=True)
        self.thread.start()

    def run_sync(self) -> Message:
        """Run on this thread; the messages are in :attr:`queue` afterwards. Returns the terminal one."""
        return self._target()

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    def _target(self) -> Message:
        message = run_job(self.spec, self.queue.put, self.cancel_event.is_set)
        if isinstance(message, Stopped | Failed):
            free_gpu_memory()
        return message


def drain(q: queue.Queue) -> list[Message]:
    """Everything waiting in ``q``, without blocking: only the newest :class:`Progress` and the
    newest :class:`Preview` are kept (older ones are stale), terminal messages always, in order."""
    items: list[Message] = []
    while True:
        try:
            items.append(q.get_nowait())
        except queue.Empty:
            break
    last_progress = max((i for i, m in enumerate(items) if isinstance(m, Progress)), default=-1)
    last_preview = max((i for i, m in enumerate(items) if isinstance(m, Preview)), default=-1)
    return [m for i, m in enumerate(items) if isinstance(m, TERMINAL) or i in (last_progress, last_preview)]
