"""Progress and callbacks, from every stage of a job to the front ends (the panel, the CLI's bar).

One :class:`Progress` type travels the whole way: the pose search, the drawing, the SDS loop and the
physics report it through one :class:`Callbacks`, the worker thread posts it to the panel unchanged,
and the CLI's bar shows it. Phases in a job's order: "load" (the video model), "draw" (its denoising
steps), "search" (candidate clips the pose search scored), "steps" (optimiser steps), "physics"
(simulated frames), "write" (the Blender side: actions, key check, files).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import Cancelled

__all__ = ["PHASES", "Progress", "Callbacks", "eta_seconds"]

PHASES: tuple[str, ...] = ("load", "draw", "search", "steps", "physics", "write")
_NOUNS = {"draw": "drawing", "steps": "distillation"}


@dataclass(frozen=True)
class Progress:
    """``step`` (1-based, done) of ``total`` in ``phase`` (one of :data:`PHASES`); ``losses``
    {name: float} (optimiser steps only, else empty); ``eta_seconds`` left in the phase (None: not
    known yet); ``detail`` e.g. "round 2/3 · sweep 2/6 · hips"."""

    step: int
    total: int
    losses: dict[str, float] = field(default_factory=dict)
    eta_seconds: float | None = None
    phase: str = "steps"
    detail: str = ""


def eta_seconds(seconds: float, done: int, total: int) -> float | None:
    """Seconds left at the pace so far: ``seconds`` spent on ``done`` of ``total`` (None before any)."""
    return seconds / done * (total - done) if done > 0 else None


@dataclass
class Callbacks:
    """Hooks a job's stages call, on the thread running the job.

    ``progress(Progress)``: through every phase in order; ``preview(clip, step)``: the motion as it
    stands (a MotionClip) every ``config.preview_every`` optimiser steps and at the end;
    ``should_cancel()``: checked before and after loading, during every phase and before physics
    (True → :class:`~akd_blender.core.errors.Cancelled`)."""

    progress: Callable[[Progress], None] | None = None
    preview: Callable[[Any, int], None] | None = None
    should_cancel: Callable[[], bool] | None = None

    def report(
        self,
        phase: str,
        step: int,
        total: int,
        eta: float | None = None,
        detail: str = "",
        losses: dict[str, float] | None = None,
    ) -> None:
        """Send one :class:`Progress` (nothing when no ``progress`` hook is set)."""
        if self.progress is not None:
            self.progress(Progress(int(step), int(total), dict(losses or {}), eta, phase, detail))

    def cancelled(self) -> bool:
        """Whether the user asked to stop."""
        return self.should_cancel is not None and bool(self.should_cancel())

    def stop_if_cancelled(self, what: str) -> None:
        """Raise :class:`~akd_blender.core.errors.Cancelled` saying ``what`` was cancelled, if it was."""
        if self.cancelled():
            raise Cancelled(what)

    def counter(self, phase: str, label: str = "") -> Callable[[int, int], None]:
        """A ``done(step, total)`` hook for a loop of ``phase``: reports each step with the ETA measured
        from now and ``label`` before "step k/n", then stops the loop if the user cancelled."""
        began = time.perf_counter()

        def done(step: int, total: int) -> None:
            self.report(phase, step, total, eta_seconds(time.perf_counter() - began, step, total), f"{label}step {step}/{total}")
            self.stop_if_cancelled(f"{_NOUNS.get(phase, phase)} cancelled at step {step} of {total}")

        return done
