"""Artists' own clips judged, for the motion judge's training report: the folder written by
``tests/bench/artist_fixtures.py`` (an ``index.json``, rigs and clips as ``.npz``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from akd_blender.core.character.rig import RigAsset, load_rig

__all__ = ["ARTIST_EXPECTED", "ARTIST_NOT", "judge_artist_clips"]

ARTIST_EXPECTED = {"Fox.Walk": {"walk"}, "Fox.Run": {"run", "gallop"}, "CesiumMan.Anim_0": {"walk"}}
"""Clips and the labels that count as right."""
ARTIST_NOT = {"Fox.Survey": {"walk", "run", "gallop"}}
"""Clips and the labels that count as wrong (Survey: the fox looks around, no locomotion)."""


def judge_artist_clips(folder: Path, verdict: Callable[[RigAsset, object], dict], log: Callable[[str], None] = print) -> dict:
    """Every clip in ``folder`` judged by ``verdict(rig, clip) -> {"label", "probability", "top"}``:
    {"Model.Action": verdict + "ok" (True / False where :data:`ARTIST_EXPECTED` or :data:`ARTIST_NOT`
    names the clip)}."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "bench"))
    from artist_fixtures import load_clip

    out = {}
    for model, entry in json.loads((folder / "index.json").read_text()).items():
        rig = load_rig(str(folder / entry["rig"]))
        for action, info in entry["clips"].items():
            clip, _ = load_clip(folder / info["file"])
            key = f"{model}.{action}"
            res = verdict(rig, clip)
            if key in ARTIST_EXPECTED:
                res["ok"] = res["label"] in ARTIST_EXPECTED[key]
            elif key in ARTIST_NOT:
                res["ok"] = res["label"] not in ARTIST_NOT[key]
            out[key] = res
            log(f"artist {key}: {res['label']} p {res['probability']:.2f} top {res['top']} ok {res.get('ok')}")
    return out
