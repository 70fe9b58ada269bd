"""The README's picture: a contact sheet of the library walk on the artist's Fox.

The Fox (``$AKD_SHARED/assets/Fox/Fox.gltf``) is imported with Blender's glTF importer, read into a
:class:`~akd_blender.core.character.rig.RigAsset`, its bone roles found, and the prompt "a fox walks forward"
read as a motion of the motion library of its kind, as the default job reads it
(:func:`~akd_blender.core.prompt.reading.choose_library_motion`). The library clip is played on the
Fox's rest pose (:func:`~akd_blender.core.distillation.library_start.library_motion`), rendered by the project
renderer at 128 × 128 with the follow camera, and ``COLUMNS`` evenly spaced frames are laid side by
side (``GAP`` white pixels apart) into one RGB PNG.

Run: ``.venv/bin/python -m tools.readme_picture [OUT.png]`` (default ``docs/readme.png``; needs the
``bpy`` module and the shared assets).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["PROMPT", "COLUMNS", "FRAMES", "FPS", "SIZE", "GAP", "contact_sheet", "main"]

PROMPT = "a fox walks forward"
COLUMNS = 6
"""Frames shown side by side."""
FRAMES = 24
"""Frames of the clip (one second at :data:`FPS`); the sheet shows every fourth."""
FPS = 24.0
SIZE = 128
"""Height and width of one frame, pixels."""
GAP = 4
"""White pixels between frames."""
OUT = Path(__file__).resolve().parents[1] / "docs" / "readme.png"


def contact_sheet(frames: np.ndarray, columns: int = COLUMNS, gap: int = GAP) -> np.ndarray:
    """``columns`` evenly spaced frames of ``frames`` (RGB or RGBA [F,C,H,W] floats in [0,1], as the
    renderer gives them: ground and sky in the colour channels, the character's coverage in alpha,
    which is dropped) side by side with ``gap`` white pixels between them: uint8 RGB
    [H, W·columns + gap·(columns − 1), 3]."""
    if frames.ndim != 4 or frames.shape[1] not in (3, 4):
        raise ValueError(f"frames must be [F,3|4,H,W], got shape {tuple(frames.shape)}")
    picks = np.linspace(0, frames.shape[0] - 1, columns).round().astype(int)
    rgb = np.transpose(frames[picks, :3], (0, 2, 3, 1))
    white = np.ones((rgb.shape[1], gap, 3), dtype=rgb.dtype)
    parts: list[np.ndarray] = []
    for i, frame in enumerate(rgb):
        parts += [white, frame] if i else [frame]
    sheet = np.concatenate(parts, axis=1)
    return (np.clip(sheet, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)


def main(out: Path = OUT) -> Path:
    """Render the Fox's library walk and write the contact sheet to ``out``; returns ``out``."""
    import imageio.v3 as iio

    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.blender.demo import shared_assets
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.distillation.library_start import library_motion
    from akd_blender.core.prompt.reading import choose_library_motion
    from akd_blender.core.render import render_clip

    load_scene(str(Path(shared_assets()) / "Fox" / "Fox.gltf"))
    rig = rig_from_armature(find_armature())
    roles = find_roles(rig)
    choice, reading = choose_library_motion(PROMPT, roles.kind)
    if choice is None:
        raise SystemExit(f"readme_picture: {PROMPT!r} is not read as a library motion of a {roles.kind} ({reading})")
    clip = library_motion(rig, roles, choice, FRAMES, FPS)
    frames = render_clip(rig, clip, SIZE, SIZE).detach().cpu().numpy()
    out.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(out, contact_sheet(frames), optimize=True)
    print(f"readme_picture: {choice.name} on the Fox, {COLUMNS} of {FRAMES} frames -> {out}")
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
