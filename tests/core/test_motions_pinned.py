"""The shipped teacher and judge were trained on today's named-bone motion library: its clips stay
bit-for-bit what they were (checksums of a few clips pinned)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from akd_blender.core.character.procedural import CHARACTERS
from akd_blender.core.motion.library.labelled import Variation, make_clip, sample_variations

PINNED = {
    ("biped", "walk", "default"): "998c7ef1b3eb254e",
    ("biped", "wave", "sampled"): "942148b5ecb3bdd4",
    ("biped", "turn", "sampled"): "27bad39898708554",
    ("quadruped", "run", "default"): "4d52a870a557e59a",
    ("quadruped", "sit", "sampled"): "1af36581bd03c571",
    ("quadruped", "wag_tail", "sampled"): "ec64aa2b010e0860",
}


def _checksum(character: str, label: str, which: str) -> str:
    variation = Variation() if which == "default" else sample_variations(1, seed=3, split="train")[0]
    clip = make_clip(CHARACTERS[character](), character, label, variation, frames=16, fps=8.0)
    data = np.round(np.concatenate([clip.rotations.ravel(), clip.locations.ravel()]), 9) + 0.0
    return hashlib.sha256(data.astype("<f8").tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("key", sorted(PINNED))
def test_named_library_clips_are_unchanged(key):
    assert _checksum(*key) == PINNED[key], key
