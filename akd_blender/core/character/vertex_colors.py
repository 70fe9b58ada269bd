"""Per-vertex colours from a texture or from per-corner colours (the rig mirror and the procedural
family both reduce a mesh's look to :attr:`~akd_blender.core.character.rig.RigAsset.vertex_colors`)."""

from __future__ import annotations

import numpy as np

__all__ = ["GREY", "sample_nearest", "corner_mean"]

GREY = (0.6, 0.6, 0.6)
"""The colour of a vertex nothing colours (sRGB)."""


def sample_nearest(texture: np.ndarray, uvs: np.ndarray) -> np.ndarray:
    """Nearest texel (floor) of UVs [...,2] (Blender's: v up, wrapping) in a top-row-first texture [H,W,3] → [...,3]."""
    h, w = texture.shape[:2]
    x = np.clip((uvs[..., 0] % 1.0) * w, 0, w - 1).astype(int)
    y = np.clip((1.0 - uvs[..., 1] % 1.0) * h, 0, h - 1).astype(int)
    return texture[y, x]


def corner_mean(num_vertices: int, faces: np.ndarray, corner_colors: np.ndarray) -> np.ndarray:
    """float32 [V,3], the mean of each vertex's corner colours [T,3,3] (:data:`GREY` for a vertex in no triangle)."""
    sums = np.zeros((num_vertices, 3))
    counts = np.zeros(num_vertices)
    np.add.at(sums, faces.ravel(), corner_colors.reshape(-1, 3))
    np.add.at(counts, faces.ravel(), 1)
    out = np.tile(np.array(GREY), (num_vertices, 1))
    used = counts > 0
    out[used] = sums[used] / counts[used, None]
    return out.astype(np.float32)
