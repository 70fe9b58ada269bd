"""Train and evaluate the motion judge: ``python -m tools.motion_judge --out DIR [--artists DIR]``.

Body tracks of the family's train members (:mod:`.data`); each batch adds shuffled / frozen /
reversed copies labelled "none", then mirrors half the clips, adds the secondary motion artists'
clips have and the library's do not (:func:`.augment.secondary_motion`: sway, tilt, a swinging tail and head,
higher or lower foot lifts), gives half of them limb-by-limb differences (:func:`.augment.limb_jitter`: each
slot's own scale and phase, smooth noise), scales the tracks by 0.85–1.15 (a height read differently) and adds noise. Evaluated on held-out members, their "none" clips, corrupted
held-out ground truth and, with ``--artists`` (a folder from ``tests/bench/artist_fixtures.py``),
artists' own clips with roles from :func:`~akd_blender.core.character.roles.find_roles`. Writes
``motion_judge.safetensors`` + ``motion_judge.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.judge import MotionJudge, MotionJudgeConfig, MotionJudgeNet, mirror_tracks
from tools.artist_clips import judge_artist_clips
from tools.family import HELDOUT_SEEDS, TRAIN_SEEDS

from .augment import corrupt, limb_jitter, secondary_motion
from .clips import JUDGE_KINDS, judge_labels
from .data import build_tracks

JITTER_SHARE = 0.5
"""The share of each batch given :func:`.augment.limb_jitter`."""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def train(
    data: dict, cfg: MotionJudgeConfig, seconds: float, batch: int, lr: float, seed: int, device: str
) -> tuple[MotionJudge, dict]:
    """Train for ``seconds`` → (judge, {"steps", "seconds", "final_loss"})."""
    torch.manual_seed(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    net = MotionJudgeNet(cfg).to(device).train()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.02)
    none = len(cfg.labels) - 1
    x_all, y_all, rev = data["tracks"].to(device), data["label"].to(device), data["reversible"].to(device)
    gt = torch.nonzero(y_all != none).flatten()
    class_weight = torch.ones(len(cfg.labels), device=device)
    class_weight[none] = 0.5  # an unfamiliar motion should lean to the nearest known one, not to "none"
    step, start, losses = 0, time.time(), []
    while time.time() - start < seconds:
        frac = (time.time() - start) / seconds
        for group in opt.param_groups:
            group["lr"] = lr * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * frac)))
        idx = torch.randint(0, len(x_all), (batch,), generator=gen, device=device)
        neg = gt[torch.randint(0, len(gt), (batch // 4,), generator=gen, device=device)]
        x = torch.cat([x_all[idx], corrupt(x_all[neg], rev[neg], gen)])
        y = torch.cat([y_all[idx], torch.full((len(neg),), none, device=device)])
        flip = torch.rand(len(x), generator=gen, device=device) < 0.5
        x = torch.where(flip[:, None, None], mirror_tracks(x), x)
        x = secondary_motion(x, gen)
        jitter = torch.rand(len(x), generator=gen, device=device) < JITTER_SHARE
        x = torch.where(jitter[:, None, None], limb_jitter(x, gen), x)
        scale = 0.85 + 0.3 * torch.rand(len(x), 1, 1, generator=gen, device=device)
        x = x * scale + 0.01 * torch.randn(x.shape, generator=gen, device=device)
        loss = F.cross_entropy(net(x), y, weight=class_weight, label_smoothing=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        step += 1
        if step % 2000 == 0:
            log(f"step {step} loss {np.mean(losses[-500:]):.4f}")
    return MotionJudge(net.eval(), cfg, device), {
        "steps": step,
        "seconds": round(time.time() - start, 1),
        "final_loss": float(np.mean(losses[-200:])),
    }


def accuracy(judge: MotionJudge, tracks: torch.Tensor, labels: torch.Tensor, groups: list[str] | None = None):
    """Share judged as ``labels``; per group name when ``groups`` is given."""
    right = (judge.probabilities(tracks).argmax(-1) == labels.cpu()).numpy()
    if groups is None:
        return float(right.mean())
    names = np.array(groups)
    return {g: round(float(right[names == g].mean()), 3) for g in sorted(set(groups))}


def evaluate(judge: MotionJudge, held: dict) -> dict:
    """The judge on held-out tracks (:func:`.data.build_tracks`): ground truth overall, per kind and per
    kind/motion; "none" clips by source; the ground truth shuffled or frozen, and reversed where that
    is no longer the motion, as "none"."""
    none = len(judge.cfg.labels) - 1
    gt = held["label"] != none
    x, y = held["tracks"][gt], held["label"][gt]
    groups = [f"{i.kind}/{i.label}" for i, g in zip(held["items"], gt.tolist()) if g]
    gen = torch.Generator().manual_seed(1)
    nlab = torch.full((len(x),), none)
    rev_ok = ~held["reversible"][gt]
    negatives = [i.source for i, g in zip(held["items"], gt.tolist()) if not g]
    return {
        "heldout_gt": accuracy(judge, x, y),
        "heldout_per_kind": accuracy(judge, x, y, [g.split("/")[0] for g in groups]),
        "heldout_per_motion": accuracy(judge, x, y, groups),
        "heldout_none_by_source": accuracy(judge, held["tracks"][~gt], held["label"][~gt], negatives),
        "shuffled_or_frozen_as_none": accuracy(judge, corrupt(x, torch.ones(len(x), dtype=torch.bool), gen), nlab),
        "reversed_as_none": accuracy(judge, x[rev_ok].flip(1), nlab[: int(rev_ok.sum())]),
    }


def judge_artists(judge: MotionJudge, folder: Path) -> dict:
    """Each artist clip in ``folder`` judged with roles from find_roles (:func:`tools.artist_clips.judge_artist_clips`)."""
    return judge_artist_clips(folder, lambda rig, clip: judge.judge(rig, find_roles(rig), clip), log)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.motion_judge", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--train-members", type=int, default=300, help="train-split members per kind")
    ap.add_argument("--heldout-members", type=int, default=30, help="held-out members per kind")
    ap.add_argument("--per-motion", type=int, default=3)
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument(
        "--threads", type=int, default=0, help="torch CPU threads (0: torch's default; 1 is faster on a busy machine)"
    )
    ap.add_argument("--artists")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    t0 = time.time()
    common = dict(per_motion=args.per_motion, negatives=args.negatives, workers=args.workers)
    data = build_tracks({k: list(TRAIN_SEEDS)[: args.train_members] for k in JUDGE_KINDS}, "train", **common)
    data_seconds = time.time() - t0
    log(f"train tracks {tuple(data['tracks'].shape)} in {data_seconds:.0f} s ({len(data['items']) / data_seconds:.0f} clips/s)")
    held = build_tracks({k: list(HELDOUT_SEEDS)[: args.heldout_members] for k in JUDGE_KINDS}, "heldout", **common)
    cfg = MotionJudgeConfig(
        labels=judge_labels(), frames=data["tracks"].shape[1], channels=data["tracks"].shape[2], width=args.width
    )
    judge, stats = train(data, cfg, args.seconds, args.batch, args.lr, args.seed, args.device)
    log(f"trained: {stats}")
    judge.net.cpu()
    judge.device = torch.device("cpu")
    metrics = {
        **evaluate(judge, held),
        "train_clips": len(data["items"]),
        "heldout_clips": len(held["items"]),
        "data_seconds": round(data_seconds, 1),
        "clips_per_second": round(len(data["items"]) / data_seconds, 1),
    }
    if args.artists:
        metrics["artists"] = judge_artists(judge, Path(args.artists))
    log(json.dumps({k: v for k, v in metrics.items() if k not in ("heldout_per_motion",)}, indent=1))
    log(json.dumps(metrics["heldout_per_motion"]))
    judge.save(args.out, {"training": {**stats, **vars(args)}, "metrics": metrics})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
