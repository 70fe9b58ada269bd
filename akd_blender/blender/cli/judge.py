"""``python -m akd_blender.blender.cli.judge`` (also reached as ``python -m akd_blender.core.video_models.tiny judge``,
which runs this module in a subprocess): recognise the motion of an action with the judge.

Opens ``--input`` (Blender's own readers), picks the armature and the action, evaluates the action's
pose channels over its frame range, finds the rig's bone roles and lets the motion judge
(:class:`~akd_blender.core.motion.judge.MotionJudge`, shipped in ``akd_blender/assets/motion_judge``)
read the clip's body tracks in its 2-second window (a cyclic action is looped). Prints the runners-up,
then the recognised label and its probability on the last line. Exit codes as the main CLI: 0 done,
2 bad input, 3 judge weights missing, 1 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import bpy

from ...core.character.rig import RigAsset
from ...core.errors import AkdError, InputError
from ...core.motion.clip import MotionClip
from ..character.extract import rig_from_armature
from ..character.io import find_armature, load_scene, scene_fps
from ..controls.check import result_of
from ..keys.keyframes import read_clip

__all__ = ["action_clip", "judge_action", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise InputError(message)


def action_clip(armature: str | None, action: str) -> tuple[RigAsset, MotionClip]:
    """The armature ``armature`` of the open scene (None: the only one) mirrored, and its action
    ``action`` as Blender evaluates it over the action's frame range, at the scene's frame rate
    (:func:`~akd_blender.blender.character.io.scene_fps`); an action keyed on the control rig the armature copies is played
    through that rig. Raises InputError for a missing action or one of a single frame."""
    obj = find_armature(armature)
    act = bpy.data.actions.get(action)
    if act is None:
        known = ", ".join(sorted(a.name for a in bpy.data.actions)) or "none"
        raise InputError(f"no action named '{action}' (actions in the file: {known})")
    start, end = (int(round(x)) for x in act.frame_range)
    if end <= start:
        raise InputError(f"action '{action}' spans a single frame ({start}); nothing to judge")
    rig = rig_from_armature(obj)
    checked = result_of(act)  # an action keyed on the control rig that obj (a game rig) copies
    keyed_on = bpy.data.objects.get(checked.armature) if checked is not None and checked.armature else None
    fps = scene_fps(bpy.context.scene)
    return rig, read_clip(obj, start, end, action=act, fps=fps, rig=rig, keyed_on=keyed_on)


def judge_action(path: str, armature: str | None, action: str, top: int = 3) -> dict:
    """Load ``path``, judge ``action`` of ``armature``; returns {"label", "probability", "top": [(label, p)…],
    "frames", "roles"}."""
    from ...core.character.roles import describe_roles, find_roles
    from ...core.motion.judge import load_motion_judge

    load_scene(path)
    rig, clip = action_clip(armature, action)
    roles = find_roles(rig)
    verdict = load_motion_judge().judge(rig, roles, clip, top=top)
    return {**verdict, "frames": clip.num_frames, "roles": describe_roles(roles, rig)}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, judge, print ``LABEL PROBABILITY``; returns the exit code."""
    ap = _Parser(prog="python -m akd_blender.core.video_models.tiny judge", description=__doc__)
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
        print("  " + ", ".join(f"{lab} {p:.3f}" for lab, p in result["top"]))
        print(f"{result['label']} {result['probability']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
