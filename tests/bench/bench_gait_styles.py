"""Styles of the gaits (``Variation.style``) measured on the skinned mesh against each rig's plain walk:
travel speed and root height as a share of the walk's, frames with no vertex on the ground, how much
longer one foot stays down than its mirror, how far planted feet slide, and each style's own sign
(the measures of ``tests/core/test_gait_styles.py``), per style as the median and range over rigs.

Rigs: the procedural biped and quadruped and family members (``tools.family``), and with ``--rigify``
Rigify's generated human, basic human, basic quadruped, wolf and horse built in the bpy module
(``tests/blender/rig_zoo.py``) and read as the job reads them (``job_rig``: split segments its controls
turn together tied), the clip played on their deform skeleton. A rig fails a style when
the style's check of ``test_gait_styles.py`` fails, or a vertex goes 0.5 % of the height below the
floor, or planted feet slide more than 0.05 of the body's pace beyond the walk's.

    python tests/bench/bench_gait_styles.py [--bipeds 5,2,1,3,4,7,11,13] [--quadrupeds 0,3,1,2,5,8] [--rigify]
        [--out bench_out/gait_styles.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from akd_blender.core.character.procedural import biped, quadruped  # noqa: E402
from akd_blender.core.character.roles import find_roles  # noqa: E402
from akd_blender.core.motion.library import GAIT_STYLES, make_role_clip  # noqa: E402
from akd_blender.core.motion.library.labelled import Variation  # noqa: E402
from tests.core.library_checks import Measured  # noqa: E402
from tests.core.role_fixtures import family_character  # noqa: E402
from tests.core.test_gait_styles import (  # noqa: E402
    CHECKS,
    FPS,
    FRAMES,
    airborne,
    hands_ahead,
    head_height,
    knee_height,
    lowest,
    root_height,
    slip,
    speed,
    stance_asymmetry,
    torso_lean,
    travel_axes,
    weave,
)


def _rigify(names: list[str]) -> dict:
    import bpy

    from akd_blender.blender.job.rig import job_rig
    from tests.blender.rig_zoo import rigify_rig

    out = {}
    for name in names:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        armature, _ = rigify_rig(name)
        rig = job_rig(armature, None)  # as the job reads it: segments its controls turn together tied
        out[f"rigify_{name}"] = (rig, find_roles(rig))
    return out


def _sign(style: str, m: Measured, walk: Measured) -> str:
    """The style's own measure against the walk's, as a short phrase."""
    if style == "stumble":
        return f"weave {weave(m):.2f} h"
    if style == "march":
        return f"knees +{knee_height(m) - knee_height(walk):.2f} h"
    if style == "shamble":
        return f"hands {hands_ahead(m):.2f} h ahead"
    if style == "tired":
        return f"head −{head_height(walk) - head_height(m):.2f} h"
    if style == "proud":
        return f"lean {np.degrees(np.arcsin(torso_lean(m))) - np.degrees(np.arcsin(torso_lean(walk))):+.0f}°"
    if style == "strafe":
        return f"aside {abs(travel_axes(m)[1]):.2f} h"
    return ""


def _cell(rows: list[dict], key: str, digits: int = 2) -> str:
    """``key``'s median (range) over ``rows``."""
    values = np.array([r[key] for r in rows], dtype=float)
    return f"{np.median(values):.{digits}f} ({values.min():.{digits}f}–{values.max():.{digits}f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bipeds", default="5,2,1,3,4,7,11,13")
    parser.add_argument("--quadrupeds", default="0,3,1,2,5,8")
    parser.add_argument("--rigify", action="store_true")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    rigs = {"procedural_biped": (biped(), None), "procedural_quadruped": (quadruped(), None)}
    rigs = {name: (rig, find_roles(rig)) for name, (rig, _) in rigs.items()}
    for kind, seeds in (("biped", args.bipeds), ("quadruped", args.quadrupeds)):
        for seed in filter(None, seeds.split(",")):
            rigs[f"family_{kind}_{seed}"] = family_character(kind, int(seed))
    if args.rigify:
        rigs.update(_rigify(["human", "basic_human", "basic_quadruped", "wolf", "horse"]))
    rows: dict[tuple[str, str], list[dict]] = {}
    for name, (rig, roles) in rigs.items():
        if roles.kind not in GAIT_STYLES:
            print(f"{name}: a {roles.kind}, no styles")
            continue
        walk = Measured(rig, roles, make_role_clip(rig, roles, "walk", Variation(), FRAMES, FPS), 0.0)
        plain = {"rig": name, "speed": 1.0, "root": 1.0, "airborne": airborne(walk), "asymmetry": stance_asymmetry(walk)}
        rows.setdefault((roles.kind, "(plain walk)"), []).append({**plain, "slip": slip(walk), "sign": "", "failed": ""})
        for style in GAIT_STYLES[roles.kind]:
            m = Measured(rig, roles, make_role_clip(rig, roles, "walk", Variation(style=style), FRAMES, FPS), 0.0)
            try:
                CHECKS[style](m, walk)
                assert lowest(m) > -0.005 and slip(m) <= slip(walk) + 0.05
                failed = ""
            except AssertionError as error:
                failed = str(error)[:100] or "floor or slip"
            row = {
                "rig": name,
                "speed": speed(m) / max(speed(walk), 1e-9),
                "root": root_height(m) / root_height(walk),
                "airborne": airborne(m),
                "asymmetry": stance_asymmetry(m),
                "slip": slip(m),
                "sign": _sign(style, m, walk),
                "failed": failed,
            }
            rows.setdefault((roles.kind, style), []).append(row)
            if failed:
                print(f"{name} {style}: FAILED {failed}")
        print(f"{name}: done", flush=True)
    print(f"\n{FRAMES} frames at {FPS:g} fps; median (range) over the rigs\n")
    print(
        "| kind | style | rigs passed | speed × walk | root height × walk | airborne frames | stance asymmetry (frames) | own sign |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (kind, style), found in rows.items():
        passed = sum(not r["failed"] for r in found)
        signs = [r["sign"] for r in found if r["sign"]]
        cells = [_cell(found, "speed"), _cell(found, "root"), _cell(found, "airborne", 0), _cell(found, "asymmetry", 0)]
        print(f"| {kind} | {style} | {passed}/{len(found)} | {' | '.join(cells)} | {signs[len(signs) // 2] if signs else ''} |")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({f"{k}/{s}": v for (k, s), v in rows.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
