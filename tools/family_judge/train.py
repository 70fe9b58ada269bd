"""Training and evaluation of the any-body judge.

Each batch: ground-truth clips of the family plus hard negatives made from them (shuffled, frozen,
reversed where the motion has a time direction) labelled "none"; then appearance augmentations so
the judge reads motion, not colours: a random colour mix per clip (channel permutation with gains,
sometimes grey), brightness and contrast, a mirror flip, noise and blur.
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F

from akd_blender.core.priors.tiny_model.judge import Judge, JudgeConfig, JudgeNet

__all__ = ["corrupt", "augment", "train", "accuracy", "per_group_accuracy"]


def corrupt(x: torch.Tensor, reversible: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """ "none" examples from clips [B,F,...]: each is frame-shuffled, frozen on one frame or (where
    ``reversible`` [B] is False) played backwards, chosen at random per clip (``generator`` on x's device)."""
    b, f = x.shape[:2]
    dev = x.device
    kind = torch.randint(0, 3, (b,), generator=generator, device=dev)
    kind = torch.where(reversible & (kind == 2), torch.zeros_like(kind), kind)
    shuffled = torch.rand(b, f, generator=generator, device=dev).argsort(1)
    frozen = torch.randint(0, f, (b, 1), generator=generator, device=dev).expand(b, f)
    backwards = torch.arange(f - 1, -1, -1, device=dev).expand(b, f)
    order = torch.where((kind == 0)[:, None], shuffled, torch.where((kind == 1)[:, None], frozen, backwards))
    return x[torch.arange(b, device=dev)[:, None], order]


def augment(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Appearance augmentations of clips [B,F,3,H,W] in [0,1] (one draw per clip, the same for all its
    frames); ``generator`` is on the clips' device."""
    b, dev = x.shape[0], x.device

    def rand(*shape):
        return torch.rand(*shape, generator=generator, device=dev)

    perm = rand(b, 3).argsort(1)
    mix = torch.zeros(b, 3, 3, device=dev).scatter_(2, perm[..., None], 1.0)
    mix = mix * (0.75 + 0.5 * rand(b, 3, 1))
    grey = rand(b) < 0.25
    mix[grey] = 1.0 / 3.0
    x = torch.einsum("bij,bfjhw->bfihw", mix, x)
    contrast = 0.75 + 0.5 * rand(b, 1, 1, 1, 1)
    x = (x - 0.5) * contrast + 0.5 + 0.15 * (rand(b, 1, 1, 1, 1) - 0.5)
    flip = rand(b) < 0.5
    x[flip] = x[flip].flip(-1)
    x = x + 0.06 * rand(b, 1, 1, 1, 1) * torch.randn(x.shape, generator=generator, device=dev)
    blur = rand(b) < 0.4
    if blur.any():
        y = x[blur].flatten(0, 1)
        y = F.interpolate(F.avg_pool2d(y, 2), scale_factor=2, mode="bilinear", align_corners=False)
        x[blur] = y.view(-1, *x.shape[1:])
    return x.clamp(0, 1)


def train(
    videos: torch.Tensor,
    labels: torch.Tensor,
    reversible: torch.Tensor,
    cfg: JudgeConfig,
    seconds: float,
    batch: int = 96,
    lr: float = 1e-3,
    seed: int = 0,
    device: str = "cuda",
    log=print,
) -> tuple[Judge, dict]:
    """Train a judge for ``seconds`` on uint8 clips [N,F,3,H,W] with labels [N] (index into
    ``cfg.labels``, "none" last) → (judge, {"steps", "seconds", "final_loss"})."""
    torch.manual_seed(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    net = JudgeNet(cfg).to(device).train()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.02)
    none = len(cfg.labels) - 1
    videos, labels, reversible = videos.to(device), labels.to(device), reversible.to(device)
    gt = torch.nonzero(labels != none).flatten()
    n, step, start, losses = videos.shape[0], 0, time.time(), []
    amp = dict(device_type="cuda", dtype=torch.bfloat16) if device.startswith("cuda") else dict(device_type="cpu", enabled=False)
    while time.time() - start < seconds:
        frac = (time.time() - start) / seconds
        for group in opt.param_groups:  # cosine decay to 5 %
            group["lr"] = lr * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * frac)))
        idx = torch.randint(0, n, (batch,), generator=gen, device=device)
        neg = gt[torch.randint(0, len(gt), (batch // 4,), generator=gen, device=device)]
        x = torch.cat([videos[idx].float() / 255, corrupt(videos[neg].float() / 255, reversible[neg], gen)])
        y = torch.cat([labels[idx], torch.full((len(neg),), none, device=device)])
        x = augment(x, gen)
        with torch.autocast(**amp):
            logits = net(x)
        loss = F.cross_entropy(logits.float(), y, label_smoothing=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        step += 1
        if step % 500 == 0:
            log(f"judge step {step} loss {np.mean(losses[-200:]):.4f} ({time.time() - start:.0f} s)")
    return Judge(net.eval(), cfg, device), {
        "steps": step,
        "seconds": round(time.time() - start, 1),
        "final_loss": float(np.mean(losses[-100:])),
    }


def accuracy(judge: Judge, videos: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of clips [N,F,3,H,W] judged as ``labels`` [N]."""
    pred = judge.probabilities(videos).argmax(-1)
    return float((pred == labels.cpu()).float().mean())


def per_group_accuracy(judge: Judge, videos: torch.Tensor, labels: torch.Tensor, groups: list[str]) -> dict[str, float]:
    """:func:`accuracy` per group name (e.g. "quadruped/walk"), sorted by name."""
    pred = judge.probabilities(videos).argmax(-1)
    right = (pred == labels.cpu()).numpy()
    names = np.array(groups)
    return {g: float(right[names == g].mean()) for g in sorted(set(groups))}
