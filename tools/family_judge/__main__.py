"""Train and evaluate the any-body judge (run on a GPU): ``python -m tools.family_judge --out DIR``.

Renders the family's train members (:mod:`.data`), trains (:mod:`.train`), then evaluates on
held-out members no training clip came from: ground truth per kind and motion, the "none" clips,
shuffled / frozen / reversed ground truth, and artists' own clips when ``--artists`` names a folder
written by ``tests/bench/artist_fixtures.py``. Writes ``judge.safetensors`` + ``judge.json`` (config,
training figures, metrics) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from akd_blender.core.judging import judge_clip
from akd_blender.core.priors.tiny_model.judge import JudgeConfig
from akd_blender.core.procedural.family import HELDOUT_SEEDS, TRAIN_SEEDS
from tools.artist_clips import judge_artist_clips

from .data import JUDGE_KINDS, build, judge_labels
from .train import accuracy, corrupt, per_group_accuracy, train


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def judge_artists(judge, folder: Path) -> dict:
    """Each artist clip in ``folder`` rendered and judged (:func:`tools.artist_clips.judge_artist_clips`)."""
    return judge_artist_clips(folder, lambda rig, clip: judge_clip(rig, clip, judge), log)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.family_judge", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--train-members", type=int, default=200, help="train-split members per kind")
    ap.add_argument("--heldout-members", type=int, default=30, help="held-out members per kind (evaluation only)")
    ap.add_argument("--per-motion", type=int, default=2)
    ap.add_argument("--negatives", type=int, default=3, help="'none' clips per member (rest, wiggle, low amplitude)")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--channels", type=int, default=48)
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--artists", help="folder of artist rigs and clips (tests/bench/artist_fixtures.py)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    backend = args.backend if args.backend != "auto" else ("nvdiffrast" if args.device.startswith("cuda") else "torch")
    common = dict(per_motion=args.per_motion, negatives=args.negatives, size=args.size, device=args.device)
    common.update(backend=backend, workers=args.workers)
    t0 = time.time()
    train_seeds = {k: list(TRAIN_SEEDS)[: args.train_members] for k in JUDGE_KINDS}
    data = build(train_seeds, "train", **common)
    data_seconds = time.time() - t0
    log(f"train data {tuple(data['videos'].shape)} in {data_seconds:.0f} s ({len(data['items']) / data_seconds:.1f} clips/s)")
    held = build({k: list(HELDOUT_SEEDS)[: args.heldout_members] for k in JUDGE_KINDS}, "heldout", **common)
    log(f"held-out data {tuple(held['videos'].shape)}")
    labels = judge_labels()
    cfg = JudgeConfig(labels=labels, frames=16, height=args.size, width=args.size, channels=args.channels)
    judge, stats = train(
        data["videos"], data["label"], data["reversible"], cfg, args.seconds, args.batch, args.lr, args.seed, args.device, log
    )
    log(f"trained: {stats}")
    none = len(labels) - 1
    gt = held["label"] != none
    v, lab = held["videos"][gt], held["label"][gt]
    groups = [f"{i.kind}/{i.label}" for i, g in zip(held["items"], gt.tolist()) if g]
    gen = torch.Generator().manual_seed(1)
    nlab = torch.full((len(v),), none)
    shuffled = corrupt(v.float() / 255, torch.ones(len(v), dtype=torch.bool), gen)  # shuffle or freeze
    rev_ok = ~held["reversible"][gt]
    metrics = {
        "heldout_gt": accuracy(judge, v, lab),
        "heldout_per_motion": per_group_accuracy(judge, v, lab, groups),
        "heldout_per_kind": per_group_accuracy(judge, v, lab, [g.split("/")[0] for g in groups]),
        "heldout_none_clips": accuracy(judge, held["videos"][~gt], held["label"][~gt]),
        "shuffled_or_frozen_as_none": accuracy(judge, (shuffled * 255).to(torch.uint8), nlab),
        "reversed_as_none": accuracy(judge, v[rev_ok].flip(1), nlab[: int(rev_ok.sum())]) if rev_ok.any() else None,
        "train_clips": len(data["items"]),
        "heldout_clips": len(held["items"]),
        "data_seconds": round(data_seconds, 1),
    }
    if args.artists:
        judge.net.cpu()
        judge.device = torch.device("cpu")
        metrics["artists"] = judge_artists(judge, Path(args.artists))
    log(json.dumps({k: v for k, v in metrics.items() if k != "artists"}, indent=1))
    judge.net.cpu()
    judge.save(out, {"training": {**stats, **vars(args)}, "metrics": metrics})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
