"""Robustness of the fit to a drawing whose look drifts from the render (``tests/bench/bench_robustness.py``).

A real image-to-video model draws the user's character moving, but not with the exact colours,
texture, ground and camera of the project's render that the pose search compares against. This
bench takes the embedded teacher's draws for the held-out cases of ``bench_unseen.py`` (same cases,
same distillation, same judging), changes each drawing before the fit, and reports per change the
judged-right rate and the joint distance, against the unchanged drawings of the same cases:

- ``none``: the drawing as it is;
- ``colour``: per-channel gains (1.25, 0.95, 0.75) and offsets (0, 0.03, 0.06);
- ``brightness``: 0.8 × the drawing + 0.2 (brighter, flatter);
- ``blur``: Gaussian blur, sigma 3 % of the width (1 px at 32 px);
- ``noise``: Gaussian pixel noise, sigma 0.06;
- ``texture``: the character's pixels of the first frame the teacher is shown get another look (colour
  channels rotated, horizontal stripes), so it draws a character coloured unlike the rig's render;
- ``background``: the ground and sky of the drawing (pixels near the scene style's ground and sky
  colours) repainted as another checkerboard sliding across the frame;
- ``shake``: each frame shifted (up to 4 % of the size), turned (up to 2°) and scaled (up to 3 %).

Each change is seeded by the case. Sharded like ``bench_unseen.py``: ``--shard K/N --no-judge`` distils
and saves clips (e.g. on a GPU), ``--merge`` judges the saved clips of the shards into one table.

    python tests/bench/bench_robustness.py [--per-kind 4] [--per-artist 2] [--perturbations none,blur] [--out FILE]
    python tests/bench/bench_robustness.py --shard 0/8 --no-judge --out s0.json …
    python tests/bench/bench_robustness.py --merge s0.json s1.json … --out all.json
    … --appearance normalised   # the pose search comparing standardised colours (SearchSettings.appearance)
    … --appearance matched      # the drawing recoloured through its first frame, a foreign ground ignored
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from akd_blender.core.motion.clip import MotionClip  # noqa: E402
from akd_blender.core.render.image_losses import gaussian_blur  # noqa: E402
from akd_blender.core.settings import SEARCH_APPEARANCES  # noqa: E402
from tests.bench.bench_unseen import (  # noqa: E402
    DEFAULT_ARTISTS,
    Case,
    distil_case,
    extend_phrases,
    judge_case,
    load_case_rig,
    make_cases,
    search_fields,
)

ALLOWED_DROP = 5.0  # points of judged-right rate a change may cost


# Changes of the drawn video [F,3,H,W] in [0,1] -----------------------------------------------
def colour(video: torch.Tensor, generator: torch.Generator, style) -> torch.Tensor:
    gains = video.new_tensor([1.25, 0.95, 0.75]).view(1, 3, 1, 1)
    offsets = video.new_tensor([0.0, 0.03, 0.06]).view(1, 3, 1, 1)
    return (video * gains + offsets).clamp(0, 1)


def brightness(video: torch.Tensor, generator: torch.Generator, style) -> torch.Tensor:
    return (0.8 * video + 0.2).clamp(0, 1)


def blur(video: torch.Tensor, generator: torch.Generator, style) -> torch.Tensor:
    return gaussian_blur(video, 0.03 * video.shape[-1])


def noise(video: torch.Tensor, generator: torch.Generator, style) -> torch.Tensor:
    return (video + 0.06 * torch.randn(video.shape, generator=generator).to(video)).clamp(0, 1)


def shake(video: torch.Tensor, generator: torch.Generator, style) -> torch.Tensor:
    f = video.shape[0]
    u = torch.rand(f, 4, generator=generator).to(video) * 2 - 1
    shift, angle, scale = 0.08 * u[:, :2], math.radians(2.0) * u[:, 2], 1 + 0.03 * u[:, 3]  # shift: 4 % of the size (grid is ±1)
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], -1), torch.stack([sin, cos, shift[:, 1]], -1)], 1)
    grid = F.affine_grid(theta, list(video.shape), align_corners=False)
    return F.grid_sample(video, grid, mode="bilinear", padding_mode="border", align_corners=False)


def scene_mask(video: torch.Tensor, style, tolerance: float = 0.09) -> torch.Tensor:
    """[F,1,H,W] in {0,1}: pixels whose colour lies within ``tolerance`` of the scene's ground and sky
    colours (the lit checker squares, their mix, their shadowed and fogged shades, the sky)."""
    from akd_blender.core.render.scene import SceneStyle

    style = style or SceneStyle()
    lit = style.ambient + style.diffuse * max(float(style.light(torch.device("cpu"))[2]), 0.0)
    a, b = (torch.tensor(c) * lit for c in style.checker_colors)
    sky = torch.tensor(style.background)
    shade = 1 - style.shadow_strength
    segments = [(a, b), (a, sky), (b, sky), (a * shade, a), (b * shade, b), (a * shade, b * shade)]
    pixels = video.permute(0, 2, 3, 1).reshape(-1, 3).cpu()
    best = torch.full((pixels.shape[0],), float("inf"))
    for p, q in segments:
        d = q - p
        t = ((pixels - p) @ d / d.dot(d).clamp_min(1e-8)).clamp(0, 1)
        best = torch.minimum(best, (pixels - (p + t[:, None] * d)).norm(dim=-1))
    f, _, h, w = video.shape
    return (best < tolerance).float().view(f, 1, h, w).to(video.device)


def background(video: torch.Tensor, generator: torch.Generator, style) -> torch.Tensor:
    f, _, h, w = video.shape
    mask = F.avg_pool2d(scene_mask(video, style), 3, stride=1, padding=1, count_include_pad=False)
    square = max(2.0, w / 5)
    drift = torch.cumsum(torch.rand(f, 2, generator=generator) * 0.3 * square, 0)  # the new ground slides
    ys = torch.arange(h, dtype=torch.float32)[None, :, None] + drift[:, 1, None, None]
    xs = torch.arange(w, dtype=torch.float32)[None, None, :] + drift[:, 0, None, None]
    checker = ((torch.floor(ys / square) + torch.floor(xs / square)) % 2)[:, None]  # [F,1,H,W]
    warm, green = torch.tensor([0.58, 0.45, 0.30]).view(1, 3, 1, 1), torch.tensor([0.30, 0.46, 0.27]).view(1, 3, 1, 1)
    ground = (checker * warm + (1 - checker) * green).to(video)
    return mask * ground + (1 - mask) * video


def swap_texture(frame: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """The first frame [3,H,W] with the character's pixels (``alpha`` [H,W]) in another look: colour
    channels rotated (RGB → GBR) and darkened on every other band of rows (bands 1/8 of the height)."""
    h = frame.shape[-2]
    band = ((torch.arange(h, device=frame.device) * 8 // h) % 2).float().view(1, h, 1)
    look = frame.roll(1, dims=0) * (1 - 0.35 * band)
    return alpha * look + (1 - alpha) * frame


def first_frame_alpha(rig, prior, frame: torch.Tensor, supersample: int) -> torch.Tensor:
    """Coverage [H,W] of the rig in its rest pose from the distillation's first-frame camera, at the
    size of ``frame`` [3,H,W] (how :func:`akd_blender.core.distillation.context.first_frame` renders it)."""
    from akd_blender.core.character.kinematics import Skeleton
    from akd_blender.core.render import Renderer, make_cameras, root_path

    h, w = frame.shape[-2:]
    renderer = Renderer(rig, h * supersample, w * supersample, device=frame.device, style=getattr(prior, "render_style", None))
    vertices = Skeleton(rig).to(frame.device)(MotionClip.rest(rig, 1))
    options = dict(getattr(prior, "camera_options", None) or {})
    cameras = make_cameras(rig, root_path(vertices), h * supersample, w * supersample, mode="follow", **options)
    rgba = renderer.render(vertices, cameras)
    return F.avg_pool2d(rgba, supersample)[0, 3] if supersample > 1 else rgba[0, 3]


CHANGES = {
    "none": None,
    "colour": colour,
    "brightness": brightness,
    "blur": blur,
    "noise": noise,
    "texture": None,  # the first frame is changed, not the drawing
    "background": background,
    "shake": shake,
}


@contextlib.contextmanager
def perturbed(prior, name: str, rig, seed: int):
    """``prior.sample`` changed by ``name`` for this case (restored afterwards)."""
    draw = prior.sample
    change = CHANGES[name]
    style = getattr(prior, "render_style", None)
    generator = torch.Generator().manual_seed(10_000 + 97 * seed + list(CHANGES).index(name))

    def sample(text, first_frame=None, **kwargs):
        if name == "texture":
            frame = first_frame if first_frame is not None else text.first_frame
            supersample = 4 if max(frame.shape[-2:]) <= 64 else 1  # DistillConfig's default for such sizes
            frame = swap_texture(frame, first_frame_alpha(rig, prior, frame, supersample))
            text, first_frame = replace(text, first_frame=frame), None
        video = draw(text, first_frame, **kwargs)
        return video if change is None else change(video.float(), generator, style).to(video.dtype)

    prior.sample = sample
    try:
        yield prior
    finally:
        del prior.sample


# Runs ------------------------------------------------------------------------------------------
def clip_key(name: str, seed: int) -> str:
    return f"{name}_{seed}"


def save_clips(clips: dict[str, MotionClip], path: Path) -> None:
    arrays = {}
    for key, c in clips.items():
        arrays[f"rot_{key}"], arrays[f"loc_{key}"], arrays[f"meta_{key}"] = (
            c.rotations,
            c.locations,
            np.array([c.fps, c.frame_start]),
        )
    np.savez_compressed(path, **arrays)


def save_shard(rows: list[dict], clips: dict[str, MotionClip], out: Path) -> None:
    """A shard's unjudged rows (``out``) and clips (``out`` with suffix ``.clips.npz``), for ``--merge``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    save_clips(clips, out.with_suffix(".clips.npz"))
    out.write_text(json.dumps({"cases": rows}, indent=1))


def load_clips(path: Path, rows: list[dict], artists: Path) -> dict[str, MotionClip]:
    out = {}
    with np.load(path) as data:
        for r in rows:
            key = clip_key(r["perturbation"], r["seed"])
            rig, _ = load_case_rig(Case(**{k: r[k] for k in Case.__dataclass_fields__}), artists)
            fps, start = data[f"meta_{key}"]
            out[key] = MotionClip(rig.bone_names, float(fps), int(start), data[f"rot_{key}"], data[f"loc_{key}"])
    return out


def table(rows: list[dict]) -> str:
    """Markdown: per change, judged right and recovered against ``none`` on the same cases."""
    by = {}
    for r in rows:
        by.setdefault(r["perturbation"], {})[r["seed"]] = r
    base = by.get("none", {})
    lines = [
        "| change | cases | judged right | Δ vs none (points) | recovered | joint dist. / rest | Δ joint dist. vs none | s per case |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in [n for n in CHANGES if n in by]:
        rs = list(by[name].values())
        n = len(rs)
        right = 100 * sum(r["right"] for r in rs) / n
        paired = [s for s in by[name] if s in base]
        drop = 100 * (sum(base[s]["right"] for s in paired) - sum(by[name][s]["right"] for s in paired)) / max(len(paired), 1)
        dj = np.mean([by[name][s]["joint_distance"] - base[s]["joint_distance"] for s in paired]) if paired else float("nan")
        verdict = "" if name == "none" else (" ✓" if drop <= ALLOWED_DROP else " ✗")
        lines.append(
            f"| {name} | {n} | {right:.1f} % | {0.0 - drop:+.1f}{verdict} | {100 * sum(r['recovered'] for r in rs) / n:.1f} % | "
            f"{np.mean([r['joint_distance'] for r in rs]):.3f} / {np.mean([r['rest_distance'] for r in rs]):.3f} | "
            f"{dj:+.3f} | {np.mean([r['seconds'] for r in rs]):.1f} |"
        )
    return "\n".join(lines)


def report(rows: list[dict], out: Path) -> int:
    summary = table(rows)
    print(summary)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cases": rows, "table": summary}, indent=1))
    print(f"{len(rows)} fits → {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-kind", type=int, default=12, help="cases per family kind (bench_unseen's)")
    ap.add_argument("--per-artist", type=int, default=8, help="cases per artist rig")
    ap.add_argument("--artists", default=str(ROOT / "bench_out" / "artists"), help="folder from artist_fixtures.py")
    ap.add_argument("--artist-names", default=",".join(DEFAULT_ARTISTS))
    ap.add_argument("--perturbations", default=",".join(CHANGES), help=f"comma-separated, of {', '.join(CHANGES)}")
    ap.add_argument("--judge", default=None, help="motion judge folder (default: the shipped one)")
    ap.add_argument("--phrases", default=None, help="precomputed prompt embeddings (bench_unseen.py --embed)")
    ap.add_argument("--gt", type=int, default=6, help="ground-truth variations per case for the joint distance")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--search-steps", type=int, default=None, help="DDIM steps of the teacher's drawing (default: the config's)")
    ap.add_argument(
        "--appearance", default="rgb", choices=SEARCH_APPEARANCES, help="the pose search's comparison (SearchSettings)"
    )
    ap.add_argument(
        "--search", action="append", default=[], metavar="FIELD=VALUE", help="another SearchSettings field (e.g. stabilise=False)"
    )
    ap.add_argument("--shard", default="0/1", help="K/N: run fits K, K+N, K+2N … of the (case, change) list only")
    ap.add_argument("--merge", nargs="+", help="shard JSON files: judge their saved clips into one table")
    ap.add_argument("--no-judge", action="store_true", help="distil and save the clips only (judge later with --merge)")
    ap.add_argument("--out", default=str(ROOT / "bench_out" / "robustness.json"))
    args = ap.parse_args(argv)
    artists = Path(args.artists)
    from akd_blender.core.motion.judge import load_motion_judge

    if args.merge:
        judge = load_motion_judge(args.judge)
        rows = []
        for f in args.merge:
            shard = json.loads(Path(f).read_text())["cases"]
            clips = load_clips(Path(f).with_suffix(".clips.npz"), shard, artists)
            rows += [judge_case(r, clips[clip_key(r["perturbation"], r["seed"])], artists, judge) for r in shard]
        return report(sorted(rows, key=lambda r: (r["seed"], list(CHANGES).index(r["perturbation"]))), Path(args.out))
    names = [n for n in args.perturbations.split(",") if n]
    unknown = [n for n in names if n not in CHANGES]
    if unknown:
        ap.error(f"unknown perturbation {unknown[0]!r} (of {', '.join(CHANGES)})")
    cases = make_cases(args.per_kind, args.per_artist, artists, tuple(n for n in args.artist_names.split(",") if n))
    search = search_fields(args.search)
    k, n = (int(x) for x in args.shard.split("/"))
    runs = [(case, name) for case in cases for name in names][k::n]
    from akd_blender.core.video_models import load_prior

    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    prior = load_prior("tiny", device=device, dtype=torch.float32)
    prior.heldout_wordings = False  # the cases prompt with held-out phrasings: read them as new wordings
    if args.phrases:
        extend_phrases(prior, Path(args.phrases))
    judge = None if args.no_judge else load_motion_judge(args.judge)
    rows, clips = [], {}
    for case, name in runs:
        rig, _ = load_case_rig(case, artists)
        t0 = time.time()
        with perturbed(prior, name, rig, case.seed):
            row, clip = distil_case(
                case, artists, prior, device, args.gt, args.search_steps, {"appearance": args.appearance, **search}
            )
        row = {**row, "perturbation": name, "appearance": args.appearance, "seconds": round(time.time() - t0, 2)}
        clips[clip_key(name, case.seed)] = clip
        if judge is not None:
            row = judge_case(row, clip, artists, judge)
        rows.append(row)
        print(
            f"{case.seed:3d} {case.source}/{case.kind} {case.label:12s} {name:10s} → {row.get('judged')}, "
            f"dist {row['joint_distance']:.3f} vs rest {row['rest_distance']:.3f}, shake {row.get('shake') or 0:.2f} px",
            flush=True,
        )
        if judge is None:  # a shard cut short by a time limit keeps the fits it finished
            save_shard(rows, clips, Path(args.out))
    if judge is None:
        print(f"{len(rows)} fits (not judged) → {args.out}")
        return 0
    save_clips(clips, Path(args.out).with_suffix(".clips.npz"))
    return report(rows, Path(args.out))


if __name__ == "__main__":
    raise SystemExit(main())


def test_changes_and_table():
    """The changes keep shape and range, are seeded, and the table pairs each change with ``none``
    (the figures come from the full run)."""
    from akd_blender.core.character.procedural import biped
    from akd_blender.core.render import render_clip

    rig = biped()
    rgba = render_clip(rig, MotionClip.rest(rig, 3), 32, 32, backend="torch", device="cpu")
    video = rgba[:, :3]
    for name, change in CHANGES.items():
        if change is None:
            continue
        a = change(video, torch.Generator().manual_seed(1), None)
        b = change(video, torch.Generator().manual_seed(1), None)
        assert a.shape == video.shape and a.min() >= 0 and a.max() <= 1 and torch.equal(a, b), name
        assert (a - video).abs().mean() > 1e-3, name
    mask = scene_mask(video, None)[:, 0]
    assert (mask[rgba[:, 3] < 0.01].mean() > 0.9) and (
        mask[rgba[:, 3] > 0.99].mean() < 0.5
    )  # ground vs character (grey parts pass as ground)
    swapped = swap_texture(video[0], rgba[0, 3])
    assert torch.equal(swapped[:, rgba[0, 3] == 0], video[0][:, rgba[0, 3] == 0])  # only the character changes
    rows = [
        {
            "perturbation": p,
            "seed": s,
            "right": r,
            "recovered": False,
            "joint_distance": 0.3,
            "rest_distance": 0.4,
            "seconds": 1.0,
        }
        for p, s, r in [
            ("none", 0, True),
            ("none", 1, True),
            ("blur", 0, True),
            ("blur", 1, False),
            ("noise", 0, True),
            ("noise", 1, True),
        ]
    ]
    text = table(rows)
    assert "| blur | 2 | 50.0 % | -50.0 ✗ |" in text and "| noise | 2 | 100.0 % | +0.0 ✓ |" in text
