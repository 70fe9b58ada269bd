"""The shipped phrase table holds every wording the library reads prompts against, so a job encodes only
its own prompt (``python -m tools.teacher embed-library --append --out …`` after wordings change)."""

from __future__ import annotations

import numpy as np

from akd_blender.core.motion.library import KINDS
from akd_blender.core.prompt.sentence_encoder import PhraseTable, TextEncoder
from akd_blender.core.prompt.understanding import library_vocabulary
from akd_blender.core.video_models.tiny import IMAGE_ASSET_DIR


def test_the_shipped_table_holds_every_library_wording():
    table = PhraseTable.load(IMAGE_ASSET_DIR / "phrases.npz")
    missing = [w for kind in KINDS for w, _, _ in library_vocabulary(kind) if w not in table]
    assert not missing, f"{len(missing)} wordings missing, e.g. {missing[:3]}: run python -m tools.teacher embed-library --append"


def test_held_phrases_come_from_the_table_without_loading_the_encoder():
    table = PhraseTable(["a test", "another test"], np.eye(2, 384, dtype=np.float32))
    encoder = TextEncoder(table)
    out = encoder.encode(["another test", "", "a test"])
    assert encoder._model is None
    assert np.array_equal(out.numpy(), np.stack([np.eye(2, 384)[1], np.zeros(384), np.eye(2, 384)[0]]).astype(np.float32))
