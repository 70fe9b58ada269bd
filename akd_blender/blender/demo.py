"""`make demo`: text-to-motion jobs end to end, offline, on the CPU, with the default model.

Two characters, each run through the batch CLI exactly as a user would (``run_akd.py --input …
--prompt … --out … --preview … --report …``) with every default: the prompt is read as a motion of
the character's kind and that motion of the library is played on the character's bone roles from
its current pose (start "library"; the embedded teacher's weights are not loaded):

- the procedural biped, built in Blender, posed in its standing pose and saved as ``OUT/biped.blend``;
- the artist's Fox, ``$AKD_SHARED/assets/Fox/Fox.gltf``, which the CLI imports with Blender's own glTF
  importer (the path users take); when the shared assets are not there the demo says so in one line
  and runs the biped only.

Writes into OUT, per job: ``<name>_akd.blend`` (the scene with the new action), ``<name>_akd.mp4``
(preview), ``<name>_akd.json`` (report) and ``<name>_contact_sheet.png`` (six frames of the new action as
Blender evaluates it, side by side), and ``<name>_loss_curve.png`` only where the job has a curve to
plot (optimiser steps, or a drawn video's pose search); plus ``biped.blend`` (the procedural input).

Run: ``python -m akd_blender.blender.demo --out demo_out`` (bpy module).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import bpy

from ..core.character.procedural import CHARACTERS
from ..core.motion.library.labelled import neutral_clip
from .build import armature_from_rig
from .cli import distill

JOBS = {"biped": "a figure stretches both arms up to the sky", "fox": "a fox walks forward"}
"""Prompt per job, each a wording the embedded teacher reads as a motion of that character's kind."""
MODEL = "tiny"
"""The demo's prior: the default embedded teacher, which draws the user's own character."""


def shared_assets() -> str:
    """The shared assets folder: ``$AKD_SHARED/assets``, else ``../shared/assets`` beside the source tree."""
    shared = os.environ.get("AKD_SHARED") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared")
    return os.path.abspath(os.path.join(shared, "assets"))


def fox_path() -> str | None:
    """The artist's Fox glTF of the shared assets, or None when it is not there."""
    path = os.path.join(shared_assets(), "Fox", "Fox.gltf")
    return path if os.path.isfile(path) else None


def write_character(name: str, path: str) -> None:
    """Save procedural character ``name`` (armature + skinned mesh) as a new .blend at ``path``, posed
    (not keyed) in the motion library's standing pose (the biped's arms down): the distillation
    starts from it."""
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = CHARACTERS[name]()
    arm = armature_from_rig(rig)
    standing = neutral_clip(rig)
    for pb, quat in zip(arm.pose.bones, standing.rotations[0]):
        pb.rotation_mode = "QUATERNION"
        pb.rotation_quaternion = quat.tolist()
    bpy.ops.wm.save_as_mainfile(filepath=path)


def plot_losses(report_path: str, png_path: str) -> bool:
    """Plot every loss term of the report's ``loss_history`` against the step (log scale); with no
    steps, the pose search's image error before and after (a drawn video fitted as it is). A library
    motion played as it is has nothing to plot: no figure is written. Returns whether one was."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(report_path, encoding="utf-8") as fh:
        report = json.load(fh)
    history = report["loss_history"]
    facts = report.get("distill", {})
    if not history and "search_error" not in facts:  # nothing was optimised or fitted
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    title = f"AKD demo: '{report['prompt']}' ({report['model']}, {report['device']})"
    if not history:  # no optimiser steps: the drawn video fitted by the pose search, as it is
        before, after = facts.get("search_error_start", float("nan")), facts["search_error"]
        ax.bar(["standing pose", "after the pose search"], [before, after], color=["0.6", "tab:blue"])
        ax.set_ylabel("image error against the drawn video")
        title += ": drawn video, fitted"
    else:
        keys = [k for k in history[0] if k not in ("step", "seconds", "lr", "t") and not k.startswith("sds_")]  # losses only
        for key in keys:
            values = [abs(row.get(key, float("nan"))) + 1e-12 for row in history]
            ax.plot(values, label=key, linewidth=1.5 if key == "total" else 1.0)
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("loss (absolute value)")
        ax.legend(fontsize=7, ncol=2)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return True


CONTACT_FRAMES = 6
"""How many frames of a job's new action its contact sheet shows, evenly spaced from the first to the last."""


def write_contact_sheet(blend_path: str, png_path: str, size: int = 256, frames: int = CONTACT_FRAMES) -> list[int]:
    """Open a job's ``.blend``, read its armature's action as Blender evaluates it
    (:func:`~akd_blender.blender.keys.keyframes.read_clip`) and write ``frames`` of its frames, rendered by the
    project renderer at ``size`` × ``size`` pixels with the whole motion in view, side by side as one PNG.
    Returns the Blender frame numbers shown."""
    import imageio.v3 as iio
    import numpy as np

    from ..core.render import render_clip
    from .character.extract import rig_from_armature
    from .character.io import find_armature, load_scene
    from .keys.keyframes import read_clip

    load_scene(blend_path)
    armature = find_armature(None)
    rig = rig_from_armature(armature)
    action = armature.animation_data.action
    first, last = (int(round(f)) for f in action.frame_range)
    clip = read_clip(armature, first, last, action=action, rig=rig)
    picks = np.unique(np.linspace(0, clip.num_frames - 1, frames).round().astype(int))
    video = render_clip(rig, clip, size, size, contain=True).detach().float().cpu().numpy()  # [F,4,H,W]
    shown = (video[picks, :3].clip(0, 1).transpose(0, 2, 3, 1) * 255 + 0.5).astype(np.uint8)
    iio.imwrite(png_path, np.concatenate(list(shown), axis=1))
    return [first + int(k) for k in picks]


def job_sources(out: str) -> dict[str, str]:
    """The input file of each job in :data:`JOBS`: the procedural biped written into ``out`` now, and the
    Fox's glTF when the shared assets hold it (else one line says it is skipped)."""
    biped = os.path.join(out, "biped.blend")
    write_character("biped", biped)
    print(f"[demo] procedural biped saved to {biped}")
    sources = {"biped": biped}
    fox = fox_path()
    if fox is None:
        print(f"[demo] the shared assets are missing ({shared_assets()}/Fox/Fox.gltf): the Fox job is skipped")
    else:
        sources["fox"] = fox
    return sources


def job_flags(source: str, prompt: str, stem: str, steps: int | None = None, preview: bool = True) -> list[str]:
    """The CLI flags of one demo job: ``source`` animated by ``prompt`` with the demo's model, writing
    ``<stem>.blend``, ``<stem>.json`` and (``preview``) ``<stem>.mp4``; ``steps`` None keeps the CLI's default."""
    flags = ["--input", source, "--prompt", prompt, "--model", MODEL, "--out", f"{stem}.blend", "--report", f"{stem}.json"]
    flags += ["--preview", f"{stem}.mp4"] if preview else []
    return flags + (["--steps", str(steps)] if steps else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo_out")
    parser.add_argument("--steps", type=int, default=None, help="default: the CLI's")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    for name, source in job_sources(out).items():
        stem = os.path.join(out, f"{name}_akd")
        flags = job_flags(source, JOBS[name], stem, steps=args.steps)
        print("[demo] python run_akd.py " + " ".join(f"'{f}'" if " " in f else f for f in flags))
        code = distill.main(flags)
        if code != 0:
            return code
        sheet = os.path.join(out, f"{name}_contact_sheet.png")
        shown = write_contact_sheet(f"{stem}.blend", sheet)
        plotted = plot_losses(f"{stem}.json", os.path.join(out, f"{name}_loss_curve.png"))
        with open(f"{stem}.json", encoding="utf-8") as fh:
            report = json.load(fh)
        print(
            f"[demo] {name}: new action {report['action_names']} ({report['frames']} frames, {report['steps']} steps, "
            f"{report['seconds']:.0f} s distil+write); preview {stem}.mp4; frames {shown} in {sheet}"
            + ("; loss curve plotted" if plotted else "")
        )
    print(f"[demo] done in {time.perf_counter() - start:.0f} s; outputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
