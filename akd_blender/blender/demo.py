"""`make demo`: a text-to-motion job end to end, offline, on the CPU.

Builds the procedural biped in Blender and saves it as ``OUT/biped.blend``, then runs the batch CLI on
it exactly as a user would (``run_akd.py --input OUT/biped.blend --prompt … --out … --preview …
--report …``) with the embedded teacher, and plots the loss curve from the report. Writes into OUT:
``biped.blend`` (the input), ``biped_akd.blend`` (with the new action), ``biped_akd.mp4`` (preview),
``biped_akd.json`` (report) and ``loss_curve.png``.

Run: ``python -m akd_blender.blender.demo --out demo_out`` (bpy module).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import bpy

from ..core.procedural import biped
from ..core.procedural.motions import neutral_clip
from . import cli
from .build import armature_from_rig

DEFAULT_PROMPT = "a person waves their right arm"


def write_biped(path: str) -> None:
    """Save the procedural biped (armature + skinned mesh) as a new .blend at ``path``, posed (not
    keyed) in the motion library's standing pose, arms down: the distillation starts from it."""
    bpy.ops.wm.read_homefile(use_empty=True)
    rig = biped()
    arm = armature_from_rig(rig)
    standing = neutral_clip(rig)
    for pb, quat in zip(arm.pose.bones, standing.rotations[0]):
        pb.rotation_mode = "QUATERNION"
        pb.rotation_quaternion = quat.tolist()
    bpy.ops.wm.save_as_mainfile(filepath=path)


def plot_losses(report_path: str, png_path: str) -> None:
    """Plot every loss term of the report's ``loss_history`` against the step (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(report_path, encoding="utf-8") as fh:
        report = json.load(fh)
    history = report["loss_history"]
    fig, ax = plt.subplots(figsize=(7, 4))
    keys = [k for k in history[0] if k not in ("step", "seconds", "lr", "t")]
    for key in keys:
        values = [abs(row.get(key, float("nan"))) + 1e-12 for row in history]
        ax.plot(values, label=key, linewidth=1.5 if key == "total" else 1.0)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (absolute value)")
    ax.set_title(f"AKD demo: '{report['prompt']}' ({report['model']}, {report['device']})")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo_out")
    parser.add_argument("--prompt", default=DEFAULT_PROMPT)
    parser.add_argument("--steps", type=int, default=None, help="default: the CLI's")
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    source = os.path.join(out, "biped.blend")
    write_biped(source)
    print(f"[demo] procedural biped saved to {source}")
    flags = ["--input", source, "--prompt", args.prompt, "--out", os.path.join(out, "biped_akd.blend")]
    flags += ["--preview", os.path.join(out, "biped_akd.mp4"), "--report", os.path.join(out, "biped_akd.json")]
    if args.steps:
        flags += ["--steps", str(args.steps)]
    print("[demo] python run_akd.py " + " ".join(f"'{f}'" if " " in f else f for f in flags))
    code = cli.main(flags)
    if code != 0:
        return code
    plot_losses(os.path.join(out, "biped_akd.json"), os.path.join(out, "loss_curve.png"))
    with open(os.path.join(out, "biped_akd.json"), encoding="utf-8") as fh:
        report = json.load(fh)
    print(
        f"[demo] new action {report['action_names']} ({report['frames']} frames, {report['steps']} steps, "
        f"{report['seconds']:.0f} s distil+write); loss curve {os.path.join(out, 'loss_curve.png')}; "
        f"whole demo {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
