"""The mirror demo: import the Fox, mirror it in torch, pose it, key it back, save a .blend.

Run: ``python -m akd_blender.blender.demo --out demo_out`` (bpy module). It shows the two ends of
the pipeline on a real asset: Blender rig → RigAsset → torch FK/LBS (checked against Blender's own
deformation) → MotionClip → a new Blender action, the Fox's own actions kept.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import bpy
import numpy as np
import torch

from ..core.kinematics import Skeleton
from ..core.motion import MotionParams
from .extract import rig_from_armature
from .io import find_armature, load_scene
from .keyframes import SparseKeys, write_action


def default_input() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.environ.get("AKD_SHARED", os.path.join(here, "..", "..", "..", "shared"))
    return os.path.join(shared, "assets", "Fox", "Fox.gltf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default=default_input())
    parser.add_argument("--out", default="demo_out")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    load_scene(args.input)
    arm = find_armature()
    rig = rig_from_armature(arm)
    print(f"mirrored '{rig.name}': {rig.num_bones} bones, {rig.num_vertices} vertices, {rig.height:.2f} units tall")
    params = MotionParams(rig, frames=48, keys=7)
    with torch.no_grad():  # a smooth sway of every free bone, a root that bobs
        t = torch.linspace(0, 2 * np.pi, params.rotvec.shape[0])
        params.rotvec[..., 0] = 0.25 * torch.sin(t)[:, None]
        params.root_offset[:, 2] = 0.03 * rig.height * torch.sin(2 * t)
    clip = params.to_clip()
    verts = Skeleton(rig)(clip)
    print(f"posed 48 frames with torch FK+LBS: vertices {tuple(verts.shape)}")
    action = write_action(arm, clip, "AKD demo sway", sparse=SparseKeys(rotation=1e-3, location=1e-3 * rig.height))
    kept = [a.name for a in bpy.data.actions if a != action]
    path = os.path.abspath(os.path.join(args.out, "demo_mirror.blend"))
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    print(f"wrote action '{action.name}' (kept: {', '.join(kept)}) and saved {path} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
