"""``python -m tools.teacher``: the training tools live outside the shipped package and still run."""

from __future__ import annotations

import os
import re
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
    assert out.returncode == 2 and "{embed,embed-library,train,train-family}" in out.stderr


def test_embed_writes_the_shipped_phrase_table(tmp_path):
    from akd_blender.core.prompt.sentence_encoder import PhraseTable
    from akd_blender.core.video_models.tiny import ASSET_DIR

    out = _tools("embed", "--out", str(tmp_path / "phrases.npz"))
    assert out.returncode == 0, out.stderr[-2000:]
    made, shipped = PhraseTable.load(tmp_path / "phrases.npz"), PhraseTable.load(ASSET_DIR / "phrases.npz")
    assert list(made.phrases) == list(shipped.phrases)
    assert np.allclose(np.asarray(made.vectors), np.asarray(shipped.vectors), atol=1e-4)


def test_training_code_is_not_in_the_package():
    package = ROOT / "akd_blender"
    assert not list(package.rglob("train.py")) and not list(package.rglob("dataset.py"))
    assert not list(package.rglob("judge.safetensors")), "the video judge measures; it is not shipped"
    importing_tools = [p for p in package.rglob("*.py") if re.search(r"^\s*(from|import) tools\b", p.read_text(), re.M)]
    assert not importing_tools, importing_tools
    assert not [p for p in package.rglob("*.py") if "family" in p.parts], "the character family generator lives in tools/"
    from tools.teacher import dataset, train

    assert callable(train.main) and callable(dataset.make_items)


def test_family_items_cover_every_motion_and_keep_the_splits_apart():
    from tools.family import HELDOUT_SEEDS, TRAIN_SEEDS
    from tools.teacher.family_data import FAMILY_MOTIONS, family_items

    clips = 8 * len(FAMILY_MOTIONS)  # each motion about eight times (members draw 4 of their kind's motions at random)
    train, held = family_items("train", clips, 0), family_items("heldout", clips, 0)
    assert {(i.kind, i.label) for i in train} == set(FAMILY_MOTIONS) == {(i.kind, i.label) for i in held}
    assert all(i.seed in TRAIN_SEEDS for i in train) and all(i.seed in HELDOUT_SEEDS for i in held)
    assert family_items("train", clips, 0) == train and family_items("train", clips, 1) != train  # seeded


def test_train_family_resumes_and_continues_from_weights(tmp_path, capsys):
    """A stopped run resumes from its checkpoint with the same command; --init starts from a trained teacher."""
    import json

    from akd_blender.core.motion.library import library_phrasings
    from akd_blender.core.prompt.sentence_encoder import PhraseTable
    from tools.teacher.train_family import main

    phrases = [t for split in ("train", "heldout") for t, _, _ in library_phrasings(split)]
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(phrases), 384)).astype(np.float32)
    PhraseTable(phrases, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).save(tmp_path / "p.npz")
    common = ["--phrases", str(tmp_path / "p.npz"), "--clips", "8", "--heldout-clips", "4", "--batch", "2", "--size", "8"]
    common += ["--channels", "32,32", "--device", "cpu", "--backend", "torch"]
    out = tmp_path / "run"
    assert main(["--out", str(out), "--seconds", "1", *common]) == 0
    first = json.loads((out / "teacher.json").read_text())
    assert first["config"]["condition"] == "image" and (out / "checkpoint.pt").is_file() and (out / "data.pt").is_file()
    assert main(["--out", str(out), "--seconds", "3", *common]) == 0
    second = json.loads((out / "teacher.json").read_text())
    assert "resumed from" in capsys.readouterr().out
    assert second["training"]["steps"] > first["training"]["steps"] and second["training"]["seconds"] >= 3
    assert main(["--out", str(tmp_path / "more"), "--seconds", "1", "--init", str(out), *common]) == 0
    assert json.loads((tmp_path / "more" / "teacher.json").read_text())["training"]["steps_before"] == second["training"]["steps"]
