"""Motion-prior starts for the pose search: the rig's own kind's library motions, played on its bone
roles, as candidate starting motions that the drawn video chooses among.

A pose search from the standing pose fits each bone by coordinate descent; at the teacher's 32 px a
leg that must swing a radian matches the drawing worse on the way, and the trunk and root path fit
themselves to the legs' errors (docs/benchmarks.md, "The fit's ceiling"). Whole-body motions of the
character's kind (walks, jumps, sits … from :mod:`akd_blender.core.motion.library`, retargeted
through :func:`~akd_blender.core.character.roles.find_roles`, with a grid of tempi, phases and directions) give
the search starting points whose limbs already move together. The candidates are scored against the
drawing by the search's own image error, **never by the prompt**: the drawing decides which motion,
if any, beats the standing pose, and the search then refines every bone from there.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, fields, replace

import numpy as np
import torch

from ..character.rig import RigAsset
from ..character.rotations import quat_multiply
from ..errors import InputError
from ..motion.clip import MotionClip
from ..motion.library.pose import location_axes

__all__ = ["PriorStart", "PRIOR_SPEEDS", "PRIOR_PHASES", "prior_starts", "starts_as_channels", "prompt_start_weights"]

PRIOR_SPEEDS: tuple[float, ...] = (0.8, 1.0, 1.25)
"""Tempi tried for each library motion (× its base tempo, the library's training range 0.8–1.25)."""

PRIOR_PHASES: int = 4
"""Start phases tried for each library motion (evenly spaced over one cycle; acyclic motions ignore
the phase, and identical clips are tried once)."""


@dataclass(frozen=True)
class PriorStart:
    """One candidate starting motion: the library ``label`` (e.g. ``"walk"``), the variation it was
    played with (speed, phase, direction) and its clip on the rig (pose channels, Blender's own)."""

    label: str
    speed: float
    phase: float
    direction: int
    clip: MotionClip

    @property
    def name(self) -> str:
        """How a report names it, e.g. ``"walk (speed 1, phase 0.25, direction 1)"``."""
        return f"{self.label} (speed {self.speed:g}, phase {self.phase:g}, direction {self.direction})"


def prior_starts(
    rig: RigAsset,
    frames: int,
    fps: float,
    speeds: tuple[float, ...] = PRIOR_SPEEDS,
    phases: int = PRIOR_PHASES,
    held: np.ndarray | None = None,
    heading: np.ndarray | None = None,
) -> list[PriorStart]:
    """The rig's kind's library motions as candidate starts, ``frames`` long at ``fps``: every motion
    of the kind its roles read as (:func:`~akd_blender.core.character.roles.find_roles`), at each of ``speeds``,
    ``phases`` start phases and both directions, at the library's base amplitude and the rig's own
    facing, each as the turns to compose on the held pose ``held`` [J,4] (channel rotations; None: the
    rest pose) whose body faces ``heading`` [3,3]
    (:func:`~akd_blender.core.motion.library.from_pose.turns_from_held`; :func:`starts_as_channels` composes them);
    duplicates (a phase or direction a motion ignores) are dropped. Empty when the rig's roles
    cannot be read or its kind has no library motions ("other"): the search then starts from the
    standing pose alone. The starts of the last :data:`STARTS_KEPT` rigs (by content, at those
    settings) are kept and returned again without playing the library (the clips are shared: read
    them, do not change them)."""
    from ..character.roles import find_roles
    from ..motion.library import motions_for

    held_key = None if held is None else np.round(np.asarray(held, dtype=np.float64), 9).tobytes()
    heading_key = None if heading is None else np.round(np.asarray(heading, dtype=np.float64), 9).tobytes()
    cache_key = (_rig_digest(rig), int(frames), float(fps), tuple(float(v) for v in speeds), int(phases), held_key, heading_key)
    with _STARTS_LOCK:
        if cache_key in _STARTS:
            _STARTS.move_to_end(cache_key)
            return list(_STARTS[cache_key])
    try:
        roles = find_roles(rig)
        specs = motions_for(roles.kind)
    except (InputError, ValueError):
        return []
    out, seen = [], set()
    for spec in specs:
        for start in _motion_starts(spec, rig, roles, frames, fps, speeds, max(1, phases), held, heading):
            key = hashlib.sha1(np.round(start.clip.rotations, 5).tobytes() + np.round(start.clip.locations, 5).tobytes()).digest()
            if key not in seen:
                seen.add(key)
                out.append(start)
    with _STARTS_LOCK:
        _STARTS[cache_key] = tuple(out)
        while len(_STARTS) > STARTS_KEPT:
            _STARTS.popitem(last=False)
    return out


STARTS_KEPT: int = 4
"""How many rigs' starts :func:`prior_starts` keeps (the most recently used): a second distillation of
the same character at the same length and rate reuses them instead of playing the library again."""

_STARTS: OrderedDict[tuple, tuple[PriorStart, ...]] = OrderedDict()
_STARTS_LOCK = threading.Lock()

_LOOK_ONLY = {"texture", "uvs", "vertex_colors", "warnings", "name", "mesh_names"}  # fields no start depends on


def _rig_digest(rig: RigAsset) -> bytes:
    """A digest of every field of ``rig`` that its starts depend on (its bones, mesh, skinning and
    placement; not its colours or names)."""
    digest = hashlib.sha1()
    for field in fields(rig):
        if field.name in _LOOK_ONLY:
            continue
        value = getattr(rig, field.name)
        digest.update(field.name.encode())
        if isinstance(value, np.ndarray):
            digest.update(str((value.dtype, value.shape)).encode() + np.ascontiguousarray(value).tobytes())
        else:
            digest.update(repr(value).encode())
    return digest.digest()


def _motion_starts(
    spec,
    rig: RigAsset,
    roles,
    frames: int,
    fps: float,
    speeds: tuple[float, ...],
    phases: int,
    held: np.ndarray | None = None,
    heading: np.ndarray | None = None,
) -> list[PriorStart]:
    """One library motion's starts over the grid, as turns from the held pose (:func:`prior_starts`). A motion that plays the same at the grid's second
    phase as at phase 0 (an acyclic one) is played at phase 0 only, and one that plays the same in
    both directions in one direction only, so the clips it would repeat are never generated. Empty
    when this body cannot play the motion."""
    from ..motion.library.from_pose import turns_from_held
    from ..motion.library.labelled import Variation

    played: dict[tuple[float, float, int], MotionClip] = {}

    def play(speed: float, phase: float, direction: int) -> MotionClip:
        key = (speed, phase, direction)
        if key not in played:
            variation = replace(Variation(), speed=speed, phase=phase, direction=direction)
            clip = spec.generate(rig, roles, frames, fps, variation)
            played[key] = turns_from_held(rig, int(roles.root), held, heading, clip, np.asarray(roles.frame.up))
        return played[key]

    try:
        first = play(1.0, 0.0, 1)
        cyclic = phases > 1 and not _same(first, play(1.0, 1.0 / phases, 1))
        directions = (1,) if _same(first, play(1.0, 0.0, -1)) else (1, -1)
        grid = [(v, k / phases, d) for v in speeds for k in range(phases if cyclic else 1) for d in directions]
        return [PriorStart(spec.label, v, p, d, play(v, p, d)) for v, p, d in grid]
    except (InputError, ValueError):  # a motion this body cannot play
        return []


def _same(a: MotionClip, b: MotionClip) -> bool:
    return bool(np.allclose(a.rotations, b.rotations, atol=1e-6) and np.allclose(a.locations, b.locations, atol=1e-6))


def starts_as_channels(
    rig: RigAsset, starts: list[PriorStart], base_rotations: torch.Tensor, heading: np.ndarray | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The starts as the pose search's channels, played on top of the starting pose: rotations
    [S,F,J,4] = ``base_rotations`` [F,J,4] then each clip's own turn, made from that pose
    (:func:`prior_starts` with ``held``; so a user's start pose that is not the rest pose keeps its shape
    where a motion leaves a bone alone, and the rest pose gives the clips exactly), and the root's offset [S,F,3] from the starting pose's location
    (armature space). The library moves the body by the location of its roles' root (or the nearest
    unconnected ancestor, the "carrier"), whose ancestors stay at rest; that translation is carried
    over to the search's root bone (the same body translation when the root is that carrier or an
    ancestor at rest), whose location the search varies. ``heading`` [3,3] (armature space; None: none)
    turns that offset: the way the held pose's body faces (a character the animator turned travels the
    way it faces; :func:`~akd_blender.core.distillation.heading.held_heading`)."""
    frames = base_rotations.shape[0]
    if not starts:
        return torch.zeros(0, frames, rig.num_bones, 4), torch.zeros(0, frames, 3)
    turns = torch.as_tensor(np.stack([s.clip.rotations for s in starts]), dtype=torch.float32)
    rotations = quat_multiply(base_rotations.detach().cpu().float()[None].expand_as(turns), turns)
    locations = np.stack([s.clip.locations for s in starts])  # [S,F,J,3]
    moved = np.abs(locations).max(axis=(0, 1, 3)) > 0
    delta = np.zeros(locations.shape[:2] + (3,))
    for bone in np.flatnonzero(moved):  # armature-space translation: delta = L · location
        delta += locations[:, :, bone] @ location_axes(rig, int(bone)).T
    if heading is not None:
        delta = delta @ np.asarray(heading, dtype=np.float64).T
    return rotations, torch.as_tensor(delta, dtype=torch.float32)


def prompt_start_weights(starts: list[PriorStart], motion: str | None, prompt_prior: float) -> torch.Tensor | None:
    """Factors [S] on the starts' total errors in the pose search: ``1 - prompt_prior`` for a start of
    the motion the prompt was understood as (``motion``, e.g. ``"quadruped/wag_tail"``: its last
    ``/``-part is compared with each start's label), 1 for the others. None (no weighting) when
    ``motion`` is None, ``prompt_prior`` is 0 or no start is of that motion."""
    if motion is None or prompt_prior <= 0:
        return None
    label = motion.rsplit("/", 1)[-1]
    named = [start.label == label for start in starts]
    if not any(named):
        return None
    return torch.tensor([1.0 - prompt_prior if n else 1.0 for n in named], dtype=torch.float32)
