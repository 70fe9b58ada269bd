"""``python -m akd_blender.blender.judge_cli`` (also reached as ``python -m akd_blender.core.priors.tiny judge``,
which runs this module in a subprocess): recognise the motion of an action with the judge.

Opens ``--input`` (Blender's own readers), picks the armature and the action, evaluates the action's
pose channels over its frame range, renders them with the project renderer (follow camera, the
judge's size) and prints the recognised label and its probability (and the runners-up).
Exit codes as the main CLI: 0 done, 2 bad input, 3 judge weights missing, 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import bpy

from ..core.errors import AkdError, InputError
from .extract import rig_from_armature
from .io import find_armature, load_scene
from .keyframes import read_clip

__all__ = ["judge_action", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise InputError(message)


def judge_action(path: str, armature: str | None, action: str, top: int = 3) -> dict:
    """Load ``path``, judge ``action`` of ``armature``; returns {"label", "probability", "top": [(label, p)…], "frames"}."""
    import torch

    from ..core.priors.tiny import load_judge, load_teacher_config
    from ..core.render import render_clip

    load_scene(path)
    obj = find_armature(armature)
    act = bpy.data.actions.get(action)
    if act is None:
        known = ", ".join(sorted(a.name for a in bpy.data.actions)) or "none"
        raise InputError(f"no action named '{action}' (actions in the file: {known})")
    start, end = (int(round(x)) for x in act.frame_range)
    if end <= start:
        raise InputError(f"action '{action}' spans a single frame ({start}); nothing to judge")
    clip = read_clip(obj, start, end, action=act, fps=bpy.context.scene.render.fps)
    rig = rig_from_armature(obj)
    judge = load_judge("cpu")
    look = load_teacher_config()  # the judge was trained on renders in the teacher's look
    with torch.no_grad():
        video = render_clip(
            rig,
            clip,
            judge.cfg.height,
            judge.cfg.width,
            camera="follow",
            backend="torch",
            style=look.scene_style(),
            camera_options=look.camera_options(),
        )[:, :3]
    labels, probs = judge.classify(video[None])
    order = probs[0].argsort(descending=True)[:top].tolist()
    return {
        "label": labels[0],
        "probability": float(probs[0].max()),
        "top": [(judge.cfg.labels[i], float(probs[0, i])) for i in order],
        "frames": clip.num_frames,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, judge, print ``LABEL PROBABILITY``; returns the exit code."""
    ap = _Parser(prog="python -m akd_blender.core.priors.tiny judge", description=__doc__)
    ap.add_argument("--input", required=True, help=".blend, .gltf/.glb or .fbx")
    ap.add_argument("--armature", default=None, help="armature object (default: the only one)")
    ap.add_argument("--action", required=True, help="the action to judge")
    ap.add_argument("--json", action="store_true", help="print a JSON object instead")
    try:
        args = ap.parse_args(list(argv) if argv is not None else None)
        result = judge_action(args.input, args.armature, args.action)
    except AkdError as exc:
        print(f"akd: error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['label']} {result['probability']:.3f}")
        print("  " + ", ".join(f"{lab} {p:.3f}" for lab, p in result["top"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
