"""Helpers for the black-box CLI tests: run ``run_akd.py`` as a user would, build input .blend files
and read results back, each in its own Python process with the bpy module (isolated user folder)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def env() -> dict[str, str]:
    """A user-like environment: no hub access, a throw-away Blender user folder."""
    e = dict(os.environ)
    e["HF_HUB_OFFLINE"] = "1"
    e["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp(prefix="akd-e2e-user-")
    e["PYTHONPATH"] = str(ROOT)
    return e


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python run_akd.py ARGS`` from a folder other than the repository (as a user would)."""
    cmd = [sys.executable, str(ROOT / "run_akd.py"), *map(str, args)]
    return subprocess.run(cmd, cwd=tempfile.gettempdir(), env=env(), capture_output=True, text=True, timeout=timeout)


def run_blender_script(code: str, timeout: float = 120) -> str:
    """Run ``code`` in a fresh Python with bpy; returns stdout (raises on failure)."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"blender script failed:\n{out.stderr[-3000:]}")
    return out.stdout


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


_MAKE_BLENDS = r"""
import sys, bpy
from akd_blender.core.character.procedural import biped, quadruped
from akd_blender.blender.build import armature_from_rig
folder = sys.argv[1]

def fresh():
    bpy.ops.wm.read_homefile(use_empty=True)

def old_action(arm, name):
    pb = arm.pose.bones[1]
    pb.rotation_mode = "QUATERNION"
    for frame, x in ((1, 0.0), (10, 0.3)):
        pb.rotation_quaternion = (1.0, x, 0.0, 0.0)
        pb.keyframe_insert("rotation_quaternion", frame=frame)
    arm.animation_data.action.name = name

fresh(); arm = armature_from_rig(biped()); old_action(arm, "OldWalk")
for mod in (m for o in bpy.data.objects if o.type == "MESH" for m in o.modifiers if m.type == "ARMATURE"):
    mod.use_deform_preserve_volume = True  # a feature the mirror warns about (the report's warnings)
extra = bpy.data.actions.new("OldSpare"); extra.use_fake_user = True
root = arm.pose.bones[0]; old = arm.animation_data.action  # "OldDrift": the root slides 2 m away
arm.animation_data.action = None
for frame, x in ((1, 0.0), (10, 2.0)):
    root.location = (x, x, 0.0)
    root.keyframe_insert("location", frame=frame)
arm.animation_data.action.name = "OldDrift"; arm.animation_data.action.use_fake_user = True
arm.animation_data.action = old; root.location = (0.0, 0.0, 0.0)
bpy.ops.wm.save_as_mainfile(filepath=f"{folder}/biped.blend")
fresh(); armature_from_rig(biped(), "A"); armature_from_rig(quadruped(), "B")
bpy.ops.wm.save_as_mainfile(filepath=f"{folder}/two_armatures.blend")
fresh(); bpy.ops.mesh.primitive_cube_add()
bpy.ops.wm.save_as_mainfile(filepath=f"{folder}/no_armature.blend")
fresh(); arm = armature_from_rig(biped())
for obj in list(bpy.data.objects):
    if obj.type == "MESH":
        bpy.data.objects.remove(obj)
bpy.ops.wm.save_as_mainfile(filepath=f"{folder}/no_skin.blend")
print("made")
"""


def make_blends(folder: Path) -> dict[str, Path]:
    """Input files: biped (old actions 'OldWalk' active, 'OldSpare' and 'OldDrift' (the root slides 2 m); Preserve Volume skinning, a rig
    warning), two_armatures, no_armature, no_skin."""
    out = subprocess.run(
        [sys.executable, "-c", _MAKE_BLENDS, str(folder)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120
    )
    if "made" not in out.stdout:
        raise RuntimeError(out.stderr[-3000:])
    return {name: folder / f"{name}.blend" for name in ("biped", "two_armatures", "no_armature", "no_skin")}


_SUMMARY = r"""
import json, sys, bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1], load_ui=False)

def fcurves(action):
    if hasattr(action, "layers") and len(action.layers):
        return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]
    return list(getattr(action, "fcurves", []))

actions = {}
for a in bpy.data.actions:
    curves = fcurves(a)
    frames = sorted({round(k.co[0]) for fc in curves for k in fc.keyframe_points})
    actions[a.name] = {"fcurves": len(curves), "frames": frames, "fake_user": a.use_fake_user, "users": a.users}
arms = {o.name: (o.animation_data.action.name if o.animation_data and o.animation_data.action else None)
        for o in bpy.data.objects if o.type == "ARMATURE"}
scene = [bpy.context.scene.frame_start, bpy.context.scene.frame_end]
print("SUMMARY" + json.dumps({"actions": actions, "armatures": arms, "scene_range": scene}))
"""


def blend_summary(path: Path) -> dict:
    """{"actions": {name: {fcurves, frames, fake_user, users}}, "armatures": {name: active action},
    "scene_range": [frame_start, frame_end]}."""
    out = subprocess.run(
        [sys.executable, "-c", _SUMMARY, str(path)], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120
    )
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("SUMMARY")), None)
    if line is None:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(line[len("SUMMARY") :])


def tiny_model(folder: Path) -> str:
    """A tiny random CogVideoX pipeline saved with save_pretrained (tests/core/dummy_priors.py)."""
    sys.path.insert(0, str(ROOT))
    from tests.core.dummy_priors import cogvideox_pipeline, save_pipeline

    return str(save_pipeline(cogvideox_pipeline(), folder))
