"""Footfalls of an uneven gait, step by step: where each foot lands and lifts when the body's path
weaves, speeds up and slows down or runs sideways, or when one leg stays down for less of the cycle
than the others (a limp), so that a planted foot never slides; and the spells when no foot is down.

Everything is a function of the gait's cycle count ``c`` ([F], cycles since the clip's start plus the
start phase; a step starts when ``c + offset`` passes a whole number). The body's path maps cycles to
its place in the body frame, ``[n,2]`` (forward, left) in armature units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .pose import smoothstep

__all__ = ["Path", "Steps", "uneven_timing", "body_path", "path_heading", "plan_steps", "flight_arc"]

Path = Callable[[np.ndarray], np.ndarray]
"""cycles [n] → the body's place [n,2]: (forward, left), armature units."""

# Two slow waves at rates that never line up with the step (per cycle): uneven steps that do not repeat.
_UNEVEN = ((0.5, 0.6, 1.3), (0.31, 0.4, 0.4))  # (rate per cycle, weight, phase)


def _wave(c: np.ndarray) -> np.ndarray:
    """[n] in [-1, 1]: the sum of the two slow waves at cycles ``c``."""
    return sum(weight * np.sin(2 * np.pi * rate * c + phase) for rate, weight, phase in _UNEVEN)


def _wave_integral(c: np.ndarray) -> np.ndarray:
    """[n] an antiderivative of :func:`_wave` (cycles)."""
    return sum(-weight * np.cos(2 * np.pi * rate * c + phase) / (2 * np.pi * rate) for rate, weight, phase in _UNEVEN)


def uneven_timing(progress: np.ndarray, timing: float) -> np.ndarray:
    """[F] cycles to add to ``progress`` [F] (cycles since the start, increasing) so the step rate
    varies by up to ``timing`` (0–1) of itself, the sum still increasing; 0 at progress 0."""
    return timing * (_wave_integral(progress) - _wave_integral(np.zeros(1)))


def body_path(rate: float, jitter: float, weave: float, weave_rate: float, sideways: int = 0) -> Path:
    """The body's path: ``rate`` armature units per cycle along its travel (forward, or to the left
    for ``sideways`` +1, the right for -1), that rate varying by up to ``jitter`` (0–1) of itself, and
    ``weave`` armature units to each side ``weave_rate`` times per cycle."""
    along = np.array([0.0, float(sideways)]) if sideways else np.array([1.0, 0.0])

    def path(c: np.ndarray) -> np.ndarray:
        c = np.asarray(c, dtype=np.float64)
        travelled = rate * (c + jitter * _wave_integral(c))
        side = weave * np.sin(2 * np.pi * weave_rate * c)
        return np.outer(travelled, along) + np.outer(side, [0.0, 1.0])

    return path


def path_heading(path: Path, c: np.ndarray) -> np.ndarray:
    """[F] the angle (radians, positive to the left) of the path's direction at cycles ``c`` from the
    forward axis."""
    step = 1e-4
    d = path(c + step) - path(c - step)
    return np.arctan2(d[:, 1], d[:, 0])


@dataclass(frozen=True)
class Steps:
    """One foot's placement per frame: ``ahead`` and ``aside`` [F] from under its hip (forward, left;
    armature units, the body's frame), ``turn`` [F] its yaw from the body's (radians, to the left:
    a planted foot keeps the heading it landed with while the body turns), ``down`` [F] whether it is
    planted, ``swing`` [F] how far through its time in the air (0–1; 0 while down), ``reach`` the
    farthest it lands or lifts from under its hip."""

    ahead: np.ndarray
    aside: np.ndarray
    turn: np.ndarray
    down: np.ndarray
    swing: np.ndarray
    reach: float


def _turned(v: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """[n,2] (forward, left) vectors turned by ``angle`` [n] radians (positive to the left)."""
    cos, sin = np.cos(angle), np.sin(angle)
    return np.stack([v[:, 0] * cos - v[:, 1] * sin, v[:, 0] * sin + v[:, 1] * cos], 1)


def plan_steps(
    c: np.ndarray,
    offset: float,
    duty: float,
    path: Path,
    overreach: float = 0.0,
    heading: Callable[[np.ndarray], np.ndarray] | None = None,
    hip: np.ndarray | None = None,
) -> Steps:
    """The footfalls of a foot stepping at ``offset`` cycles, down for ``duty`` of each cycle, under a
    body following ``path`` and turned ``heading(c)`` radians (to the left; None: never) about the
    point its hip stands ``hip`` [2] (forward, left; armature units) from. Each step lands half its
    stance's travel ahead of the hip and, while it is down, stays where it landed, the body moving
    and turning over it; in the air it goes from where it lifted to where it lands next
    (smoothstep), swinging ``overreach`` armature units further back after it lifts and further
    forward before it lands."""
    turn = heading if heading is not None else (lambda when: np.zeros(len(when)))
    hip = np.zeros(2) if hip is None else np.asarray(hip, dtype=np.float64)
    u = c + offset
    phase = u - np.floor(u)
    touch = np.floor(u) - offset  # the cycle this step's foot came down

    def landing(when: np.ndarray) -> np.ndarray:  # where the foot lands, from under its hip (body frame)
        return _turned(0.5 * (path(when + duty) - path(when)), -turn(when))

    def planted(now: np.ndarray, when: np.ndarray) -> np.ndarray:  # the foot put down at ``when``, seen at ``now``
        spot = path(when) + _turned(hip + landing(when), turn(when))
        return _turned(spot - path(now), -turn(now)) - hip

    land, following = landing(touch), landing(touch + 1.0)
    down = phase < duty
    swing = np.clip((phase - duty) / (1 - duty), 0, 1)
    lifted = planted(touch + duty, touch)
    air = lifted + (following - lifted) * smoothstep(swing)[:, None]
    air[:, 0] -= overreach * np.sin(2 * np.pi * swing)
    where = np.where(down[:, None], planted(c, touch), air)
    landed = turn(touch)
    foot_turn = np.where(down, landed - turn(c), (landed - turn(touch + duty)) * (1 - smoothstep(swing)))
    reach = float(np.max(np.linalg.norm(np.concatenate([land, following, lifted]), axis=1))) if len(c) else 0.0
    return Steps(where[:, 0], where[:, 1], foot_turn, down, np.where(down, 0.0, swing), reach)


def flight_arc(c: np.ndarray, offsets: list[float], duties: list[float], samples: int = 1000) -> np.ndarray:
    """[F] 0 → 1 → 0 (a sine arch) over each spell of the cycle when no foot is down (foot k down while
    ``(c + offsets[k]) mod 1 < duties[k]``); 0 while any is down (all zeros when one always is)."""
    grid = (np.arange(samples) + 0.5) / samples
    down = np.zeros(samples, dtype=bool)
    for offset, duty in zip(offsets, duties):
        down |= (grid + offset) % 1.0 < duty
    if down.all() or not down.any():
        return np.zeros(len(c))
    start = int(np.argmax(down))  # read the cycle from a moment a foot is down: every spell lies inside
    air = np.roll(~down, -start).astype(int)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], air, [0]])))
    arc = np.zeros(samples)
    for first, end in zip(edges[::2], edges[1::2]):
        arc[first:end] = np.sin(np.pi * (np.arange(first, end) + 0.5 - first) / (end - first))
    arc = np.roll(arc, start)
    return arc[np.minimum(((c % 1.0) * samples).astype(int), samples - 1)]
