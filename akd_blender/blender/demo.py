"""`make demo`: a text-to-motion job end to end, offline, on the CPU.

Builds the procedural biped and quadruped in Blender and saves them as ``OUT/<name>.blend``, then
runs the batch CLI on each exactly as a user would (``run_akd.py --input OUT/biped.blend --prompt …
--model tiny-text --out … --preview … --report …``) with the embedded text-only teacher, which was
trained on these two characters, and plots the loss curves from the
reports. Writes into OUT, per character: ``<name>.blend`` (the input), ``<name>_akd.blend`` (with the
new action), ``<name>_akd.mp4`` (preview), ``<name>_akd.json`` (report) and ``<name>_loss_curve.png``.

Run: ``python -m akd_blender.blender.demo --out demo_out`` (bpy module).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import bpy

from ..core.procedural import CHARACTERS
from ..core.procedural.motions import neutral_clip
from . import cli
from .build import armature_from_rig

JOBS = {"biped": "a figure stretches both arms up to the sky", "quadruped": "a hound springs into the air"}
MODEL = "tiny-text"
"""The demo's prior: the embedded text-only teacher (the default ``tiny`` draws any character, but its
drawings do not yet show the prompted motion reliably; see docs/benchmarks.md)."""


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
    steps (a drawn video fitted as it is), the pose search's image error before and after."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(report_path, encoding="utf-8") as fh:
        report = json.load(fh)
    history = report["loss_history"]
    fig, ax = plt.subplots(figsize=(7, 4))
    title = f"AKD demo: '{report['prompt']}' ({report['model']}, {report['device']})"
    if not history:  # no optimiser steps: the drawn video fitted by the pose search, as it is
        search = report.get("distill", {})
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo_out")
    parser.add_argument("--steps", type=int, default=None, help="default: the CLI's")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    for name, prompt in JOBS.items():
        source = os.path.join(out, f"{name}.blend")
        write_character(name, source)
        print(f"[demo] procedural {name} saved to {source}")
        stem = os.path.join(out, f"{name}_akd")
        flags = ["--input", source, "--prompt", prompt, "--model", MODEL, "--out", f"{stem}.blend", "--preview", f"{stem}.mp4"]
        flags += ["--report", f"{stem}.json"] + (["--steps", str(args.steps)] if args.steps else [])
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
