"""``python -m tools.teacher``: the training tools live outside the shipped package and still run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _tools(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "tools.teacher", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_usage_names_the_commands():
    out = _tools()
    assert out.returncode == 2 and "{embed,train}" in out.stderr


def test_embed_writes_the_shipped_phrase_table(tmp_path):
    from akd_blender.core.priors.tiny import ASSET_DIR
    from akd_blender.core.priors.tiny_model.text import PhraseTable

    out = _tools("embed", "--out", str(tmp_path / "phrases.npz"))
    assert out.returncode == 0, out.stderr[-2000:]
    made, shipped = PhraseTable.load(tmp_path / "phrases.npz"), PhraseTable.load(ASSET_DIR / "phrases.npz")
    assert list(made.phrases) == list(shipped.phrases)
    assert np.allclose(np.asarray(made.vectors), np.asarray(shipped.vectors), atol=1e-4)


def test_training_code_is_not_in_the_package():
    package = ROOT / "akd_blender"
    assert not list(package.rglob("train.py")) and not list(package.rglob("dataset.py"))
    from tools.teacher import dataset, train

    assert callable(train.main) and callable(dataset.make_items)
