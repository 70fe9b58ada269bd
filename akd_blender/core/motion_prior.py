"""Motion-prior starts for the pose search: the rig's own kind's library motions, played on its bone
roles, as candidate starting motions that the drawn video chooses among.

A pose search from the standing pose fits each bone by coordinate descent; at the teacher's 32 px a
leg that must swing a radian matches the drawing worse on the way, and the trunk and root path fit
themselves to the legs' errors (docs/benchmarks.md, "The fit's ceiling"). Whole-body motions of the
character's kind (walks, jumps, sits … from :mod:`akd_blender.core.procedural.library`, retargeted
through :func:`~akd_blender.core.roles.find_roles`, with a grid of tempi, phases and directions) give
the search starting points whose limbs already move together. The candidates are scored against the
drawing by the search's own image error, **never by the prompt**: the drawing decides which motion,
if any, beats the standing pose, and the search then refines every bone from there.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np
import torch

from .errors import InputError
from .motion import MotionClip
from .procedural.library.pose import location_axes
from .rig import RigAsset

__all__ = ["PriorStart", "PRIOR_SPEEDS", "PRIOR_PHASES", "prior_starts", "starts_as_channels"]

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


def prior_starts(
    rig: RigAsset,
    frames: int,
    fps: float,
    speeds: tuple[float, ...] = PRIOR_SPEEDS,
    phases: int = PRIOR_PHASES,
) -> list[PriorStart]:
    """The rig's kind's library motions as candidate starts, ``frames`` long at ``fps``: every motion
    of the kind its roles read as (:func:`~akd_blender.core.roles.find_roles`), at each of ``speeds``,
    ``phases`` start phases and both directions, at the library's base amplitude and the rig's own
    facing; duplicates (a phase or direction a motion ignores) are dropped. Empty when the rig's roles
    cannot be read or its kind has no library motions (a serpent): the search then starts from the
    standing pose alone."""
    from .procedural.library import motions_for
    from .procedural.motions import Variation
    from .roles import find_roles

    try:
        roles = find_roles(rig)
        specs = motions_for(roles.kind)
    except (InputError, ValueError):
        return []
    out, seen = [], set()
    for spec in specs:
        for speed in speeds:
            for k in range(max(1, phases)):
                for direction in (1, -1):
                    variation = replace(Variation(), speed=speed, phase=k / max(1, phases), direction=direction)
                    try:
                        clip = spec.generate(rig, roles, frames, fps, variation)
                    except (InputError, ValueError):  # a motion this body cannot play (no arms to wave)
                        break
                    digest = hashlib.sha1(np.round(clip.rotations, 5).tobytes() + np.round(clip.locations, 5).tobytes())
                    if digest.hexdigest() in seen:
                        continue
                    seen.add(digest.hexdigest())
                    out.append(PriorStart(spec.label, speed, k / max(1, phases), direction, clip))
    return out


def starts_as_channels(
    rig: RigAsset, starts: list[PriorStart], base_locations: torch.Tensor, root: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The starts as the pose search's channels: rotations [S,F,J,4] (each clip's own) and the root's
    offset [S,F,3] from ``base_locations`` [F,J,3] (armature space). The library moves the body by
    the location of its roles' root (or the nearest unconnected ancestor, the "carrier"), whose
    ancestors stay at rest; that translation is carried over to the search's ``root`` bone (the same
    body translation when the root is that carrier or an ancestor at rest), whose location the
    search varies."""
    if not starts:
        j = rig.num_bones
        return torch.zeros(0, base_locations.shape[0], j, 4), torch.zeros(0, base_locations.shape[0], 3)
    rotations = torch.as_tensor(np.stack([s.clip.rotations for s in starts]), dtype=torch.float32)
    locations = np.stack([s.clip.locations for s in starts])  # [S,F,J,3]
    moved = np.abs(locations).reshape(len(starts), -1, rig.num_bones, 3).max(axis=(0, 1, 3)) > 0
    delta = np.zeros(locations.shape[:2] + (3,))
    for bone in np.flatnonzero(moved):  # armature-space translation: delta = L · location
        delta += locations[:, :, bone] @ location_axes(rig, int(bone)).T
    base = base_locations[:, root].detach().cpu().double().numpy() @ location_axes(rig, root).T
    offsets = delta - base[None]
    return rotations, torch.as_tensor(offsets, dtype=torch.float32)
