"""The procedural character family: seeded, varied, labelled members; and the original two characters unchanged."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from akd_blender.core.procedural.characters import biped, quadruped


def _checksum(rig) -> str:
    h = hashlib.sha256()
    for a in (rig.vertices, rig.rest_matrices, rig.weights, rig.vertex_colors, rig.faces, rig.parents):
        h.update(np.round(np.asarray(a, dtype=np.float64), 7).tobytes())
    h.update("|".join(rig.bone_names).encode())
    return h.hexdigest()


@pytest.mark.parametrize(
    ("make", "digest"),
    [
        (biped, "00c33ec19aeb47e00204aae7ab38d659420b841960cc743384caf6f6ae0f97f0"),
        (quadruped, "c8134aa18b23d97e30f38a2d023e6064777be324db2c4dbb31242fd7ec3b714a"),
    ],
)
def test_shipped_characters_unchanged(make, digest):
    """The embedded teacher was trained on these two rigs: vertices, rests, weights, colours, names pinned."""
    assert _checksum(make()) == digest
