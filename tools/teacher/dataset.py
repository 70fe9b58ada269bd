"""Teacher and judge data: the motion library rendered with the project's renderer.

Each item is (character, motion label, :class:`~akd_blender.core.motion.library.labelled.Variation`, camera azimuth/elevation).
Videos are rendered exactly as the distillation sees its character — :class:`Skeleton` (FK + LBS),
:func:`make_cameras` in ``"follow"`` mode, :class:`Renderer` (checkerboard ground) — many clips per
renderer call, and stored as uint8 [N,F,3,H,W] RGB.

Views vary around the distillation's default camera (azimuth 50°, elevation 15°) and the
character's facing varies in the motion itself, so the relative view covers a wide arc
(``views="varied"``, the judge's data). ``views="canonical"`` renders every clip from that default
camera with the character facing -Y (the teacher's data: the distillation starts from a character
facing -Y and shows it from that camera, so the teacher only has to learn the motions from there).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import CHARACTERS
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library.labelled import (
    LABELS,
    MOTIONS,
    NONE_LABEL,
    Variation,
    make_clip,
    rest_clip,
    sample_variations,
)
from akd_blender.core.render import DEFAULT_VIEW, Renderer, SceneStyle, concat_cameras, make_cameras, root_path

__all__ = [
    "ClipItem",
    "MOTION_KEYS",
    "VIEWS",
    "make_items",
    "rest_items",
    "render_items",
    "render_clips",
    "build_dataset",
    "as_uint8",
]

MOTION_KEYS: tuple[tuple[str, str], ...] = tuple((c, s.label) for c, specs in MOTIONS.items() for s in specs)
"""Every (character, label) of the library, in a fixed order (the teacher's motion index)."""

VIEWS: tuple[str, ...] = ("varied", "canonical")


@dataclass(frozen=True)
class ClipItem:
    """One clip to render: character, motion label (``"none"`` = rest pose), variation, camera angles (degrees)."""

    character: str
    label: str
    variation: Variation
    azimuth: float = DEFAULT_VIEW[0]
    elevation: float = DEFAULT_VIEW[1]


def make_items(
    split: str = "train", per_motion: int = 8, seed: int = 0, amplitude_scale: float = 1.0, views: str = "varied"
) -> list[ClipItem]:
    """``per_motion`` items of every library motion; variations and views from ``split``'s seed stream.

    ``amplitude_scale`` multiplies every variation's amplitude (e.g. 0.15 for low-amplitude negatives).
    ``views``: "varied" (azimuth 50° ± 45°, elevation 8–28°, facing ± 60°) or "canonical"
    (:data:`~akd_blender.core.render.DEFAULT_VIEW`, the distillation's camera, facing 0; speed, amplitude, phase and direction still vary).
    """
    if views not in VIEWS:
        raise ValueError(f"views must be one of {VIEWS}, not {views!r}")
    rng = np.random.default_rng([seed, 17 if split == "train" else 23])
    items = []
    for m, (character, label) in enumerate(MOTION_KEYS):
        for v in sample_variations(per_motion, seed * 1000 + m, split):
            v = replace(v, amplitude=v.amplitude * amplitude_scale)
            view = (float(50.0 + rng.uniform(-45, 45)), float(rng.uniform(8, 28)))
            if views == "canonical":
                v, view = replace(v, facing=0.0), DEFAULT_VIEW
            items.append(ClipItem(character, label, v, *view))
    return items


def rest_items(count: int, seed: int = 0) -> list[ClipItem]:
    """``count`` rest-pose clips per character (the "none" class), random facing and view."""
    rng = np.random.default_rng([seed, 31])
    return [
        ClipItem(
            c,
            NONE_LABEL,
            Variation(facing=float(rng.uniform(-1, 1))),
            float(50.0 + rng.uniform(-45, 45)),
            float(rng.uniform(8, 28)),
        )
        for c in CHARACTERS
        for _ in range(count)
    ]


def _clip(rig, item: ClipItem, frames: int, fps: float) -> MotionClip:
    if item.label == NONE_LABEL:
        return rest_clip(rig, frames, fps, item.variation.facing)
    return make_clip(rig, item.character, item.label, item.variation, frames, fps)


def as_uint8(video: torch.Tensor) -> torch.Tensor:
    """Float pixels in [0,1] (any shape) → uint8 on the CPU (rounded, clamped)."""
    return (video * 255).round().clamp(0, 255).to(torch.uint8).cpu()


@torch.no_grad()
def render_clips(
    rig,
    clips: list[MotionClip],
    views: list[tuple[float, float]],
    height: int,
    width: int,
    device: torch.device | str = "cpu",
    backend: str = "torch",
    renderer: Renderer | None = None,
    style: SceneStyle | None = None,
    camera_options: dict | None = None,
) -> torch.Tensor:
    """Render clips of one rig, each from a follow camera at its (azimuth, elevation) → float [N,F,3,H,W] in [0,1].
    ``style`` / ``camera_options`` (extra :func:`make_cameras` arguments, e.g. ``fill``) set the look."""
    renderer = renderer or Renderer(rig, height, width, backend=backend, device=device, style=style)
    skeleton = Skeleton(rig).to(renderer.device)
    verts, cams = [], []
    for clip, (az, el) in zip(clips, views):
        v = skeleton(clip)
        verts.append(v)
        cams.append(
            make_cameras(
                rig, root_path(v), height, width, mode="follow", **{**(camera_options or {}), "azimuth": az, "elevation": el}
            )
        )
    video = renderer.render(torch.cat(verts), concat_cameras(cams))[:, :3]
    return video.reshape(len(clips), -1, 3, height, width)


@torch.no_grad()
def render_items(
    items: list[ClipItem],
    height: int = 64,
    width: int = 64,
    frames: int = 16,
    fps: float = 8.0,
    device: torch.device | str = "cpu",
    backend: str = "torch",
    batch: int = 16,
    progress: bool = False,
    style: SceneStyle | None = None,
    camera_options: dict | None = None,
) -> torch.Tensor:
    """Render ``items`` → uint8 [N,F,3,H,W] (on the CPU), ``batch`` clips per renderer call."""
    out = torch.zeros(len(items), frames, 3, height, width, dtype=torch.uint8)
    renderers = {}
    rigs = {name: fn() for name, fn in CHARACTERS.items()}
    order = sorted(range(len(items)), key=lambda i: items[i].character)
    chunks = [order[i : i + batch] for i in range(0, len(order), batch)]
    if progress:
        from tqdm import tqdm

        chunks = tqdm(chunks, desc="render", unit="batch")
    for chunk in chunks:
        by_char: dict[str, list[int]] = {}
        for i in chunk:
            by_char.setdefault(items[i].character, []).append(i)
        for character, idx in by_char.items():
            rig = rigs[character]
            if character not in renderers:
                renderers[character] = Renderer(rig, height, width, backend=backend, device=device, style=style)
                if hasattr(renderers[character].raster, "max_pairs") and torch.device(device).type == "cuda":
                    renderers[character].raster.max_pairs = 60_000_000
            clips = [_clip(rig, items[i], frames, fps) for i in idx]
            views = [(items[i].azimuth, items[i].elevation) for i in idx]
            video = render_clips(rig, clips, views, height, width, renderer=renderers[character], camera_options=camera_options)
            out[idx] = as_uint8(video)
    return out


def build_dataset(
    split: str = "train",
    per_motion: int = 8,
    seed: int = 0,
    height: int = 64,
    width: int = 64,
    frames: int = 16,
    device: torch.device | str = "cpu",
    backend: str = "torch",
    low_amplitude: int = 0,
    rest: int = 0,
    batch: int = 16,
    progress: bool = False,
    style: SceneStyle | None = None,
    camera_options: dict | None = None,
    views: str = "varied",
) -> dict:
    """Render a split of the library (``views``: see :func:`make_items`; negatives always vary).

    Returns a dict: ``videos`` uint8 [N,F,3,H,W]; ``motion`` int64 [N] (index into
    :data:`MOTION_KEYS`, -1 for negatives); ``label`` int64 [N] (index into
    :data:`~.motions.LABELS`; negatives are ``"none"``); ``character`` list[str]; ``items``.
    ``low_amplitude`` clips per motion at 15 % amplitude and ``rest`` rest-pose clips per character
    are added as ``"none"`` negatives.
    """
    items = make_items(split, per_motion, seed, views=views)
    negatives = make_items(split, low_amplitude, seed + 101, amplitude_scale=0.15) if low_amplitude else []
    negatives += rest_items(rest, seed) if rest else []
    videos = render_items(
        items + negatives,
        height,
        width,
        frames,
        device=device,
        backend=backend,
        batch=batch,
        progress=progress,
        style=style,
        camera_options=camera_options,
    )
    none = LABELS.index(NONE_LABEL)
    motion = [MOTION_KEYS.index((it.character, it.label)) for it in items] + [-1] * len(negatives)
    label = [LABELS.index(it.label) for it in items] + [none] * len(negatives)
    return {
        "videos": videos,
        "motion": torch.tensor(motion, dtype=torch.int64),
        "label": torch.tensor(label, dtype=torch.int64),
        "character": [it.character for it in items + negatives],
        "items": items + negatives,
    }
