"""The video judge: a small 3D-CNN classifier of the teacher's two characters' library motions, trained
with the teacher (:mod:`tools.teacher.train`) and used only to measure (tests, benchmarks). Its weights
(``judge.safetensors``, ``judge.json``) live in this folder."""

from __future__ import annotations

from pathlib import Path

import torch

from .model import Judge, JudgeConfig, JudgeNet, hard_negatives, resample_video

__all__ = ["JUDGE_DIR", "Judge", "JudgeConfig", "JudgeNet", "hard_negatives", "resample_video", "load_judge"]

JUDGE_DIR = Path(__file__).resolve().parent


def load_judge(device: torch.device | str = "cpu", folder: str | Path | None = None) -> Judge:
    """The video judge in ``folder`` (default :data:`JUDGE_DIR`); one line naming a missing file."""
    folder = Path(folder or JUDGE_DIR)
    for name in ("judge.json", "judge.safetensors"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"the video judge file {folder / name} is missing")
    return Judge.load(folder, device)
