"""Every library motion of a kind on every rig of that kind, as the default job plays it and Blender
evaluates it: the motion × rig table of docs/benchmarks.md.

For each rig (built or imported in the bpy module, in a process of its own) and each library motion of
its kind that has its own checks: the motion is played as the job's library start plays it (the library clip from the pose
the file shows, :func:`~akd_blender.core.distillation.library_start.library_motion`), written as the job
writes it (:func:`~akd_blender.blender.job.apply.apply_clips`: keys on the rig's controls, Blender's own
evaluation checked, the job's warnings), read back as Blender evaluates it
(:func:`~akd_blender.blender.keys.keyframes.read_clip`) and measured by the motion's own checks
(``tests/core/library_checks.py``, those ``tests/core/test_library.py`` runs on the core clips). A
row says ``pass`` or the first failing fact; the job's warnings are listed with it.

Rigs: the procedural family (the demo's biped in its standing pose, the procedural biped and
quadruped, and the family members the core tests build), the glTF artists' rigs of the shared assets
(Fox, CesiumMan, RiggedFigure, imported by Blender's glTF importer) and Rigify's generated rigs
(``tests/blender/rig_zoo.py``: human, basic human, basic quadruped, horse, wolf, cat, bird, shark).

    python tests/bench/bench_library_rigs.py [--rigs demo_biped,Fox] [--out bench_out/library_rigs.jsonl] [--markdown]

Each rig's rows are appended to ``--out`` as JSON lines as soon as its process ends; ``--markdown``
prints the table from that file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

FRAMES, FPS = 48, 24.0
"""The default job's clip on a 24 fps scene: the embedded teacher's 2 seconds."""

PROCEDURAL = {
    "demo_biped": ("biped", None),
    "procedural_biped": ("biped", None),
    "procedural_quadruped": ("quadruped", None),
    "family_biped_5": ("biped", 5),
    "family_quadruped_0": ("quadruped", 0),
    "family_bird_2": ("bird", 2),
    "family_bird_7": ("bird", 7),
    "family_hexapod_3": ("hexapod", 3),
    "family_hexapod_6": ("hexapod", 6),
    "family_serpent_2": ("serpent", 2),
    "family_serpent_5": ("serpent", 5),
}
"""The procedural family: name → (kind, family seed; None for the procedural character itself)."""
GLTF = ("Fox", "CesiumMan", "RiggedFigure")
RIGIFY = ("human", "basic_human", "basic_quadruped", "horse", "wolf", "cat", "bird", "shark")
RIGS = [*PROCEDURAL, *GLTF, *(f"rigify_{name}" for name in RIGIFY)]


def build(name: str) -> None:
    """Put rig ``name`` into the empty scene as a user would have it (the demo's biped posed standing)."""
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    if name in PROCEDURAL:
        from akd_blender.blender.build import armature_from_rig
        from akd_blender.core.character.procedural import CHARACTERS
        from akd_blender.core.motion.library.labelled import neutral_clip

        kind, seed = PROCEDURAL[name]
        if seed is None:
            rig = CHARACTERS[kind]()
        else:
            from tools.family import make_member

            rig = make_member(kind, seed).rig
        arm = armature_from_rig(rig)
        if name == "demo_biped":  # as demo.write_character leaves it: the library's standing pose
            for pb, quat in zip(arm.pose.bones, neutral_clip(rig).rotations[0]):
                pb.rotation_mode = "QUATERNION"
                pb.rotation_quaternion = quat.tolist()
    elif name in GLTF:
        from akd_blender.blender.character.io import load_scene
        from tests.conftest import ASSET_FILES

        load_scene(str(ASSET_FILES[name]))
    else:
        from tests.blender.rig_zoo import rigify_rig

        rigify_rig(name.removeprefix("rigify_"))


def first_failure(checks, measured) -> str:
    """``"pass"``, or the first failing check's name and what it measured."""
    for check in checks:
        try:
            check(measured)
        except AssertionError as exc:
            name = getattr(check, "__name__", None) or getattr(getattr(check, "func", None), "__name__", "check")
            said = " ".join(str(exc).split())[:160]
            return f"{name.removeprefix('check_')}: {said}" if said else name.removeprefix("check_")
    return "pass"


def has_checks(kind: str, label: str) -> bool:
    """Whether motion ``label`` of ``kind`` has its own checks in ``tests/core/library_checks.py``."""
    from tests.core.library_checks import checks_for

    try:
        return bool(checks_for(kind, label))
    except KeyError:
        return False


def rig_rows(name: str, labels: tuple[str, ...] = ()) -> list[dict]:
    """Every library motion of the rig's kind (or ``labels``) on rig ``name``, as rows."""
    import bpy

    from akd_blender.blender.character.deform_skeleton import start_pose
    from akd_blender.blender.character.io import find_armature
    from akd_blender.blender.job.apply import apply_clips
    from akd_blender.blender.job.rig import job_rig
    from akd_blender.blender.keys.keyframes import read_clip
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.distillation.library_start import library_motion
    from akd_blender.core.motion.library import motions_for
    from akd_blender.core.motion.library.labelled import Variation
    from akd_blender.core.prompt.reading import LibraryChoice
    from tests.core.library_checks import Measured, checks_for

    build(name)
    arm = find_armature()
    rig = job_rig(arm, None)
    roles = find_roles(rig)
    held = start_pose(arm, rig)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = int(FPS), 1.0
    rows = []
    for spec in motions_for(roles.kind):
        if (labels and spec.label not in labels) or not has_checks(roles.kind, spec.label):
            continue
        t = time.perf_counter()
        row = {"rig": name, "kind": roles.kind, "motion": spec.label}
        try:
            choice = LibraryChoice(roles.kind, spec.label, Variation())
            clip = library_motion(rig, roles, choice, FRAMES, FPS, held, int(scene.frame_start))
            facts = {"motion": f"{roles.kind}/{spec.label}", "understood": True}
            applied = apply_clips(arm, rig, [(clip, spec.label)], keys="sparse", set_scene_range=False, facts=facts)
            action = bpy.data.actions[applied.action]
            evaluated = read_clip(arm, clip.frame_start, clip.frame_end, action=action, rig=rig)
            row["result"] = first_failure(checks_for(roles.kind, spec.label), Measured(rig, roles, evaluated, 0.0))
            row["warnings"] = [w for w in applied.warnings if w not in rig.warnings]
        except Exception as exc:  # a row per motion whatever happens: the table says what
            row["result"], row["warnings"] = f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}", []
        row["seconds"] = round(time.perf_counter() - t, 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    """The motion × rig table: one row per rig, one column per motion of its kind (``✓`` or the failing
    fact's name, ``w`` after a mark where the job warned), then the failing facts and warnings in full."""
    lines, notes = [], []
    by_kind: dict[str, list[dict]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    for kind, kind_rows in by_kind.items():
        motions = list(dict.fromkeys(r["motion"] for r in kind_rows))
        rigs = list(dict.fromkeys(r["rig"] for r in kind_rows))
        cell = {(r["rig"], r["motion"]): r for r in kind_rows}
        lines += [f"**{kind}** ({len(rigs)} rigs × {len(motions)} motions)", ""]
        lines += ["| rig | " + " | ".join(motions) + " | pass |", "|---|" + "---|" * (len(motions) + 1)]
        for rig in rigs:
            marks, passed = [], 0
            for motion in motions:
                r = cell.get((rig, motion))
                if r is None:
                    marks.append("")
                    continue
                ok = r["result"] == "pass"
                passed += ok
                mark = "✓" if ok else "✗ " + r["result"].split(":")[0]
                marks.append(mark + (" w" if r["warnings"] else ""))
                if not ok or r["warnings"]:
                    notes.append(f"- {rig} / {motion}: {r['result']}" + "".join(f"; warns: {w}" for w in r["warnings"]))
            lines.append(f"| {rig} | " + " | ".join(marks) + f" | {passed}/{len(motions)} |")
        lines.append("")
    total = sum(r["result"] == "pass" for r in rows)
    quiet = sum(r["result"] == "pass" and not r["warnings"] for r in rows)
    head = [f"{total} of {len(rows)} motion × rig cases pass their motion's checks ({quiet} of them with no warning).", ""]
    return "\n".join(head + lines + ["Failing facts and warnings:", ""] + (notes or ["- none"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rigs", default=",".join(RIGS), help="comma-separated, of: " + ", ".join(RIGS))
    parser.add_argument("--motions", default="", help="comma-separated labels (default: every motion of the kind)")
    parser.add_argument("--out", default=str(ROOT / "bench_out" / "library_rigs.jsonl"))
    parser.add_argument("--markdown", action="store_true", help="print the table of --out and stop")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the per-rig process
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.one:
        rig_rows(args.one, tuple(m for m in args.motions.split(",") if m))
        return 0
    if args.markdown:
        print(markdown([json.loads(line) for line in out.read_text().splitlines() if line.strip()]))
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.rigs.split(","):
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--one", name, "--motions", args.motions], cwd=ROOT, capture_output=True, text=True
        )
        rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 and not rows:
            rows = [{"rig": name, "kind": "?", "motion": "?", "result": f"error: {done.stderr.strip()[-200:]}", "warnings": []}]
        with out.open("a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        passed = sum(r["result"] == "pass" for r in rows)
        print(f"{name}: {passed}/{len(rows)} pass ({time.perf_counter() - t:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
