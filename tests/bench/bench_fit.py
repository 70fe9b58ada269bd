"""Fit ceiling of the distillation loop (``make bench-fit``).

SDS in target form regresses the render onto a video the teacher proposes. The best it can do is
therefore bounded by how well the loop fits a *given* video: here each motion's ground-truth render
(a held-out variation, in the teacher's look) is that video. For every character × motion: run
:func:`akd_blender.core.distillation.sds_loop.distill` from the standing pose with a prior that always returns the
ground-truth video as its target, render the result, judge it, and measure the joint-space distance
to the ground truth (root-relative joints, character heights, best shift within ±3 frames).

    python tests/bench/bench_fit.py [--size 32] [--supersample 4] [--steps 200] [--start neutral|rest]
        [--camera follow|fixed] [--views 1] [--device auto] [--out FILE]

``--size`` renders and fits at that size (the judge always sees 32 × 32 renders). ``--camera fixed``
keeps the follow camera on the *ground truth's* path in the fit too (the default follow camera tracks
the fitted mesh's centroid, so it moves when a limb moves, and the gradient does not see that).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from akd_blender.core import render as render_module  # noqa: E402
from akd_blender.core.character.kinematics import Skeleton  # noqa: E402
from akd_blender.core.character.procedural import CHARACTERS  # noqa: E402
from akd_blender.core.distillation.sds_loop import DistillConfig  # noqa: E402
from akd_blender.core.job.request import JobRequest, run_request  # noqa: E402
from akd_blender.core.motion.clip import MotionClip  # noqa: E402
from akd_blender.core.motion.library.labelled import MOTIONS, make_clip, neutral_clip, sample_variations  # noqa: E402
from akd_blender.core.render import Renderer, make_cameras, root_path  # noqa: E402
from akd_blender.core.render.image_losses import multiscale_mse  # noqa: E402
from akd_blender.core.video_models.tiny import load_teacher_config  # noqa: E402
from tests.bench.bench_quality import VIEW, joint_distance, joints_rel  # noqa: E402
from tools.teacher.dataset import render_clips  # noqa: E402
from tools.teacher.video_judge import load_judge  # noqa: E402


class GroundTruthPrior:
    """A "prior" whose target is always one fixed video [F,3,H,W] (the loop's pixel-target path)."""

    name = "ground-truth"

    def __init__(self, video: torch.Tensor, fps: float, look, views: int = 1) -> None:
        self.video, self.views = video, views
        self.frames, self.height, self.width = video.shape[0] // views, *video.shape[-2:]
        self.fps = fps
        self.render_style, self.camera_options = look.scene_style(), look.camera_options()

    def encode_text(self, prompt: str, negative_prompt: str = ""):
        return None

    def sds_loss(self, video, text, step, total_steps, generator=None, region=None) -> dict:
        return {"loss": multiscale_mse(video.float(), self.video.to(video.device))}

    def sample(self, text, generator=None, guidance: float = 3.0, steps: int = 30, progress=None) -> torch.Tensor:
        """The "drawn" video of the sample-then-fit start: the ground truth (first view)."""
        return self.video[:: self.views]


def fit_one(rig, character: str, label: str, args, look, judge, device: str) -> dict:
    variation = sample_variations(1, args.seed + 5, "heldout")[0]
    if look.views == "canonical":  # the teacher only draws the character facing -Y
        variation = replace(variation, facing=0.0)
    frames = look.frames
    truth = make_clip(rig, character, label, variation, frames, look.fps)
    size = args.size
    render_look = {"style": look.scene_style(), "camera_options": look.camera_options()}
    ss = args.supersample
    # The cameras distill uses (default follow camera, `views` spread evenly in azimuth, frame-major).
    vertices = Skeleton(rig).to(device)(truth)
    cameras = make_cameras(rig, root_path(vertices), size * ss, size * ss, views=args.views, **render_look["camera_options"])
    renderer = Renderer(rig, size * ss, size * ss, backend="torch", device=device, style=render_look["style"])
    target = renderer.render(vertices, cameras)[:, :3].detach()
    target = torch.nn.functional.avg_pool2d(target, ss) if ss > 1 else target
    restore = render_module.root_path
    if args.camera == "fixed":  # the camera follows the ground truth's path whatever the fit does
        path = root_path(vertices)
        render_module.root_path = lambda verts: path.to(verts.device, verts.dtype)
    start = neutral_clip(rig, frames, look.fps) if args.start == "neutral" else MotionClip.rest(rig, frames, look.fps)
    try:
        config = DistillConfig(
            steps=args.steps,
            frames=frames,
            fps=look.fps,
            height=size,
            width=size,
            seed=args.seed,
            device=device,
            supersample=ss,
            target_reuse=1,
            preview_every=0,
            lr=args.lr,
            root_lr=args.root_lr,
            render_backend="torch",
            views=args.views,
            start=args.mode,
            w_smooth=args.w_smooth,
            w_skate=args.w_skate,
            keys=frames,  # the product's 48 frames at 24 fps carry 24 keys over these 16 frames' span
        )
        t0 = time.time()
        request = JobRequest(rig, "(ground truth)", config, model="ground-truth", init_pose=start)
        result = run_request(request, prior=GroundTruthPrior(target, look.fps, look, args.views))
        seconds = time.time() - t0
    finally:
        render_module.root_path = restore
    skeleton, height = Skeleton(rig, torch.float64), float(rig.height)
    truth_joints = [joints_rel(skeleton, truth, height)]
    judged = render_clips(rig, [result.clip], [VIEW], 32, 32, device, **render_look)
    label_out, probs = judge.classify(judged)
    return {
        "character": character,
        "motion": label,
        "judged": label_out[0],
        "p": float(probs[0, judge.cfg.labels.index(label)]),
        "joint_dist": joint_distance(joints_rel(skeleton, result.clip, height), truth_joints),
        "start_joint_dist": joint_distance(joints_rel(skeleton, start, height), truth_joints),
        "loss_first": result.history[0]["sds"] if result.history else float("nan"),  # steps 0: the search alone
        "loss_last": result.history[-1]["sds"] if result.history else float("nan"),
        "seconds": round(seconds, 1),
        "search_seconds": round(result.timings.get("distill.sample_and_search", 0.0), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--supersample", type=int, default=4)
    ap.add_argument("--steps", type=int, default=None, help="default: distill's (0 after the search, 200 from the pose)")
    ap.add_argument("--lr", type=float, default=DistillConfig.lr)
    ap.add_argument("--root-lr", type=float, default=DistillConfig.root_lr)
    ap.add_argument("--w-smooth", type=float, default=DistillConfig.w_smooth)
    ap.add_argument("--w-skate", type=float, default=DistillConfig.w_skate)
    ap.add_argument("--start", choices=("neutral", "rest"), default="neutral")
    ap.add_argument(
        "--mode", choices=("sample", "pose"), default="sample", help="distill's start: pose search on the target first, or not"
    )
    ap.add_argument("--camera", choices=("follow", "fixed"), default="follow")
    ap.add_argument("--views", type=int, default=1, help="cameras per frame in the fit (and the target), 360°/views apart")
    ap.add_argument("--characters", default="biped,quadruped")
    ap.add_argument("--motions", default="", help="comma-separated labels (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--out", default="bench_out/fit.json")
    args = ap.parse_args(argv)
    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else ("cpu" if args.device == "auto" else args.device)
    look = load_teacher_config()
    judge = load_judge(device)
    wanted = set(filter(None, args.motions.split(",")))
    rows = []
    for character in args.characters.split(","):
        rig = CHARACTERS[character]()
        for spec in MOTIONS[character]:
            if wanted and spec.label not in wanted:
                continue
            row = fit_one(rig, character, spec.label, args, look, judge, device)
            rows.append(row)
            print(
                f"{character:9s} {spec.label:10s} → {row['judged']:10s} p={row['p']:.2f} joint {row['joint_dist']:.3f} "
                f"(start {row['start_joint_dist']:.3f}) loss {row['loss_first']:.5f} → {row['loss_last']:.5f} {row['seconds']:.0f}s",
                flush=True,
            )
    summary = {
        "device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "device")},
        "judged_right": float(np.mean([r["judged"] == r["motion"] for r in rows])),
        "mean_joint_dist": float(np.mean([r["joint_dist"] for r in rows])),
        "mean_start_joint_dist": float(np.mean([r["start_joint_dist"] for r in rows])),
    }
    print(
        f"\nfit ceiling ({len(rows)} motions, {args.size}px ×{args.supersample}, {args.steps if args.steps is not None else 'default'} steps, start {args.start}, "
        f"mode {args.mode}, camera {args.camera}, {args.views} view(s), {summary['device']}): judged right {summary['judged_right']:.0%}, "
        f"joint distance {summary['mean_joint_dist']:.3f} (start {summary['mean_start_joint_dist']:.3f})"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
