"""`make demo`: text-to-motion jobs end to end, offline, on the CPU, with the default model.

Two characters, each run through the batch CLI exactly as a user would (``run_akd.py --input …
--prompt … --out … --preview … --report …``) with every default: the prompt is read as a motion of
the character's kind and that motion of the library is played on the character's bone roles from
its current pose (start "library"; the embedded teacher's weights are not loaded):

- the procedural biped, built in Blender, posed in its standing pose and saved as ``OUT/biped.blend``;
- the artist's Fox, ``$AKD_SHARED/assets/Fox/Fox.gltf``, which the CLI imports with Blender's own glTF
  importer (the path users take); when the shared assets are not there the demo says so in one line
  and runs the biped only.

The loss curves are plotted from the reports. Writes into OUT, per job: ``<name>_akd.blend`` (the
scene with the new action), ``<name>_akd.mp4`` (preview), ``<name>_akd.json`` (report) and
``<name>_loss_curve.png``; plus ``biped.blend`` (the procedural input).

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
from . import cli
from .build import armature_from_rig

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


def plot_losses(report_path: str, png_path: str) -> None:
    """Plot every loss term of the report's ``loss_history`` against the step (log scale); with no
    steps, the pose search's image error before and after (a drawn video fitted as it is), or for a
    library motion played as it is (no optimisation, no loss) a figure that says so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(report_path, encoding="utf-8") as fh:
        report = json.load(fh)
    history = report["loss_history"]
    fig, ax = plt.subplots(figsize=(7, 4))
    title = f"AKD demo: '{report['prompt']}' ({report['model']}, {report['device']})"
    facts = report.get("distill", {})
    if not history and facts.get("start") == "library":  # the library motion as it is: nothing was optimised
        ax.text(
            0.5,
            0.5,
            f"library motion {facts.get('library_motion', '')} ({facts.get('library_variation', 'default')})\n"
            "played on the rig: no optimiser steps, no loss",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
        ax.set_axis_off()
        title += ": library motion"
    elif not history:  # no optimiser steps: the drawn video fitted by the pose search, as it is
        search = facts
        before, after = search.get("search_error_start", float("nan")), search.get("search_error", float("nan"))
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
        flags = ["--input", source, "--prompt", JOBS[name], "--model", MODEL, "--out", f"{stem}.blend"]
        flags += ["--preview", f"{stem}.mp4", "--report", f"{stem}.json"] + (["--steps", str(args.steps)] if args.steps else [])
        print("[demo] python run_akd.py " + " ".join(f"'{f}'" if " " in f else f for f in flags))
        code = cli.main(flags)
        if code != 0:
            return code
        plot_losses(f"{stem}.json", os.path.join(out, f"{name}_loss_curve.png"))
        with open(f"{stem}.json", encoding="utf-8") as fh:
            report = json.load(fh)
        print(
            f"[demo] {name}: new action {report['action_names']} ({report['frames']} frames, {report['steps']} steps, "
            f"{report['seconds']:.0f} s distil+write); preview {stem}.mp4"
        )
    print(f"[demo] done in {time.perf_counter() - start:.0f} s; outputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
