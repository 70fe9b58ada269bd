"""Artist rigs and their own clips as files a machine without Blender can read (``make artist-fixtures``).

Imports every ``*.gltf`` / ``*.glb`` / ``*.fbx`` under ``$AKD_SHARED/assets`` (or ``--assets``) with
Blender's own importers, mirrors its armature (:func:`akd_blender.blender.character.extract.rig_from_armature`)
and evaluates each of its actions over the action's frame range at the scene's frame rate
(:func:`akd_blender.blender.keys.keyframes.read_clip`). Writes, per model, ``<Model>.npz`` (a RigAsset,
:func:`akd_blender.core.character.rig.save_rig`) and ``<Model>.<Action>.npz`` (:func:`save_clip`), and an
``index.json`` listing them. Needs the ``bpy`` module.

    python tests/bench/artist_fixtures.py --out bench_out/artists
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from akd_blender.core.character.rig import save_rig  # noqa: E402
from akd_blender.core.motion.clip import MotionClip  # noqa: E402

MODEL_SUFFIXES = (".gltf", ".glb", ".fbx")


def save_clip(clip: MotionClip, path: str | Path, **meta) -> None:
    """Write ``clip`` to ``.npz``: ``rotations`` [F,J,4], ``locations`` [F,J,3] and a json ``__meta__``
    (bone names, fps, frame start and any extra ``meta``)."""
    info = {"bone_names": list(clip.bone_names), "fps": clip.fps, "frame_start": clip.frame_start, **meta}
    np.savez_compressed(path, __meta__=np.array(json.dumps(info)), rotations=clip.rotations, locations=clip.locations)


def load_clip(path: str | Path) -> tuple[MotionClip, dict]:
    """Read a clip written by :func:`save_clip` → (clip, its meta dict)."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        clip = MotionClip(
            tuple(meta["bone_names"]), float(meta["fps"]), int(meta["frame_start"]), data["rotations"], data["locations"]
        )
    return clip, meta


def export_model(path: Path, out: Path) -> dict:
    """Import one model file, write its rig and every action's clip into ``out``; returns its index entry."""
    import bpy

    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene, scene_fps
    from akd_blender.blender.keys.keyframes import read_clip

    load_scene(str(path))
    arm = find_armature(None)
    rig = rig_from_armature(arm)
    save_rig(rig, str(out / f"{path.stem}.npz"))
    scene = bpy.context.scene
    fps = scene_fps(scene)
    clips = {}
    for action in sorted(bpy.data.actions, key=lambda a: a.name):
        start, end = (int(round(x)) for x in action.frame_range)
        if end <= start:
            continue
        clip = read_clip(arm, start, end, action=action, fps=fps)
        if not clip.matches(rig):
            continue
        name = f"{path.stem}.{action.name}.npz"
        save_clip(clip, out / name, model=path.stem, action=action.name)
        clips[action.name] = {"file": name, "frames": clip.num_frames, "fps": fps}
    return {"rig": f"{path.stem}.npz", "armature": arm.name, "height": rig.height, "clips": clips}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", default=os.path.join(os.environ.get("AKD_SHARED", "../shared"), "assets"))
    ap.add_argument("--out", default="bench_out/artists")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    index = {}
    for path in sorted(p for p in Path(args.assets).rglob("*") if p.suffix.lower() in MODEL_SUFFIXES):
        index[path.stem] = export_model(path, out)
        print(f"{path.stem}: {len(index[path.stem]['clips'])} clips, height {index[path.stem]['height']:.3g}")
    (out / "index.json").write_text(json.dumps(index, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
