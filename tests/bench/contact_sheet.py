"""Contact sheet: the glTF Fox walking, 4 frames rendered by the torch backend, as one PNG.

Run: ``python tests/bench/contact_sheet.py [--out bench_out/fox_walk_contact_sheet.png]`` (``make contact-sheet``).
Needs the bpy module (the Fox is imported with Blender's glTF importer) and ../shared/assets.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("AKD_SHARED", ROOT.parent / "shared"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--asset", default=str(SHARED / "assets" / "Fox" / "Fox.gltf"))
    parser.add_argument("--action", default="Walk")
    parser.add_argument("--out", default=str(ROOT / "bench_out" / "fox_walk_contact_sheet.png"))
    parser.add_argument("--height", type=int, default=256)
    parser.add_argument("--width", type=int, default=384)
    args = parser.parse_args()

    import bpy
    import imageio.v3 as iio

    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.blender.keys.keyframes import read_clip
    from akd_blender.core.render import render_clip

    load_scene(args.asset)
    armature = find_armature()
    rig = rig_from_armature(armature)
    action = bpy.data.actions[args.action]
    first, last = (int(round(x)) for x in action.frame_range)
    clip = read_clip(armature, first, last, action=action)
    t0 = time.perf_counter()
    video = render_clip(rig, clip, args.height, args.width, camera="follow", backend="torch")
    seconds = time.perf_counter() - t0
    picks = np.linspace(0, clip.num_frames - 1, 4).round().astype(int)
    frames = (video[picks, :3].permute(0, 2, 3, 1).clamp(0, 1).numpy() * 255).astype(np.uint8)
    sheet = np.concatenate(list(frames), axis=1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(args.out, sheet)
    print(
        f"{rig.name}: {rig.num_vertices} vertices, {len(rig.faces)} triangles, texture "
        f"{None if rig.texture is None else rig.texture.shape}; action {args.action} frames {first}-{last}; "
        f"rendered {clip.num_frames}x{args.height}x{args.width} in {seconds:.2f} s; frames {list(picks + first)} → {args.out}"
    )


if __name__ == "__main__":
    main()
