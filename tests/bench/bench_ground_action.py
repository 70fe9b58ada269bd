"""Ground Action on an artist walk made sunk, floating and sliding: penetration, floating and foot skate
before and after ``core.physics.ground_clip``, on Blender's own evaluation of the Fox's imported walk.

The walk (``Walk`` of ``$AKD_SHARED/assets/Fox/Fox.gltf``, 2 loops) is altered on its root bone: sunk
(lowered by 8 % of the height), floating (raised by 8 %), sliding (drifting forward at 0.5 heights per
second on top of its own travel), and sunk and sliding together. The floor is the mirror's, the rest
pose's (z = 0). Exits 1 when the sunk-and-sliding case's penetration or foot skate falls by less than
``--bar`` times.

    python tests/bench/bench_ground_action.py [--bar 3] [--out bench_out/ground_action.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SHIFT = 0.08  # × height, up or down
DRIFT = 0.5  # × height per second, forward
KEYS = ("penetration", "penetration_max", "floating", "foot_skate")


def altered(rig, clip, down: float, drift: float):
    """``clip`` with its root bone moved ``down`` heights down (negative: up) and drifting ``drift``
    heights per second along the character's facing, in world terms."""
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.motion.clip import MotionClip

    root = int(np.flatnonzero(np.asarray(rig.parents) < 0)[0])
    to_bone = np.linalg.inv(rig.armature_world[:3, :3] @ rig.rest_matrices[root][:3, :3])
    forward = rig.armature_world[:3, :3] @ find_roles(rig).frame.forward  # world
    forward = forward / (np.linalg.norm(forward[:2]) or 1.0)
    t = np.arange(clip.num_frames) / clip.fps
    world = np.zeros((clip.num_frames, 3))
    world[:, 2] -= down * rig.height
    world[:, :2] += (drift * rig.height * t)[:, None] * forward[None, :2]
    locations = clip.locations.copy()
    locations[:, root] += world @ to_bone.T
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations.copy(), locations)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bar", type=float, default=3.0)
    ap.add_argument("--out", default=str(ROOT / "bench_out" / "ground_action.json"))
    args = ap.parse_args(argv)
    import bpy

    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.blender.keys.keyframes import read_clip
    from akd_blender.core.motion.metrics import motion_metrics
    from akd_blender.core.motion.physics import ground_clip

    shared = Path(os.environ.get("AKD_SHARED", ROOT.parent / "shared"))
    load_scene(str(shared / "assets" / "Fox" / "Fox.gltf"))
    arm = find_armature()
    action = bpy.data.actions["Walk"]
    start, end = (int(round(v)) for v in action.frame_range)
    rig = rig_from_armature(arm)
    walk = read_clip(arm, start, start + 2 * (end - start), action=action)
    cases = {
        "as imported": (0.0, 0.0),
        "sunk": (SHIFT, 0.0),
        "floating": (-SHIFT, 0.0),
        "sliding": (0.0, DRIFT),
        "sunk and sliding": (SHIFT, DRIFT),
    }
    rows = []
    for name, (down, drift) in cases.items():
        clip = altered(rig, walk, down, drift)
        t = time.perf_counter()
        grounded = ground_clip(rig, clip).clip
        seconds = time.perf_counter() - t
        before, after = motion_metrics(rig, clip), motion_metrics(rig, grounded)
        rows.append(
            {"case": name, "seconds": seconds} | {f"{k}_before": before[k] for k in KEYS} | {f"{k}_after": after[k] for k in KEYS}
        )
    print("| case | penetration h·s before → after | deepest h | floating h·s | foot skate h/s | s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{r[k + '_before']:.4f} → {r[k + '_after']:.4f}" for k in KEYS]
        print(f"| {r['case']} | " + " | ".join(cells) + f" | {r['seconds']:.1f} |")
    worst = rows[-1]
    pen = worst["penetration_before"] / max(worst["penetration_after"], 1e-9)
    skate = worst["foot_skate_before"] / max(worst["foot_skate_after"], 1e-9)
    print(f"sunk and sliding: penetration {pen:.1f}x lower, foot skate {skate:.1f}x lower (bar {args.bar}x)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"rows": rows, "penetration_ratio": pen, "skate_ratio": skate}, indent=1))
    return 0 if min(pen, skate) >= args.bar else 1


if __name__ == "__main__":
    sys.exit(main())
