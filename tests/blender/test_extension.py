"""The extension zip: built by Blender's own blender_ext.py, installed into a fresh Blender user
folder with ``package_install_files``, and the operator runs from the installed copy (bpy module).

The install runs in its own Python process (fresh user folder, the repository not on sys.path), so
nothing can come from the source tree by accident. Wheels are left out of this zip (the venv already
has the dependencies); ``make extension`` bundles them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_INSTALL_AND_RUN = r"""
import json, os, sys
import bpy
zip_path, model = sys.argv[1], sys.argv[2]
assert bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True) == {"FINISHED"}
import importlib
pkg = "bl_ext.user_default.akd_blender"
characters = importlib.import_module(pkg + ".core.character.procedural")
build = importlib.import_module(pkg + ".blender.build")
bpy.ops.wm.read_homefile(use_empty=True)
arm = build.armature_from_rig(characters.biped())
bpy.context.view_layer.objects.active = arm
s = bpy.context.scene.akd
s.prompt, s.model, s.model_folder, s.steps, s.resolution, s.device = "a person jumps", "FOLDER", model, 2, 16, "cpu"
s.auto_steps = False
s.use_scene_range, s.frame_start, s.frame_end = False, 1, 4
result = bpy.ops.akd.distill()
op_module = sys.modules[bpy.types.AKD_OT_distill.__module__].__file__
print("RESULT" + json.dumps({
    "result": sorted(result),
    "operator_file": op_module,
    "action": arm.animation_data.action.name,
    "frame_range": list(arm.animation_data.action.frame_range),
    "user_dir": bpy.utils.user_resource("EXTENSIONS"),
    "repo_on_path": any(os.path.isdir(os.path.join(p, "akd_blender", "core")) for p in sys.path if p),
}))
"""


def test_zip_installs_and_operator_runs_from_installed_copy(tmp_path):
    sys.path.insert(0, str(ROOT))
    from scripts.build_extension import main as build
    from tests.core.dummy_priors import cogvideox_pipeline, save_pipeline

    assert build(["--no-wheels", "--out-dir", str(tmp_path / "dist"), "--stage", str(tmp_path / "stage/akd_blender")]) == 0
    zip_path = tmp_path / "dist" / f"akd_blender-{__import__('akd_blender').__version__}.zip"
    with zipfile.ZipFile(zip_path) as zf:
        names = set(zf.namelist())
    assert {"blender_manifest.toml", "__init__.py", "blender/panel/operators.py", "core/distillation/sds_loop.py"} <= names
    assert not any("__pycache__" in n for n in names)

    model = save_pipeline(cogvideox_pipeline(), tmp_path / "tiny-cogvideox")
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"), HF_HUB_OFFLINE="1")
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [sys.executable, "-c", _INSTALL_AND_RUN, str(zip_path), str(model)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")), None)
    assert line is not None, out.stderr[-4000:]
    got = json.loads(line[len("RESULT") :])
    assert got["result"] == ["FINISHED"]
    assert got["operator_file"].startswith(str(tmp_path / "user")), got  # the installed copy
    assert not got["repo_on_path"]
    assert got["action"] == "a person jumps" and got["frame_range"] == [1.0, 4.0]
