"""Quality benchmark of the embedded teacher (``make bench-quality``).

For each character × motion × held-out phrasing: distil from the standing pose with the teacher
(:func:`akd_blender.core.distillation.sds_loop.distill` with its defaults: the teacher draws a video and the pose
search fits it; ``--start pose --steps 200`` measures SDS from the pose instead), render with the distillation's camera, judge. Also
judged: held-out ground truth, the teacher's own samples for the phrasing, the rest pose and a
random smooth motion. Fidelity: joint-space distance (root-relative joints, in character heights,
best time shift within ±3 frames) to the nearest ground-truth variation of the motion, and
render-space distance (RMSE of the RGB video) to the nearest ground-truth render. Prints a
markdown table and writes JSON.

    python tests/bench/bench_quality.py [--start auto|pose|sample] [--steps N] [--phrasings 1] [--device auto] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from akd_blender.core.character.kinematics import Skeleton  # noqa: E402
from akd_blender.core.character.procedural import CHARACTERS  # noqa: E402
from akd_blender.core.distillation.sds_loop import START_MODES, DistillConfig, SearchSettings  # noqa: E402
from akd_blender.core.job.request import JobRequest, run_request  # noqa: E402
from akd_blender.core.motion.clip import MotionParams  # noqa: E402
from akd_blender.core.motion.library.labelled import MOTIONS, make_clip, neutral_clip, rest_clip, sample_variations  # noqa: E402
from akd_blender.core.render import DEFAULT_VIEW  # noqa: E402
from akd_blender.core.video_models.tiny import load_tiny_prior  # noqa: E402
from tools.teacher.dataset import render_clips  # noqa: E402
from tools.teacher.video_judge import load_judge  # noqa: E402

VIEW = DEFAULT_VIEW  # the distillation's follow camera (azimuth, elevation)


def joints_rel(skeleton: Skeleton, clip, height: float) -> np.ndarray:
    """Root-relative joint positions [F,J,3] in character heights."""
    j = skeleton.joint_positions(*clip.pose_channels(torch.float64)).numpy()
    return (j - j[:, :1]) / height


def joint_distance(a: np.ndarray, refs: list[np.ndarray], max_shift: int = 3) -> float:
    """Min over references and time shifts (|s| ≤ max_shift) of the mean joint distance."""
    best = np.inf
    for r in refs:
        for s in range(-max_shift, max_shift + 1):
            x, y = (a[s:], r[: len(r) - s]) if s >= 0 else (a[:s], r[-s:])
            best = min(best, float(np.linalg.norm(x - y, axis=-1).mean()))
    return best


def render_distance(video: torch.Tensor, refs: torch.Tensor) -> float:
    """Min RMSE between video [F,3,H,W] and reference videos [N,F,3,H,W] (all in [0,1])."""
    return float(((refs - video[None]) ** 2).mean((1, 2, 3, 4)).sqrt().min())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=None, help="default: distill's (0 after a drawn video, 200 from the pose)")
    ap.add_argument("--phrasings", type=int, default=2, help="held-out phrasings per motion (≤ 2)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gt", type=int, default=12, help="ground-truth variations per motion (train + held-out) for fidelity")
    ap.add_argument("--characters", default="biped,quadruped")
    ap.add_argument("--motions", default="", help="comma-separated labels (default: all)")
    ap.add_argument("--start", choices=START_MODES, default=DistillConfig.start, help="distill's start")
    ap.add_argument("--lr", type=float, default=DistillConfig.lr)
    ap.add_argument("--root-lr", type=float, default=DistillConfig.root_lr)
    ap.add_argument("--w-smooth", type=float, default=DistillConfig.w_smooth)
    ap.add_argument("--w-skate", type=float, default=DistillConfig.w_skate)
    ap.add_argument("--sample-guidance", type=float, default=SearchSettings.guidance, help="CFG of the teacher's draw")
    ap.add_argument("--search-smooth", type=float, default=SearchSettings.smooth, help="smoothing of the fitted poses, frames")
    ap.add_argument("--out", default="bench_out/quality.json")
    args = ap.parse_args(argv)
    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else ("cpu" if args.device == "auto" else args.device)
    torch.manual_seed(args.seed)
    prior = load_tiny_prior(device)
    size = prior.height  # render in the teacher's own size and look (the judge learnt the same)
    look = {"style": prior.render_style, "camera_options": prior.camera_options}
    judge = load_judge(device)
    rows, start_all = [], time.time()
    totals: dict[str, list] = {k: [] for k in ("gt", "distilled", "sample", "rest", "random")}
    for character in args.characters.split(","):
        rig = CHARACTERS[character]()
        skeleton = Skeleton(rig, torch.float64)
        h = float(rig.height)
        rest_video = render_clips(rig, [rest_clip(rig, 16, 8.0)], [VIEW], size, size, device, **look)[0]
        rng = torch.Generator().manual_seed(args.seed)
        rand = MotionParams(rig, 16, 8.0, keys=4)
        with torch.no_grad():
            rand.rotvec.copy_(torch.randn(rand.rotvec.shape, generator=rng) * 0.4)
        rand_clip = rand.to_clip()
        rand_video = render_clips(rig, [rand_clip], [VIEW], size, size, device, **look)[0]
        for spec in MOTIONS[character]:
            if args.motions and spec.label not in args.motions.split(","):
                continue
            variations = sample_variations(args.gt // 2, 5, "train") + sample_variations(args.gt - args.gt // 2, 5, "heldout")
            gt_clips = [make_clip(rig, character, spec.label, v, 16, 8.0) for v in variations]
            gt_joints = [joints_rel(skeleton, c, h) for c in gt_clips]
            gt_videos = render_clips(rig, gt_clips, [VIEW] * len(gt_clips), size, size, device, **look)
            held = gt_videos[args.gt // 2 :]
            gt_labels, _ = judge.classify(held)
            totals["gt"] += [lab == spec.label for lab in gt_labels]
            base = {
                "rest": (
                    judge.classify(rest_video[None])[0][0],
                    joint_distance(joints_rel(skeleton, rest_clip(rig, 16), h), gt_joints),
                ),
                "random": (judge.classify(rand_video[None])[0][0], joint_distance(joints_rel(skeleton, rand_clip, h), gt_joints)),
            }
            for key, (lab, _) in base.items():
                totals[key].append(lab == spec.label)
            for phrasing in spec.heldout_phrasings[: args.phrasings]:
                t0 = time.time()
                cfg = DistillConfig(
                    steps=args.steps,
                    frames=16,
                    fps=8.0,
                    keys=16,  # the product's 48 frames at 24 fps carry 24 keys over the same span
                    height=size,
                    width=size,
                    seed=args.seed,
                    device=device,
                    start=args.start,
                    lr=args.lr,
                    root_lr=args.root_lr,
                    w_smooth=args.w_smooth,
                    w_skate=args.w_skate,
                    search=SearchSettings(guidance=args.sample_guidance, smooth=args.search_smooth),
                    allow_nearest=True,  # the figures are of the motion drawn for the phrasing, understood or not
                )
                request = JobRequest(rig, phrasing, cfg, init_pose=neutral_clip(rig))  # the library's standing pose
                result = run_request(request, prior=prior)
                seconds = time.time() - t0
                clip = result.clip
                video = render_clips(rig, [clip], [VIEW], size, size, device, **look)[0]
                label, probs = judge.classify(video[None])
                sample = prior.sample(
                    prior.encode_text(phrasing), generator=torch.Generator().manual_seed(args.seed), guidance=args.sample_guidance
                )  # the draw distill fitted
                s_label, _ = judge.classify(sample[None])
                row = {
                    "character": character,
                    "motion": spec.label,
                    "phrasing": phrasing,
                    "understood_as": result.facts.get("understood_as"),
                    "understood_motion": result.facts.get("motion"),
                    "judged": label[0],
                    "p": float(probs[0, judge.cfg.labels.index(spec.label)]),
                    "joint_dist": joint_distance(joints_rel(skeleton, clip, h), gt_joints),
                    "render_dist": render_distance(video.cpu(), gt_videos.cpu()),
                    "sample_judged": s_label[0],
                    "sample_render_dist": render_distance(sample.cpu(), gt_videos.cpu()),
                    "rest_joint_dist": base["rest"][1],
                    "random_joint_dist": base["random"][1],
                    "start": result.config.start,
                    "steps": result.config.steps,
                    "seconds": round(seconds, 1),
                }
                totals["distilled"].append(label[0] == spec.label)
                totals["sample"].append(s_label[0] == spec.label)
                rows.append(row)
                print(
                    f"{character:9s} {spec.label:10s} {phrasing[:38]:38s} → {label[0]:10s} p={row['p']:.2f} "
                    f"joint {row['joint_dist']:.3f} (rest {row['rest_joint_dist']:.3f}) render {row['render_dist']:.3f} "
                    f"(teacher sample {row['sample_render_dist']:.3f}, judged {s_label[0]}) {seconds:.0f}s",
                    flush=True,
                )
    acc = {k: (float(np.mean(v)) if v else float("nan")) for k, v in totals.items()}
    summary = {
        "device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
        "accuracy": acc,
        "mean_joint_dist": float(np.mean([r["joint_dist"] for r in rows])),
        "mean_rest_joint_dist": float(np.mean([r["rest_joint_dist"] for r in rows])),
        "mean_random_joint_dist": float(np.mean([r["random_joint_dist"] for r in rows])),
        "mean_render_dist": float(np.mean([r["render_dist"] for r in rows])),
        "mean_sample_render_dist": float(np.mean([r["sample_render_dist"] for r in rows])),
        "seconds_per_distillation": float(np.mean([r["seconds"] for r in rows])),
        "start": rows[-1]["start"],
        "steps": rows[-1]["steps"],
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "device")},
        "total_seconds": round(time.time() - start_all, 1),
    }
    print("\n| judge accuracy | held-out GT | distilled | teacher samples | rest pose | random motion |")
    print("|---|---|---|---|---|---|")
    print(
        f"| ({len(rows)} cases, {summary['device']}) | {acc['gt']:.0%} | {acc['distilled']:.0%} | {acc['sample']:.0%} | {acc['rest']:.0%} | {acc['random']:.0%} |"
    )
    print(
        f"\nmean joint distance to nearest GT (character heights): distilled {summary['mean_joint_dist']:.3f}, "
        f"rest {summary['mean_rest_joint_dist']:.3f}, random {summary['mean_random_joint_dist']:.3f}"
    )
    print(
        f"mean render RMSE to nearest GT: distilled {summary['mean_render_dist']:.3f}, teacher samples {summary['mean_sample_render_dist']:.3f}"
    )
    print(
        f"start {summary['start']}, {summary['steps']} steps, {summary['seconds_per_distillation']:.1f} s per distillation on {summary['device']}"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
