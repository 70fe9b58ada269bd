"""The command line on a character its roles read as kind "other" (a humanoid from the hips up: two arms,
no legs): "walks forward" stops with exit 2 and one line naming what was read and what walking needs, no
output written, the input unchanged — the job draws no video (it used to spend minutes drawing and fitting
one that moved nothing)."""

from __future__ import annotations

import json

from tests.e2e.akd_cli import run_blender_script, run_cli, sha256

_MAKE = r"""
import sys, bpy
from tests.blender.rig_zoo import bust
bpy.ops.wm.read_homefile(use_empty=True)
bust()
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[1])
print("made")
"""


def test_walks_forward_on_a_bust_stops_in_one_line(tmp_path):
    blend = tmp_path / "bust.blend"
    run_blender_script(_MAKE.replace("sys.argv[1]", json.dumps(str(blend))))
    before = sha256(blend)
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli("--input", blend, "--prompt", "a robot walks forward", "--out", out / "r.blend", "--report", out / "r.json")
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("akd:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "kind other: 2 arms, no legs" in lines[0] and "/walk" in lines[0] and "legs" in lines[0].split("needs", 1)[1]
    assert list(out.iterdir()) == [] and sha256(blend) == before
