"""A contact sheet of family members: each rendered at rest by the project's renderer, in a grid."""

from __future__ import annotations

import numpy as np

from akd_blender.core.motion.library.labelled import rest_clip
from akd_blender.core.render import render_clip
from tools.family.member import FamilyMember

__all__ = ["contact_sheet", "save_contact_sheet"]


def contact_sheet(members: list[FamilyMember], cell: int = 192, columns: int = 4, azimuth: float = 50.0) -> np.ndarray:
    """uint8 [rows·cell, columns·cell, 3]: each member at rest on the ground, seen from ``azimuth`` degrees
    (the renderer's default view), in reading order (CPU torch renderer)."""
    rows = -(-len(members) // columns)
    sheet = np.full((rows * cell, columns * cell, 3), 255, dtype=np.uint8)
    for i, member in enumerate(members):
        clip = rest_clip(member.rig, frames=1)
        rgba = render_clip(
            member.rig, clip, cell, cell, camera="fixed", backend="torch", device="cpu", camera_options={"azimuth": azimuth}
        )
        image = (rgba[0, :3].permute(1, 2, 0).clamp(0, 1).numpy() * 255).round().astype(np.uint8)
        r, c = divmod(i, columns)
        sheet[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell] = image
    return sheet


def save_contact_sheet(members: list[FamilyMember], path: str, **kwargs) -> str:
    """Write :func:`contact_sheet` of ``members`` to the PNG ``path``; returns ``path``."""
    import imageio.v3 as iio

    iio.imwrite(path, contact_sheet(members, **kwargs))
    return path
