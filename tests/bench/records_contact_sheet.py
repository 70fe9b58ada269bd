"""Contact sheet of motions played from records: twelve motions on the procedural biped and
quadruped, five frames each (torch renderer, fixed camera), one row per motion, as one PNG. A bird
motion (``bird/glide``) plays on the tests' family bird.

Run: ``python tests/bench/records_contact_sheet.py [--out docs/records_contact_sheet.png]
[--motions biped/startle quadruped/howl ...]`` (``--motions``: other motions, kind/label, in that order).
Needs no Blender (the procedural characters are built in Python)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

MOTIONS = (
    ("biped", "salute"),
    ("biped", "facepalm"),
    ("biped", "cheer"),
    ("biped", "sword_slash"),
    ("biped", "shoot_bow"),
    ("biped", "pick_up"),
    ("biped", "jumping_jacks"),
    ("biped", "push_ups"),
    ("quadruped", "howl"),
    ("quadruped", "roll_over"),
    ("quadruped", "buck"),
    ("quadruped", "pounce"),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "docs" / "records_contact_sheet.png"))
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--motions", nargs="+", metavar="KIND/LABEL", help="the motions to show (default: the twelve above)")
    args = parser.parse_args()
    motions = tuple(tuple(m.split("/", 1)) for m in args.motions) if args.motions else MOTIONS

    import imageio.v3 as iio

    from akd_blender.core.character.procedural import biped, quadruped
    from akd_blender.core.character.roles import find_roles
    from akd_blender.core.motion.library import make_role_clip
    from akd_blender.core.motion.library.labelled import Variation
    from akd_blender.core.render import render_clip
    from tests.core.role_fixtures import family_character

    rigs = {kind: (rig, find_roles(rig)) for kind, rig in (("biped", biped()), ("quadruped", quadruped()))}
    rigs["bird"] = family_character("bird", 2)
    rows, t0 = [], time.perf_counter()
    for kind, label in motions:
        rig, roles = rigs[kind]
        clip = make_role_clip(rig, roles, label, Variation(), 24, 12.0)
        options = {"azimuth": 30 if kind == "biped" else 40, "elevation": 10}
        video = render_clip(
            rig, clip, args.size, args.size, camera="fixed", backend="torch", camera_options=options, contain=True
        )
        picks = [0, 6, 11, 16, 23]
        frames = (video[picks, :3].permute(0, 2, 3, 1).clamp(0, 1).numpy() * 255).astype(np.uint8)
        rows.append(np.concatenate(list(frames), axis=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(args.out, np.concatenate(rows, axis=0))
    print(
        f"{len(motions)} motions x 5 frames ({', '.join(lab for _, lab in motions)}) in {time.perf_counter() - t0:.1f} s -> {args.out}"
    )


if __name__ == "__main__":
    main()
