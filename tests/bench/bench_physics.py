"""Physics grounding figures: before/after metrics, tracking error and speed per case, plus one PNG per
case (foot heights and foot skate over time, input vs grounded).

Cases: the procedural biped walk and quadruped trot with injected foot slide, float and sink; the
Fox's own Walk and Run (read from Blender) as they are and perturbed; CesiumMan's walk.
Run: ``python tests/bench/bench_physics.py [--out DIR]`` (``make bench-physics``); prints every
figure and writes DIR/physics_<case>.png and DIR/bench_physics.json (default bench_out/).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from akd_blender.core.motion.metrics import CONTACT_TOLERANCE, motion_curves  # noqa: E402
from akd_blender.core.motion.physics import PhysicsConfig, ground_clip  # noqa: E402
from akd_blender.core.motion.physics.perturb import inject_artifacts, loop_clip  # noqa: E402
from tests.core.test_physics_motions import biped_walk, quadruped_trot  # noqa: E402

SECONDS = 4.0
KEYS = ("foot_skate", "penetration", "penetration_max", "floating", "floating_fraction", "contact_fraction", "jitter")


def blender_clips() -> list[tuple[str, object, object]]:
    """(case, rig, clip) for the Fox's Walk and Run and CesiumMan's walk, looped to SECONDS."""
    os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="akd-bench-user-"))
    import bpy

    from akd_blender.blender.character.extract import rig_from_armature
    from akd_blender.blender.character.io import find_armature, load_scene
    from akd_blender.blender.keys.keyframes import read_clip

    shared = Path(os.environ.get("AKD_SHARED", ROOT.parent / "shared")) / "assets"
    out = []
    for asset, actions in (("Fox", ("Walk", "Run")), ("CesiumMan", ("Anim_0",))):
        load_scene(str(shared / asset / f"{asset}.gltf"))
        arm = find_armature()
        rig = rig_from_armature(arm)
        for name in actions:
            act = bpy.data.actions[name]
            start, end = act.frame_range
            clip = read_clip(arm, int(start), int(np.ceil(end)), action=act)
            out.append((f"{asset.lower()}_{name.lower()}", rig, loop_clip(clip, SECONDS)))
    return out


def plot(path: Path, case: str, rig, before, after, metrics_before: dict, metrics_after: dict) -> None:
    cb, ca = motion_curves(rig, before), motion_curves(rig, after)
    fig, axes = plt.subplots(3, 1, figsize=(11, 8.5), sharex=True)
    colors = plt.cm.tab10(np.arange(len(cb["feet"])))
    for n, foot in enumerate(cb["feet"]):
        axes[0].plot(cb["time"], cb["foot_height"][:, n], color=colors[n], lw=1, ls="--")
        axes[0].plot(ca["time"], ca["foot_height"][:, n], color=colors[n], lw=1.6, label=foot)
        axes[1].plot(cb["time"], cb["skate"][:, n], color=colors[n], lw=1, ls="--")
        axes[1].plot(ca["time"], ca["skate"][:, n], color=colors[n], lw=1.6)
    axes[0].axhline(0, color="k", lw=0.8)
    axes[0].axhline(CONTACT_TOLERANCE, color="grey", lw=0.6, ls=":")
    axes[0].set_ylabel("lowest foot vertex\nabove ground (h)")
    axes[0].legend(fontsize=7, ncol=4, loc="upper right")
    axes[1].set_ylabel("foot skate in contact\n(h/s)")
    axes[2].plot(cb["time"], cb["lowest"], color="tab:red", ls="--", lw=1, label="input")
    axes[2].plot(ca["time"], ca["lowest"], color="tab:green", lw=1.6, label="grounded")
    axes[2].axhline(0, color="k", lw=0.8)
    axes[2].set_ylabel("lowest vertex of the\nwhole mesh (h)")
    axes[2].set_xlabel("time (s)")
    axes[2].legend(fontsize=8)
    fmt = lambda m: ", ".join(f"{k} {m[k]:.3g}" for k in ("foot_skate", "penetration", "floating_fraction"))
    fig.suptitle(
        f"{case}: dashed = input, solid = grounded (h = body height)\ninput: {fmt(metrics_before)}\ngrounded: {fmt(metrics_after)}",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "bench_out"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for name, gait in (("biped_walk", biped_walk), ("quadruped_trot", quadruped_trot)):
        rig, clip = gait(seconds=SECONDS)
        cases.append((f"{name}_perturbed", rig, inject_artifacts(rig, clip)))
    for name, rig, clip in blender_clips():
        cases.append((name, rig, clip))
        if name.startswith("fox"):
            cases.append((f"{name}_perturbed", rig, inject_artifacts(rig, clip)))
    config = PhysicsConfig()
    ground_clip(*cases[0][1:3], config)  # warm-up (imports, first-call costs)
    results = {}
    for case, rig, clip in cases:
        start = time.perf_counter()
        result = ground_clip(rig, clip, config)
        seconds = time.perf_counter() - start
        duration = clip.num_frames / clip.fps
        b, a = result.metrics_before, result.metrics_after
        row = {
            "duration_s": duration,
            "compute_s": seconds,
            "compute_s_per_motion_s": seconds / duration,
            "skate_ratio": b["foot_skate"] / max(a["foot_skate"], 1e-12),
            "penetration_ratio": b["penetration"] / max(a["penetration"], 1e-12),
            "before": {k: b[k] for k in KEYS},
            "after": {k: a[k] for k in KEYS},
            "tracking": {k: v for k, v in a.items() if "error" in k},
            "bodies": int(result.model.model.nbody - 1),
            "mass_kg": result.model.total_mass,
        }
        results[case] = row
        plot(out / f"physics_{case}.png", case, rig, clip, result.clip, b, a)
        print(
            f"{case:26s} skate {b['foot_skate']:.3f} -> {a['foot_skate']:.3f} h/s ({row['skate_ratio']:.1f}x)  "
            f"penetration {b['penetration']:.4f} -> {a['penetration']:.4f} h*s ({row['penetration_ratio']:.1f}x)  "
            f"floating {b['floating_fraction']:.2f} -> {a['floating_fraction']:.2f}  "
            f"joint err {a['joint_angle_error_deg']:.2f} deg  root err {a['root_position_error']:.3f} h  "
            f"{row['compute_s_per_motion_s']:.3f} s compute / s motion"
        )
    summary = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "config": config.__dict__,
        "cases": results,
        "mean_compute_s_per_motion_s": float(np.mean([r["compute_s_per_motion_s"] for r in results.values()])),
    }
    (out / "bench_physics.json").write_text(json.dumps(summary, indent=1))
    print(f"mean {summary['mean_compute_s_per_motion_s']:.3f} s of compute per s of motion on {summary['machine']}")
    print(f"plots and JSON in {out}")


if __name__ == "__main__":
    main()
