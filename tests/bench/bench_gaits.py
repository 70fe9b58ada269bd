"""Gaits the library does not play, on rigs the motion judge never saw: does the judge tell a walk from a
trot and a gallop on Rigify's quadrupeds and a four-legged robot?

Per rig (``tests/blender/rig_zoo.py``, built here in the bpy module: Rigify's basic quadruped, wolf, horse
and cat, the robot dog) and per gait (walk, run = trot or pace, gallop), ``--draws`` clips whose footfall
pattern, duty factor, stride, foot lift and body dip are drawn at random
(:func:`tools.motion_judge.clips.gait_variant`: lateral and diagonal walks with duty 0.55–0.8, trots and paces
with duty 0.2–0.5, rotary, transverse gallops and bounds with duty 0.15–0.45), at 0.5–2.6 × the library's
tempo, every other one on the spot (artists' cycles), from a seed stream the judge's training never drew
from, played on the rig's deform skeleton
(the mirror's FK: on these rigs Blender's evaluation through the controls follows it within 0.011 heights,
``bench_rig_zoo.py``). The judge reads each clip; the table counts those read as their gait and names what
the rest were read as.

Baselines in the same table: the library's own clip of each gait (default variation) and the standing
pose (rest pose held; the right answer for it is no gait).

Exits 1 when fewer than ``--bar`` of the drawn gaits are read as their gait.

    python tests/bench/bench_gaits.py [--draws 12] [--bar 0.8] [--rigs wolf,horse] [--out bench_out/gaits.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import bpy  # noqa: E402

from akd_blender.blender.character.extract import rig_from_armature  # noqa: E402
from akd_blender.core.character.roles import find_roles  # noqa: E402
from akd_blender.core.motion.judge import load_motion_judge  # noqa: E402
from akd_blender.core.motion.library import make_role_clip, sample_variations  # noqa: E402
from akd_blender.core.motion.library.labelled import Variation, rest_clip  # noqa: E402
from tests.blender.rig_zoo import rigify_rig, robot_dog  # noqa: E402
from tools.motion_judge.clips import body_motion, gait_variant, remove_travel  # noqa: E402

RIGS = {
    "basic_quadruped": lambda: rigify_rig("basic_quadruped"),
    "wolf": lambda: rigify_rig("wolf"),
    "horse": lambda: rigify_rig("horse"),
    "cat": lambda: rigify_rig("cat"),
    "robot_dog": robot_dog,
}
GAITS = ("walk", "run", "gallop")
FRAMES, FPS = 48, 24.0
SEED = 20261207  # the judge's training draws its variations from item seeds below 10⁶


def drawn_gait(rig, roles, label: str, rig_number: int, draw: int):
    """One gait ``label`` with its footfalls, duty factor, stride, lift and body motion drawn at random
    (``gait_variant``), tempo 0.5–2.6 × the library's, amplitude 0.65–1.35, any facing; odd draws played on
    the spot (no horizontal travel), as artists' cycles often are."""
    rng = np.random.default_rng([SEED, zlib.crc32(label.encode()), rig_number, draw])
    (v,) = sample_variations(label, "heldout", 1, int(rng.integers(1 << 30)))
    v = replace(
        v, speed=float(rng.uniform(0.5, 2.6)), amplitude=float(rng.uniform(0.65, 1.35)), facing=float(rng.uniform(-np.pi, np.pi))
    )
    clip = gait_variant(rig, roles, label, FRAMES, FPS, body_motion(label, v, rng), rng)
    return remove_travel(rig, roles, clip) if draw % 2 else clip


def bench_rig(name: str, number: int, judge, draws: int) -> dict:
    """The judge's readings of drawn gaits, library gaits and the standing pose on rig ``name``."""
    bpy.ops.wm.read_homefile(use_empty=True)
    armature, _ = RIGS[name]()
    rig = rig_from_armature(armature)
    roles = find_roles(rig)
    row: dict = {"rig": name, "kind": roles.kind, "gaits": {}}
    for label in GAITS:
        read = [judge.judge(rig, roles, drawn_gait(rig, roles, label, number, i))["label"].split("/")[-1] for i in range(draws)]
        library = judge.judge(rig, roles, make_role_clip(rig, roles, label, Variation(), FRAMES, FPS))["label"].split("/")[-1]
        row["gaits"][label] = {
            "right": sum(r == label for r in read),
            "draws": draws,
            "read_as": dict(Counter(read)),
            "library": library,
        }
    row["standing"] = judge.judge(rig, roles, rest_clip(rig, FRAMES, FPS))["label"].split("/")[-1]
    return row


def table(rows: list[dict]) -> str:
    """The markdown table of ``rows``."""
    lines = [
        "| rig | gait | drawn gaits read right | misread as | library clip read as | standing read as |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        for label, g in row["gaits"].items():
            wrong = ", ".join(f"{k} {v}" for k, v in sorted(g["read_as"].items(), key=lambda kv: -kv[1]) if k != label) or "–"
            lines.append(
                f"| {row['rig']} | {label} | {g['right']} of {g['draws']} | {wrong} | {g['library']} | {row['standing']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=12, help="drawn clips per rig and gait")
    ap.add_argument("--bar", type=float, default=0.8, help="exit 1 below this share of drawn gaits read right")
    ap.add_argument("--rigs", default=",".join(RIGS), help="comma-separated rigs (default: all)")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    chosen = args.rigs.split(",")
    unknown = sorted(set(chosen) - set(RIGS))
    if unknown:
        ap.error(f"unknown rig(s) {', '.join(unknown)} (known: {', '.join(RIGS)})")
    judge = load_motion_judge()
    rows = [bench_rig(name, list(RIGS).index(name), judge, args.draws) for name in chosen]
    print(table(rows))
    right = sum(g["right"] for row in rows for g in row["gaits"].values())
    total = sum(g["draws"] for row in rows for g in row["gaits"].values())
    library = sum(g["library"] == label for row in rows for label, g in row["gaits"].items())
    standing = sum(row["standing"] not in GAITS for row in rows)
    print(f"drawn gaits read as their gait: {right} of {total} (bar {args.bar:.0%})")
    print(
        f"baselines: library clips read as their gait {library} of {len(rows) * len(GAITS)}; standing pose read as no gait {standing} of {len(rows)}"
    )
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if right >= args.bar * total else 1


if __name__ == "__main__":
    sys.exit(main())
