"""The judge: a small video classifier trained only on ground-truth renders of the motion library.

Input: videos [B,F,3,H,W] in [0,1] (resampled to the judge's F×H×W). Features are the frames and
their temporal differences; 3D convolutions keep the time axis to the end (the classifier head sees
time order), so frame-shuffled, frozen and reversed clips can be told apart from real motion. The
``"none"`` class is trained on hard negatives: shuffled frames, a frozen frame, time-reversed clips
of motions that are not time-symmetric, low-amplitude renders and the rest pose.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["JudgeConfig", "JudgeNet", "Judge", "resample_video", "hard_negatives"]


@dataclass
class JudgeConfig:
    """labels: class names (last is "none"); frames/height/width: input size; width: base channels."""

    labels: tuple[str, ...]
    frames: int = 16
    height: int = 64
    width: int = 64
    channels: int = 32


def resample_video(video: torch.Tensor, frames: int, height: int, width: int) -> torch.Tensor:
    """Videos [B,F,3,H,W] → [B,frames,3,height,width]: linear in time, area/bilinear in space (differentiable)."""
    b, f, c, h, w = video.shape
    if f != frames:
        pos = torch.linspace(0, f - 1, frames, device=video.device)
        lo = pos.floor().long().clamp(max=f - 1)
        hi = (lo + 1).clamp(max=f - 1)
        a = (pos - lo.to(pos.dtype)).view(1, frames, 1, 1, 1).to(video.dtype)
        video = video[:, lo] * (1 - a) + video[:, hi] * a
    if (h, w) != (height, width):
        flat = video.reshape(-1, c, h, w)
        mode = "area" if h >= height and w >= width else "bilinear"
        kwargs = {} if mode == "area" else {"align_corners": False}
        video = F.interpolate(flat, size=(height, width), mode=mode, **kwargs).reshape(b, frames, c, height, width)
    return video


class JudgeNet(nn.Module):
    """[B,F,3,H,W] in [0,1] → logits [B,C]."""

    def __init__(self, cfg: JudgeConfig) -> None:
        super().__init__()
        w = cfg.channels

        def block(i, o, stride):
            return nn.Sequential(nn.Conv3d(i, o, 3, stride=stride, padding=1), nn.GroupNorm(8, o), nn.SiLU())

        self.features = nn.Sequential(
            block(6, w, (1, 2, 2)),
            block(w, 2 * w, (1, 2, 2)),
            block(2 * w, 4 * w, (2, 2, 2)),
            block(4 * w, 4 * w, (2, 2, 2)),
        )
        t = (cfg.frames + 3) // 4
        self.head = nn.Sequential(
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(4 * w * t, 128), nn.SiLU(), nn.Linear(128, len(cfg.labels))
        )

    def forward(self, video: torch.Tensor) -> torch.Tensor:
        x = video * 2 - 1
        diff = torch.cat([torch.zeros_like(x[:, :1]), x[:, 1:] - x[:, :-1]], 1)
        x = torch.cat([x, diff * 4], 2).transpose(1, 2)  # [B,6,F,H,W]
        x = self.features(x).mean((-1, -2))  # [B,C,T]: keep time order for the head
        return self.head(x)


def hard_negatives(videos: torch.Tensor, reversible: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Corrupt GT clips [B,F,3,H,W] into "none" examples: each clip is frame-shuffled, frozen (one
    frame repeated) or, where ``reversible`` [B] is False (the motion has a time direction),
    reversed; clips with ``reversible`` True get shuffle or freeze only."""
    b, f = videos.shape[:2]
    dev = videos.device
    kind = torch.randint(0, 3, (b,), generator=generator).to(dev)
    kind = torch.where(reversible & (kind == 2), torch.zeros_like(kind), kind)
    out = videos.clone()
    for i in range(b):
        k = int(kind[i])
        if k == 0:
            perm = torch.randperm(f, generator=generator).to(dev)
            out[i] = videos[i, perm]
        elif k == 1:
            j = int(torch.randint(0, f, (1,), generator=generator))
            out[i] = videos[i, j : j + 1].expand_as(videos[i])
        else:
            out[i] = videos[i].flip(0)
    return out


class Judge:
    """A trained judge: ``classify(video) -> (labels, probabilities [B,C])``; load/save with a json config."""

    def __init__(self, net: JudgeNet, cfg: JudgeConfig, device: torch.device | str = "cpu") -> None:
        self.net, self.cfg, self.device = net.to(device).eval(), cfg, torch.device(device)

    @classmethod
    def load(cls, folder: str | Path, device: torch.device | str = "cpu") -> Judge:
        from safetensors.torch import load_file

        folder = Path(folder)
        data = json.loads((folder / "judge.json").read_text())
        cfg = JudgeConfig(**{**data["config"], "labels": tuple(data["config"]["labels"])})
        net = JudgeNet(cfg)
        state = {k: v.float() for k, v in load_file(str(folder / "judge.safetensors")).items()}
        net.load_state_dict(state)
        return cls(net, cfg, device)

    def save(self, folder: str | Path, extra: dict | None = None) -> None:
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().to(torch.float16).cpu().contiguous() for k, v in self.net.state_dict().items()}
        save_file(state, str(folder / "judge.safetensors"))
        cfg = asdict(self.cfg)
        cfg["labels"] = list(self.cfg.labels)
        (folder / "judge.json").write_text(json.dumps({"config": cfg, **(extra or {})}, indent=1))

    @torch.no_grad()
    def probabilities(self, video: torch.Tensor, batch: int = 64) -> torch.Tensor:
        """Videos [B,F,3,H,W] (or [F,3,H,W]) in [0,1], float or uint8 → class probabilities [B,C]."""
        if video.ndim == 4:
            video = video[None]
        out = []
        for i in range(0, video.shape[0], batch):
            v = video[i : i + batch].to(self.device)
            v = v.float() / 255 if v.dtype == torch.uint8 else v.float()
            v = resample_video(v, self.cfg.frames, self.cfg.height, self.cfg.width)
            out.append(self.net(v).softmax(-1).cpu())
        return torch.cat(out)

    def classify(self, video: torch.Tensor) -> tuple[list[str], torch.Tensor]:
        """Videos → (recognised label per clip, probabilities [B,C])."""
        p = self.probabilities(video)
        return [self.cfg.labels[i] for i in p.argmax(-1).tolist()], p
