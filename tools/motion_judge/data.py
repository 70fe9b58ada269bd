"""The motion judge's data: body tracks of the clips of :mod:`.clips` (every library motion on many
family members, with "none" clips), made in worker processes."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from akd_blender.core.motion.judge import body_tracks
from akd_blender.core.motion.library import LIBRARY
from akd_blender.core.motion.library.labelled import NONE_LABEL
from tools.family import make_member
from tools.family.truth import truth_roles

from .clips import judge_labels, member_clips, member_items

__all__ = ["member_tracks", "build_tracks"]


def member_tracks(args: tuple) -> tuple[list, np.ndarray]:
    """(kind, seed, split, per_motion, negatives, frames) → (items, tracks float32 [N,F,C]) of one member."""
    kind, seed, split, per_motion, negatives, frames = args
    torch.set_num_threads(1)
    member = make_member(kind, seed)
    roles = truth_roles(member)
    items = member_items(kind, seed, split, per_motion, negatives)
    clips = member_clips(kind, seed, items, frames)
    return items, np.stack([body_tracks(member.rig, roles, c) for c in clips])


def _reversible(item, symmetric: dict) -> bool:
    """Whether ``item`` played backwards is still its motion: time-symmetric library motions, "none"
    clips, and hops on the spot (crouch, spring, land, crouch: the same backwards once nothing travels)."""
    return symmetric.get((item.kind, item.source), True) or item.label == NONE_LABEL or (item.in_place and item.source == "hop")


def build_tracks(
    seeds: dict[str, list[int]], split: str, per_motion: int, negatives: int, frames: int = 16, workers: int = 0
) -> dict:
    """Tracks of every member ``seeds[kind]`` → {"tracks" float32 [N,F,C], "label" int64 [N] (index into
    :func:`.clips.judge_labels`), "reversible" bool [N] (:func:`_reversible`), "items"}."""
    jobs = [(kind, s, split, per_motion, negatives, frames) for kind, ss in seeds.items() for s in ss]
    if workers:
        with ProcessPoolExecutor(workers) as pool:
            made = list(pool.map(member_tracks, jobs, chunksize=max(1, len(jobs) // (4 * workers))))
    else:
        made = [member_tracks(j) for j in jobs]
    items = [i for its, _ in made for i in its]
    labels = judge_labels()
    symmetric = {(k, s.label): s.time_symmetric for k, specs in LIBRARY.items() for s in specs}
    return {
        "tracks": torch.from_numpy(np.concatenate([t for _, t in made])),
        "label": torch.tensor([labels.index(i.label) for i in items]),
        "reversible": torch.tensor([_reversible(i, symmetric) for i in items]),
        "items": items,
    }
