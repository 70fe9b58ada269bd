"""Training of the embedded teacher and the judge (run on a GPU: ``python -m tools.teacher train``).

One run: render the library (train split: GT clips + low-amplitude / rest negatives for the judge;
held-out split: other variations and views), train the teacher for a time budget (v-prediction,
text dropout, EMA), train the judge on train-split GT + hard negatives, evaluate the judge on
held-out GT and corruptions and the teacher's samples for the held-out phrasings, and write
``teacher.safetensors`` (fp16) + ``teacher.json`` + ``judge.safetensors`` + ``judge.json`` +
``metrics.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from akd_blender.core.motion.library.labelled import LABELS, NONE_LABEL, motion_spec, prompt_vocabulary
from akd_blender.core.prompt.sentence_encoder import PhraseTable, PromptMatcher
from akd_blender.core.video_models.tiny_network import (
    TeacherConfig,
    build_scheduler,
    build_unet,
    model_input,
    pack,
    sample_videos,
    save_weights,
    text_condition,
)
from tools.teacher.video_judge import Judge, JudgeConfig, JudgeNet, hard_negatives

from .dataset import MOTION_KEYS, VIEWS, build_dataset

__all__ = ["train_teacher", "train_judge", "main", "phrase_indices"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def phrase_indices(table: PhraseTable, split: str = "train") -> list[list[int]]:
    """For every MOTION_KEYS entry, the table rows of its ``split`` phrasings."""
    out = []
    for character, label in MOTION_KEYS:
        spec = motion_spec(character, label)
        phrases = spec.phrasings if split == "train" else spec.heldout_phrasings
        out.append([table.index[p] for p in phrases])
    return out


def train_teacher(
    videos: torch.Tensor,
    motion: torch.Tensor,
    table: PhraseTable,
    cfg: TeacherConfig,
    seconds: float,
    batch: int = 64,
    lr: float = 3e-4,
    seed: int = 0,
    device: str = "cuda",
    ema_decay: float = 0.999,
    rows: list[list[int]] | None = None,
    firsts: torch.Tensor | None = None,
    checkpoint: Path | None = None,
    checkpoint_every: float = 60.0,
    init: dict | None = None,
) -> tuple[torch.nn.Module, dict]:
    """Train the UNet on GT clips ``videos`` uint8 [N,F,3,H,W] (motion index [N]) for ``seconds``.

    ``rows``: each motion index's phrase-table rows (default: :data:`MOTION_KEYS`' train phrasings);
    ``firsts`` uint8 [N,3,H,W]: each clip's first frame (an image teacher, ``cfg.condition="image"``).
    ``checkpoint``: a file the model, EMA, optimiser, step and elapsed time are saved to every
    ``checkpoint_every`` seconds; when it exists, training resumes from it (the learning-rate
    schedule and the time budget continue where they stopped). ``init``: a state dict the model (and
    its EMA) start from instead of random weights (a checkpoint, when there is one, wins)."""
    torch.manual_seed(seed)
    gen = torch.Generator(device).manual_seed(seed)
    unet = build_unet(cfg).to(device).train()
    if init is not None:
        unet.load_state_dict(init)
    ema = copy.deepcopy(unet).eval().requires_grad_(False)
    sched = build_scheduler(cfg)
    alphas = sched.alphas_cumprod.to(device)
    opt = torch.optim.AdamW(unet.parameters(), lr=lr, weight_decay=0.01)
    step, done_before = 0, 0.0
    if checkpoint is not None and Path(checkpoint).is_file():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        unet.load_state_dict(state["unet"])
        ema.load_state_dict(state["ema"])
        opt.load_state_dict(state["opt"])
        step, done_before = int(state["step"]), float(state["elapsed"])
        gen.set_state(state["generator"].cpu())
        log(f"resumed from {checkpoint} at step {step} ({done_before:.0f}s done)")
    vecs = torch.as_tensor(table.vectors, device=device)
    rows = rows if rows is not None else phrase_indices(table, "train")
    counts = torch.tensor([len(r) for r in rows], device=device)
    padded = torch.tensor([r + [r[0]] * (max(counts.tolist()) - len(r)) for r in rows], device=device)
    videos, motion = videos.to(device), motion.to(device)
    firsts = firsts.to(device) if firsts is not None else None
    n, losses, start, saved = videos.shape[0], [], time.time() - done_before, time.time()
    amp = dict(device_type="cuda", dtype=torch.bfloat16) if device.startswith("cuda") else dict(device_type="cpu", enabled=False)
    while time.time() - start < seconds:
        frac = (time.time() - start) / seconds
        for g in opt.param_groups:  # warm-up, then cosine decay over the time budget
            g["lr"] = lr * min(1.0, (step + 1) / 200) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))))
        idx = torch.randint(0, n, (batch,), device=device, generator=gen)
        x0 = pack(videos[idx].float() / 255)
        m = motion[idx]
        pick = (torch.rand(batch, device=device, generator=gen) * counts[m]).long()
        text = vecs[padded[m, pick]]
        drop = torch.rand(batch, device=device, generator=gen) < cfg.text_dropout
        text = torch.where(drop[:, None], torch.zeros_like(text), text)
        t = torch.randint(0, cfg.train_timesteps, (batch,), device=device, generator=gen)
        noise = torch.randn(x0.shape, device=device, generator=gen)
        a = alphas[t].sqrt().view(-1, 1, 1, 1)
        s = (1 - alphas[t]).sqrt().view(-1, 1, 1, 1)
        xt, v = a * x0 + s * noise, a * noise - s * x0
        first = firsts[idx].float() / 255 if firsts is not None else None
        with torch.autocast(**amp):
            pred = unet(model_input(xt, first), t, **text_condition(text, xt.dtype)).sample
        loss = F.mse_loss(pred.float(), v)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            d = min(ema_decay, (1 + step) / (10 + step))
            for pe, p in zip(ema.parameters(), unet.parameters()):
                pe.lerp_(p, 1 - d)
        losses.append(loss.detach())
        step += 1
        if step % 500 == 0:
            losses = [torch.stack(losses).mean()]
            log(f"teacher step {step} loss {float(losses[0]):.4f} ({time.time() - start:.0f}s)")
        if checkpoint is not None and time.time() - saved > checkpoint_every:
            _save_checkpoint(checkpoint, unet, ema, opt, step, time.time() - start, gen)
            saved = time.time()
    if checkpoint is not None:
        _save_checkpoint(checkpoint, unet, ema, opt, step, time.time() - start, gen)
    stats = {
        "steps": step,
        "seconds": round(time.time() - start, 1),
        "final_loss": float(torch.stack(losses).mean()),
        "batch": batch,
        "lr": lr,
    }
    return ema, stats


def _save_checkpoint(path: Path, unet, ema, opt, step: int, elapsed: float, gen: torch.Generator) -> None:
    tmp = Path(path).with_suffix(".tmp")
    state = {"unet": unet.state_dict(), "ema": ema.state_dict(), "opt": opt.state_dict()}
    torch.save({**state, "step": step, "elapsed": elapsed, "generator": gen.get_state()}, tmp)
    tmp.replace(path)


def train_judge(
    videos: torch.Tensor,
    labels: torch.Tensor,
    reversible: torch.Tensor,
    cfg: JudgeConfig,
    seconds: float,
    batch: int = 64,
    seed: int = 0,
    device: str = "cuda",
) -> tuple[Judge, dict]:
    """Train the judge on uint8 clips [N,F,3,H,W] with labels [N]; each batch adds hard negatives
    (shuffled / frozen / reversed copies of its GT clips, labelled "none"). ``reversible`` [N]: the
    clip's motion is time-symmetric (no reversal negative)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    net = JudgeNet(cfg).to(device).train()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)
    none = cfg.labels.index(NONE_LABEL)
    videos, labels, reversible = videos.to(device), labels.to(device), reversible.to(device)
    gt = torch.nonzero(labels != none).flatten()
    n, step, start, losses = videos.shape[0], 0, time.time(), []
    amp = dict(device_type="cuda", dtype=torch.bfloat16) if device.startswith("cuda") else dict(device_type="cpu", enabled=False)
    while time.time() - start < seconds:
        idx = torch.randint(0, n, (batch,), generator=gen).to(device)
        neg = gt[torch.randint(0, len(gt), (batch // 3,), generator=gen).to(device)]
        x = videos[idx].float() / 255
        xn = hard_negatives(videos[neg].float() / 255, reversible[neg], gen)
        x = torch.cat([x, xn])
        y = torch.cat([labels[idx], torch.full((len(neg),), none, device=device)])
        # Degradations (noise, blur) so teacher-like and distilled renders are judged by their motion, not pixel detail.
        sigma = 0.08 * torch.rand(x.shape[0], 1, 1, 1, 1, device=device)
        x = x + sigma * torch.randn_like(x)
        blur = torch.rand(x.shape[0], device=device) < 0.5
        if blur.any():
            b = x[blur].flatten(0, 1)
            b = F.interpolate(F.avg_pool2d(b, 2), scale_factor=2, mode="bilinear", align_corners=False)
            x[blur] = b.view(-1, *x.shape[1:])
        with torch.autocast(**amp):
            logits = net(x)
        loss = F.cross_entropy(logits.float(), y, label_smoothing=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        step += 1
        if step % 1000 == 0:
            log(f"judge step {step} loss {np.mean(losses[-200:]):.4f}")
    judge = Judge(net.eval(), cfg, device)
    return judge, {"steps": step, "seconds": round(time.time() - start, 1), "final_loss": float(np.mean(losses[-100:]))}


def _accuracy(judge: Judge, videos: torch.Tensor, labels: torch.Tensor) -> float:
    pred = judge.probabilities(videos).argmax(-1)
    return float((pred == labels.cpu()).float().mean())


def _judge_samples(judge: Judge, unet, cfg: TeacherConfig, vectors, texts, rows, want, device, seed, steps):
    """Teacher samples for text embeddings ``vectors`` [N,384] (DDIM, guidance 3), judged: the videos,
    the share judged as ``want`` [N], and that share per motion (``texts``: phrase rows, ``rows``:
    each motion's phrase rows)."""
    emb = torch.as_tensor(vectors, device=device)
    gen = torch.Generator(device).manual_seed(seed)
    vids = torch.cat(
        [sample_videos(unet, cfg, emb[i : i + 64], guidance=3.0, steps=steps, generator=gen) for i in range(0, len(emb), 64)]
    )
    pred = judge.probabilities(vids).argmax(-1)
    per = {}
    for m, (c, lab) in enumerate(MOTION_KEYS):
        sel = torch.tensor([i for i, t in enumerate(texts) if t in rows[m]])
        per[f"{c}:{lab}"] = float((pred[sel] == LABELS.index(lab)).float().mean())
    return vids, float((pred == torch.tensor(want)).float().mean()), per


def evaluate(
    judge: Judge,
    held: dict,
    unet,
    cfg: TeacherConfig,
    table: PhraseTable,
    device: str,
    samples: int = 4,
    seed: int = 0,
    steps: int = 30,
):
    """Judge accuracy on held-out GT and corruptions, and on the teacher's samples for held-out phrasings."""
    none = LABELS.index(NONE_LABEL)
    gt = held["label"] != none
    g = torch.Generator().manual_seed(seed)
    v = held["videos"][gt]
    rev = torch.tensor([motion_spec(*MOTION_KEYS[int(m)]).time_symmetric for m in held["motion"][gt]])
    out = {
        "heldout_gt": _accuracy(judge, v, held["label"][gt]),
        "heldout_negatives": _accuracy(judge, held["videos"][~gt], held["label"][~gt]),
    }
    f = v.shape[1]
    shuffled = torch.stack([x[torch.randperm(f, generator=g)] for x in v])
    frozen = v[:, :1].expand_as(v)
    reversed_ = v[~rev].flip(1)
    nlab = lambda k: torch.full((k,), none)
    out["shuffled_as_none"] = _accuracy(judge, shuffled, nlab(len(v)))
    out["frozen_as_none"] = _accuracy(judge, frozen, nlab(len(v)))
    out["reversed_as_none"] = _accuracy(judge, reversed_, nlab(len(reversed_)))
    # Teacher samples for each held-out phrasing, as written and as the prior understands it
    # (the trained phrasing :func:`.text.understand` picks, as TinyPrior.encode_text does).
    rows = phrase_indices(table, "heldout")
    texts, want = [], []
    for m, r in enumerate(rows):
        for i in r:
            texts += [i] * samples
            want += [LABELS.index(MOTION_KEYS[m][1])] * samples
    known = [row for row in prompt_vocabulary() if row[0] in table]
    matcher = PromptMatcher(known, table.encode([p for p, _, _ in known]))
    snapped = [table.index[matcher.wordings[matcher.match(torch.as_tensor(table.vectors[i]))[0]]] for i in texts]
    vids, out["teacher_samples_heldout_phrasing"], out["teacher_samples_per_motion"] = _judge_samples(
        judge, unet, cfg, table.vectors[texts], texts, rows, want, device, seed, steps
    )
    _, out["teacher_samples_heldout_snapped"], out["teacher_samples_snapped_per_motion"] = _judge_samples(
        judge, unet, cfg, table.vectors[snapped], texts, rows, want, device, seed, steps
    )
    return out, (vids.cpu(), torch.tensor(want))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.teacher train", description=__doc__)
    ap.add_argument("--out", required=True, help="output folder for weights, configs and metrics")
    ap.add_argument("--phrases", required=True, help="phrase embedding table (.npz from `tiny embed`)")
    ap.add_argument("--seconds", type=float, default=240, help="teacher training time budget")
    ap.add_argument("--judge-seconds", type=float, default=45)
    ap.add_argument("--per-motion", type=int, default=160, help="train-split variations per motion")
    ap.add_argument("--heldout-per-motion", type=int, default=16)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--render-batch", type=int, default=48)
    ap.add_argument("--eval-samples", type=int, default=4, help="teacher samples per held-out phrasing to judge")
    ap.add_argument("--eval-steps", type=int, default=30, help="DDIM steps of those samples")
    ap.add_argument("--size", type=int, default=TeacherConfig.height, help="video height = width in pixels")
    ap.add_argument("--ground", choices=("checker", "plain"), default=TeacherConfig.ground)
    ap.add_argument("--fill", type=float, default=TeacherConfig.fill, help="fraction of the image the character fills")
    ap.add_argument(
        "--views", choices=VIEWS, default=TeacherConfig.views, help="the teacher's training views (the judge's always vary)"
    )
    ap.add_argument("--judge-from", help="folder of an existing judge to evaluate with instead of training one")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = args.device
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    cfg = TeacherConfig(height=args.size, width=args.size, ground=args.ground, fill=args.fill, views=args.views)
    look = {"style": cfg.scene_style(), "camera_options": {"fill": cfg.fill}}
    table = PhraseTable.load(args.phrases)
    t0 = time.time()
    split = dict(
        seed=args.seed, height=cfg.height, width=cfg.width, frames=cfg.frames, device=dev, batch=args.render_batch, **look
    )
    # The judge's data: varied views with hard negatives (not needed when an existing judge is reused).
    train = None if args.judge_from else build_dataset("train", args.per_motion, low_amplitude=12, rest=60, **split)
    reuse = train is not None and args.views == "varied"  # the judge's clips are the teacher's too
    teacher_data = train if reuse else build_dataset("train", args.per_motion, views=args.views, **split)
    log(f"rendered train split {tuple(teacher_data['videos'].shape)} in {time.time() - t0:.0f}s")
    t1 = time.time()
    held = build_dataset("heldout", args.heldout_per_motion, low_amplitude=2, rest=8, **split)
    log(f"rendered held-out split {tuple(held['videos'].shape)} in {time.time() - t1:.0f}s")
    gt = teacher_data["motion"] >= 0
    unet, tstats = train_teacher(
        teacher_data["videos"][gt], teacher_data["motion"][gt], table, cfg, args.seconds, args.batch, args.lr, args.seed, dev
    )
    log(f"teacher: {tstats}")
    if args.judge_from:
        judge, jstats = (
            Judge.load(args.judge_from, dev),
            json.loads((Path(args.judge_from) / "judge.json").read_text())["training"],
        )
    else:
        jcfg = JudgeConfig(labels=LABELS, frames=cfg.frames, height=cfg.height, width=cfg.width)
        rev = torch.tensor([bool(m < 0) or motion_spec(*MOTION_KEYS[int(m)]).time_symmetric for m in train["motion"]])
        judge, jstats = train_judge(train["videos"], train["label"], rev, jcfg, args.judge_seconds, seed=args.seed, device=dev)
    log(f"judge: {jstats}")
    unet.eval()
    metrics, (samples, want) = evaluate(judge, held, unet, cfg, table, dev, args.eval_samples, args.seed, args.eval_steps)
    log(f"metrics: {json.dumps(metrics)}")
    shards = save_weights(unet, out)
    record = {
        "config": cfg.to_dict(),
        "training": {
            **tstats,
            "seed": args.seed,
            "per_motion": args.per_motion,
            "device": torch.cuda.get_device_name() if dev.startswith("cuda") else dev,
        },
        "data": {
            "train_clips": int(gt.sum()),
            "heldout_clips": int((held["motion"] >= 0).sum()),
            "render_seconds": round(t1 - t0, 1),
        },
        "weights": shards,
        "command": "python -m tools.teacher train " + " ".join(argv or []),
    }
    (out / "teacher.json").write_text(json.dumps(record, indent=1))
    judge.net.cpu()
    judge.save(out, {"training": {**jstats, "seed": args.seed}, "metrics": metrics})
    (out / "metrics.json").write_text(
        json.dumps({"teacher": tstats, "judge": jstats, "eval": metrics, "total_seconds": round(time.time() - t0, 1)}, indent=1)
    )
    torch.save({"samples": (samples[:, ::2] * 255).to(torch.uint8), "want": want}, out / "samples.pt")
    log(f"done in {time.time() - t0:.0f}s")
    return 0
