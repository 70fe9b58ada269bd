"""The image teacher's data: the role motion library played on members of the character family.

Each item is one clip of one family member (kind, seed) doing one library motion (label,
:class:`~akd_blender.core.motion.library.labelled.Variation`), rendered as the distillation sees its
character: :class:`Skeleton` (FK + LBS), :func:`make_cameras` in ``"follow"`` mode from the
distillation's default view, :class:`Renderer` at 4× the size then averaged down (the distillation's
supersampling). Next to each clip goes its **first frame**: the member standing in its rest pose,
turned by the clip's facing, rendered the same way (motions play through the member's true bone
roles, :func:`~tools.family.truth.truth_roles`) — what the distillation shows the teacher of the
user's character before it moves.

The character's facing is the member's own (most members face -Y, some are turned) plus the
variation's facing (±60°, and anywhere around the circle for a quarter of the clips), so the
teacher reads from the first frame which way the body faces. Members come from the family's
``"train"`` seeds (the teacher's data) or ``"heldout"`` seeds (its evaluation), never both.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np
import torch

from akd_blender.core.motion.library import LIBRARY, BodyPose, make_role_clip, sample_variations
from akd_blender.core.motion.library.labelled import Variation
from akd_blender.core.render import DEFAULT_VIEW, Renderer, SceneStyle
from tools.family import HELDOUT_SEEDS, TRAIN_SEEDS, make_member
from tools.family.truth import truth_roles

from .dataset import as_uint8, render_clips

__all__ = ["FAMILY_MOTIONS", "FamilyItem", "family_items", "render_family", "build_family_dataset", "motion_phrase_rows"]

FAMILY_MOTIONS: tuple[tuple[str, str], ...] = tuple((kind, spec.label) for kind, specs in LIBRARY.items() for spec in specs)
"""Every (kind, label) of the role library, library order (the image teacher's motion index)."""


@dataclass(frozen=True)
class FamilyItem:
    """One clip to render: family member (kind, seed), motion label and variation."""

    kind: str
    seed: int
    label: str
    variation: Variation


def _variation(label: str, split: str, key: int, rng: np.random.Generator) -> Variation:
    v = sample_variations(label, split, 1, key)[0]
    if rng.random() < 0.25:
        v = replace(v, facing=float(rng.uniform(-np.pi, np.pi)))
    return v


def family_items(split: str = "train", clips: int = 1024, seed: int = 0, per_member: int = 4) -> list[FamilyItem]:
    """About ``clips`` items, every motion of :data:`FAMILY_MOTIONS` equally often, ``per_member``
    different motions per member; members are the ``split``'s seeds in a seeded order."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', not {split!r}")
    seeds = TRAIN_SEEDS if split == "train" else HELDOUT_SEEDS
    rng = np.random.default_rng([seed, 41 if split == "train" else 43])
    per_motion = max(1, round(clips / len(FAMILY_MOTIONS)))
    items: list[FamilyItem] = []
    for kind, specs in LIBRARY.items():
        labels = [s.label for s in specs]
        take = min(per_member, len(labels))
        members = -(-per_motion * len(labels) // take)
        for seed_ in rng.choice(len(seeds), size=min(members, len(seeds)), replace=False):
            member_seed = int(seeds[int(seed_)])
            for label in rng.choice(labels, size=take, replace=False):
                key = zlib.crc32(f"{kind}:{member_seed}:{label}:{seed}".encode())
                items.append(FamilyItem(kind, member_seed, str(label), _variation(str(label), split, key, rng)))
    return items


@torch.no_grad()
def _render_member(task: tuple) -> torch.Tensor:
    """(kind, seed, [(label, variation)], frames, fps, height, width, supersample, device, backend,
    style, camera options) → uint8 [K, F+1, 3, H, W]: each wanted clip and then its first frame."""
    kind, seed, wanted, frames, fps, height, width, supersample, device, backend, style, options = task
    member = make_member(kind, seed)
    rig, roles = member.rig, truth_roles(member)
    h, w = height * supersample, width * supersample
    renderer = Renderer(rig, h, w, backend=backend, device=device, style=style)
    views = [(options["azimuth"], options["elevation"])] * len(wanted)
    motions = [make_role_clip(rig, roles, label, v, frames, fps) for label, v in wanted]
    standing = [BodyPose(rig, roles, 1, fps).clip(v.facing) for _, v in wanted]
    video = torch.cat(
        [render_clips(rig, c, views, h, w, renderer=renderer, camera_options=options) for c in (motions, standing)], 1
    )
    if supersample > 1:
        video = torch.nn.functional.avg_pool2d(video.flatten(0, 1), supersample).view(len(wanted), frames + 1, 3, height, width)
    return as_uint8(video)


def _rendered(tasks: list, workers: int):
    """The :func:`_render_member` results of ``tasks`` in order, made by ``workers`` processes
    (spawned: each opens its own CUDA context) or in this process when ``workers`` ≤ 1."""
    if workers <= 1:
        yield from map(_render_member, tasks)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers, initializer=torch.set_num_threads, initargs=(1,)) as pool:
        yield from pool.imap(_render_member, tasks, chunksize=2)


def render_family(
    items: list[FamilyItem],
    height: int = 32,
    width: int = 32,
    frames: int = 16,
    fps: float = 8.0,
    device: torch.device | str = "cpu",
    backend: str = "torch",
    style: SceneStyle | None = None,
    camera_options: dict | None = None,
    supersample: int = 4,
    progress: bool = False,
    workers: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Render ``items`` → (clips uint8 [N,F,3,H,W], first frames uint8 [N,3,H,W]) on the CPU.

    One renderer per member renders all its clips and first frames in one call at ``supersample`` ×
    the size, averaged down; ``workers`` processes render members side by side (0: this one).
    ``camera_options``: extra :func:`make_cameras` arguments (e.g. ``fill``); the view is
    :data:`DEFAULT_VIEW` unless they say otherwise."""
    options = {"azimuth": DEFAULT_VIEW[0], "elevation": DEFAULT_VIEW[1], **(camera_options or {})}
    videos = torch.zeros(len(items), frames, 3, height, width, dtype=torch.uint8)
    firsts = torch.zeros(len(items), 3, height, width, dtype=torch.uint8)
    groups: dict[tuple[str, int], list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault((it.kind, it.seed), []).append(i)
    look = (height, width, supersample, str(device), backend, style, options)
    tasks = [
        (kind, seed, [(items[i].label, items[i].variation) for i in idx], frames, fps, *look)
        for (kind, seed), idx in groups.items()
    ]
    results = _rendered(tasks, workers)
    if progress:
        from tqdm import tqdm

        results = tqdm(results, total=len(tasks), desc="members", unit="member")
    for idx, rgb in zip(groups.values(), results):
        videos[idx] = rgb[:, :frames]
        firsts[idx] = rgb[:, frames]
    return videos, firsts


def motion_phrase_rows(phrase_index: dict[str, int], split: str = "train") -> list[list[int]]:
    """For every :data:`FAMILY_MOTIONS` entry, the phrase-table rows of its ``split`` phrasings."""
    out = []
    for kind, label in FAMILY_MOTIONS:
        spec = next(s for s in LIBRARY[kind] if s.label == label)
        out.append([phrase_index[p] for p in (spec.phrasings if split == "train" else spec.heldout_phrasings)])
    return out


def build_family_dataset(split: str = "train", clips: int = 1024, seed: int = 0, **render) -> dict:
    """Render a split: ``videos`` uint8 [N,F,3,H,W], ``firsts`` uint8 [N,3,H,W], ``motion`` int64 [N]
    (index into :data:`FAMILY_MOTIONS`), ``items``. ``render``: :func:`render_family` arguments."""
    items = family_items(split, clips, seed)
    videos, firsts = render_family(items, **render)
    motion = torch.tensor([FAMILY_MOTIONS.index((it.kind, it.label)) for it in items], dtype=torch.int64)
    return {"videos": videos, "firsts": firsts, "motion": motion, "items": items}
