"""The motion judge: a small temporal convolution network over body tracks (:mod:`.tracks`).

Input: tracks [B,F,C] of a clip cut to the judge's window (:func:`.window.judge_window`:
``frames`` frames over 2 s). The network sees the tracks and their frame-to-frame differences and keeps
the time axis to its head, so shuffled, frozen and reversed motions can be told from the real ones.
The last label is ``"none"``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from ...assets import ASSETS_DIR
from ...character.rig import RigAsset
from ...character.roles import BoneRoles
from ..clip import MotionClip
from .tracks import TRACK_CHANNELS, body_tracks
from .window import judge_window

__all__ = ["ASSET_DIR", "MotionJudgeConfig", "MotionJudgeNet", "MotionJudge", "load_motion_judge"]

ASSET_DIR = ASSETS_DIR / "motion_judge"
"""The shipped motion judge's folder."""


@dataclass
class MotionJudgeConfig:
    """labels: class names ("none" last); frames: the window's frames; channels: track channels; width: hidden channels."""

    labels: tuple[str, ...]
    frames: int = 16
    channels: int = TRACK_CHANNELS
    width: int = 128


class MotionJudgeNet(nn.Module):
    """Tracks [B,F,C] → logits [B,labels]."""

    def __init__(self, cfg: MotionJudgeConfig) -> None:
        super().__init__()
        w = cfg.width

        def block(i: int, o: int, stride: int) -> nn.Sequential:
            return nn.Sequential(nn.Conv1d(i, o, 3, stride=stride, padding=1), nn.GroupNorm(8, o), nn.SiLU())

        self.features = nn.Sequential(block(2 * cfg.channels, w, 1), block(w, w, 1), block(w, 2 * w, 2), block(2 * w, 2 * w, 2))
        t = (cfg.frames + 3) // 4
        self.head = nn.Sequential(
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(2 * w * t, 256), nn.SiLU(), nn.Linear(256, len(cfg.labels))
        )

    def forward(self, tracks: torch.Tensor) -> torch.Tensor:
        diff = torch.cat([torch.zeros_like(tracks[:, :1]), tracks[:, 1:] - tracks[:, :-1]], 1)
        x = torch.cat([tracks, 4 * diff], 2).transpose(1, 2)  # [B,2C,F]
        return self.head(self.features(x))


class MotionJudge:
    """A trained motion judge: ``judge(rig, roles, clip)``, ``probabilities(tracks)``; load/save a folder
    (``motion_judge.json`` + ``motion_judge.safetensors``)."""

    def __init__(self, net: MotionJudgeNet, cfg: MotionJudgeConfig, device: torch.device | str = "cpu") -> None:
        self.net, self.cfg, self.device = net.to(device).eval(), cfg, torch.device(device)

    @classmethod
    def load(cls, folder: str | Path, device: torch.device | str = "cpu") -> MotionJudge:
        from safetensors.torch import load_file

        folder = Path(folder)
        data = json.loads((folder / "motion_judge.json").read_text())
        cfg = MotionJudgeConfig(**{**data["config"], "labels": tuple(data["config"]["labels"])})
        net = MotionJudgeNet(cfg)
        net.load_state_dict({k: v.float() for k, v in load_file(str(folder / "motion_judge.safetensors")).items()})
        return cls(net, cfg, device)

    def save(self, folder: str | Path, extra: dict | None = None) -> None:
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().to(torch.float16).cpu().contiguous() for k, v in self.net.state_dict().items()}
        save_file(state, str(folder / "motion_judge.safetensors"))
        cfg = {**asdict(self.cfg), "labels": list(self.cfg.labels)}
        (folder / "motion_judge.json").write_text(json.dumps({"config": cfg, **(extra or {})}, indent=1))

    @torch.no_grad()
    def probabilities(self, tracks: torch.Tensor, batch: int = 512) -> torch.Tensor:
        """Tracks [B,F,C] (or [F,C]) → class probabilities [B,labels] (CPU)."""
        if tracks.ndim == 2:
            tracks = tracks[None]
        out = [self.net(tracks[i : i + batch].float().to(self.device)).softmax(-1).cpu() for i in range(0, len(tracks), batch)]
        return torch.cat(out)

    def judge(self, rig: RigAsset, roles: BoneRoles, clip: MotionClip, top: int = 3) -> dict:
        """Judge a clip of ``rig`` (cut to the judge's window) → {"label", "probability", "top": [(label, p) …]}."""
        tracks = torch.from_numpy(body_tracks(rig, roles, judge_window(clip, self.cfg.frames)))
        p = self.probabilities(tracks)[0]
        order = p.argsort(descending=True)[:top].tolist()
        return {
            "label": self.cfg.labels[order[0]],
            "probability": float(p[order[0]]),
            "top": [(self.cfg.labels[i], float(p[i])) for i in order],
        }


def load_motion_judge(folder: str | Path | None = None, device: torch.device | str = "cpu") -> MotionJudge:
    """The shipped motion judge (or the one in ``folder``); ModelNotAvailable naming the folder if its files are missing."""
    from ...errors import ModelNotAvailable

    folder = Path(folder or ASSET_DIR)
    if not (folder / "motion_judge.safetensors").is_file() or not (folder / "motion_judge.json").is_file():
        raise ModelNotAvailable(f"the motion judge's weights are missing from {folder} (make motion-judge trains them)")
    return MotionJudge.load(folder, device)
