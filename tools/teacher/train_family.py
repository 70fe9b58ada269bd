"""Training of the image teacher on the character family (``python -m tools.teacher train-family``).

One run renders the role motion library on family members (train seeds; held-out seeds for its
evaluation, see :mod:`.family_data`), trains a ``condition="image"`` teacher for a time budget
(v-prediction, text dropout, EMA; checkpoints every minute, so a stopped run resumes with the same
command), evaluates it on held-out members and held-out phrasings (denoising loss per noise level,
and drawn videos saved next to their true clips for contact sheets), and writes the shipped files to
``--out``: ``teacher-*.safetensors`` (fp16) + ``teacher.json`` (config, training figures, the exact
command) + ``phrases.npz`` (the phrase table it was trained with).

The rendered data is cached in ``--out/data.pt`` (re-used by a resumed run). ``--phrases`` is a table
holding every library phrasing (``python -m tools.teacher embed-library``; the text encoder does not
need to be on the training machine).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import torch

from akd_blender.core.prompt.sentence_encoder import PhraseTable
from akd_blender.core.video_models.tiny_network import (
    TeacherConfig,
    build_scheduler,
    load_weights,
    model_input,
    pack,
    sample_videos,
    save_weights,
    text_condition,
)

from .dataset import as_uint8
from .family_data import FAMILY_MOTIONS, build_family_dataset, motion_phrase_rows
from .train import log, train_teacher

__all__ = ["main", "evaluate_family"]


@torch.no_grad()
def evaluate_family(unet, cfg: TeacherConfig, held: dict, table: PhraseTable, device: str, seed: int = 0) -> tuple[dict, dict]:
    """Held-out figures: v-prediction MSE at t = 100, 400, 700 (held-out phrasings, true first frames;
    also with a first frame of another member, to show the image is used) and one drawing per
    held-out clip (DDIM 30 steps, CFG 3). Returns (metrics, {"drawn", "truth", "firsts"} uint8)."""
    rows = motion_phrase_rows(table.index, "heldout")
    vecs = torch.as_tensor(table.vectors, device=device)
    alphas = build_scheduler(cfg).alphas_cumprod.to(device)
    gen = torch.Generator(device).manual_seed(seed)
    videos = held["videos"].to(device).float() / 255
    firsts = held["firsts"].to(device).float() / 255
    text = vecs[torch.tensor([rows[int(m)][0] for m in held["motion"]], device=device)]
    x0 = pack(videos)
    out = {}
    for k in (100, 400, 700):
        t = torch.full((x0.shape[0],), k, device=device)
        noise = torch.randn(x0.shape, device=device, generator=gen)
        a, s = alphas[k].sqrt(), (1 - alphas[k]).sqrt()
        xt, v = a * x0 + s * noise, a * noise - s * x0
        for name, first in (("own", firsts), ("other", firsts.roll(1, 0))):
            pred = torch.cat(
                [
                    unet(
                        model_input(xt[i : i + 64], first[i : i + 64]),
                        t[i : i + 64],
                        **text_condition(text[i : i + 64], xt.dtype),
                    ).sample
                    for i in range(0, len(xt), 64)
                ]
            )
            out[f"v_mse_t{k}_{name}_first_frame"] = float(torch.nn.functional.mse_loss(pred.float(), v))
    drawn = torch.cat(
        [
            sample_videos(unet, cfg, text[i : i + 64], guidance=3.0, steps=30, generator=gen, first_frame=firsts[i : i + 64])
            for i in range(0, len(text), 64)
        ]
    )
    out["drawn_vs_truth_rmse"] = float((drawn - videos).pow(2).mean().sqrt())
    out["drawn_frame0_vs_first_frame_rmse"] = float((drawn[:, 0] - firsts).pow(2).mean().sqrt())
    return out, {"drawn": as_uint8(drawn), "truth": held["videos"], "firsts": held["firsts"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.teacher train-family", description=__doc__)
    ap.add_argument("--out", required=True, help="output folder (weights, config, data cache, checkpoint)")
    ap.add_argument("--phrases", required=True, help="phrase table (.npz) holding every library phrasing")
    ap.add_argument("--seconds", type=float, default=420, help="training time budget (all resumed runs together)")
    ap.add_argument("--clips", type=int, default=8192, help="train clips (members × 4 motions)")
    ap.add_argument("--heldout-clips", type=int, default=148)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=32, help="video height = width in pixels")
    ap.add_argument("--fill", type=float, default=0.8)
    ap.add_argument("--ground", choices=("checker", "plain"), default="plain")
    ap.add_argument("--channels", default="128,128,160,192", help="UNet block widths")
    ap.add_argument("--init", help="a teacher folder (teacher.json + weights) to continue training from")
    ap.add_argument("--stop-at", type=float, help="unix time by which training stops (evaluation and saving follow)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--backend", default="nvdiffrast" if torch.cuda.is_available() else "torch")
    ap.add_argument("--workers", type=int, default=0, help="processes that make the members and clips (0: this one)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    cfg = TeacherConfig(
        height=args.size,
        width=args.size,
        channels=tuple(int(c) for c in args.channels.split(",")),
        ground=args.ground,
        fill=args.fill,
        views="canonical",
        condition="image",
    )
    table = PhraseTable.load(args.phrases)
    t0 = time.time()
    cache = out / "data.pt"
    if cache.is_file():
        data = torch.load(cache, weights_only=False)
        log(f"loaded rendered data from {cache}")
    else:
        look = dict(style=cfg.scene_style(), camera_options=cfg.camera_options(), device=args.device, backend=args.backend)
        look["workers"] = args.workers
        size = dict(height=cfg.height, width=cfg.width, frames=cfg.frames, fps=cfg.fps)
        train = build_family_dataset("train", args.clips, args.seed, **size, **look)
        t1 = time.time()
        held = build_family_dataset("heldout", args.heldout_clips, args.seed, **size, **look)
        data = {
            "train": train,
            "heldout": held,
            "render_seconds": round(t1 - t0, 1),
            "heldout_seconds": round(time.time() - t1, 1),
        }
        torch.save(data, cache)
        log(f"rendered {tuple(train['videos'].shape)} in {t1 - t0:.0f}s ({len(train['items']) / (t1 - t0):.1f} clips/s)")
    train, held = data["train"], data["heldout"]
    rows = motion_phrase_rows(table.index, "train")
    seconds = args.seconds if args.stop_at is None else min(args.seconds, args.stop_at - time.time())
    init = None
    if args.init:
        record = json.loads((Path(args.init) / "teacher.json").read_text())
        if TeacherConfig.from_dict(record["config"]).to_dict() != cfg.to_dict():
            raise SystemExit(f"--init {args.init}: its config differs from this run's ({record['config']})")
        init = load_weights(args.init, record["weights"])
        log(f"starting from the weights in {args.init} ({record['training']['steps']} steps)")
    unet, stats = train_teacher(
        train["videos"],
        train["motion"],
        table,
        cfg,
        seconds,
        args.batch,
        args.lr,
        args.seed,
        args.device,
        rows=rows,
        firsts=train["firsts"],
        checkpoint=out / "checkpoint.pt",
        init=init,
    )
    log(f"teacher: {stats}")
    if stats["seconds"] < args.seconds:
        log("time budget not used up (stopped early?)")
    unet.eval()
    metrics, drawings = evaluate_family(unet, cfg, held, table, args.device, args.seed)
    log(f"held-out: {json.dumps(metrics)}")
    for old in out.glob("teacher-*.safetensors"):
        old.unlink()
    shards = save_weights(unet, out)
    if Path(args.phrases).resolve() != (out / "phrases.npz").resolve():
        shutil.copyfile(args.phrases, out / "phrases.npz")
    members = {(it.kind, it.seed) for it in train["items"]}
    record = {
        "config": cfg.to_dict(),
        "training": {
            **stats,
            "steps_before": 0
            if init is None
            else int(record["training"].get("steps", 0) + record["training"].get("steps_before", 0)),
            "seed": args.seed,
            "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device,
        },
        "data": {
            "train_clips": len(train["items"]),
            "train_members": len(members),
            "motions": [f"{k}:{label}" for k, label in FAMILY_MOTIONS],
            "heldout_clips": len(held["items"]),
            "render_seconds": data["render_seconds"],
        },
        "heldout": metrics,
        "weights": shards,
        "command": "python -m tools.teacher train-family " + " ".join(argv or []),
    }
    (out / "teacher.json").write_text(json.dumps(record, indent=1))
    torch.save(drawings, out / "heldout_drawings.pt")
    log(f"done in {time.time() - t0:.0f}s")
    return 0
