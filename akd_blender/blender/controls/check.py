"""Check an action keyed on a rig's controls in Blender's evaluation, and the result it stores.

Needs: main thread, Object or Pose mode. :func:`check` sets the scene's frame (to each checked frame)
and reads ``pose_bone.matrix`` of the deform bones; nothing else changes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import bpy
import numpy as np

from ...core.motion.clip import MotionClip
from .probe import ControlMap
from .rig import pose_matrices

__all__ = [
    "CHECK_FRAMES",
    "POSITION_TOLERANCE",
    "ROTATION_TOLERANCE",
    "PROPERTY",
    "ControlResult",
    "result_of",
    "check",
    "unit_rows",
    "rotation_angles",
]

CHECK_FRAMES = 5
POSITION_TOLERANCE = 0.01  # character heights
ROTATION_TOLERANCE = 0.05  # radians
PROPERTY = "akd_controls"  # the action's custom property holding ControlResult as JSON


@dataclass
class ControlResult:
    """What :func:`write_to_controls` keyed and how well Blender's evaluation follows the clip.

    keyed: the pose bones that got keys (controls, IK targets/poles, the carrier).
    switches: ``"bone[prop]=value"`` of each IK/FK switch keyed at its FK value.
    position_error: the largest distance (character heights) between a deform bone's evaluated head or
        tail and its target over the checked frames.
    rotation_error: the largest angle (radians) between a deform bone's evaluated and target rotation.
    undriven: deform bone → why it is off target (beyond POSITION_TOLERANCE / ROTATION_TOLERANCE).
    aimed: deform bones the rig aims at others (:attr:`~.controls.map.ControlMap.aimed`) → the constraint:
        Blender places them, so they are not held to the motion (nor counted in the errors).
    checked_frames: the frames evaluated.
    seconds: time spent probing, posing, keying and checking.
    armature: the armature keyed when it is not the one whose motion this is ("" when it is): the control
        rig a game rig's bones copy (:func:`.character.game_rig.followed_armature`); the action is assigned to it.
    """

    keyed: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    position_error: float = 0.0
    rotation_error: float = 0.0
    undriven: dict[str, str] = field(default_factory=dict)
    aimed: dict[str, str] = field(default_factory=dict)
    checked_frames: list[int] = field(default_factory=list)
    seconds: float = 0.0
    armature: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    def warnings(self) -> list[str]:
        """One line naming the undriven bones (the first with its reason, up to three more by name), or
        none when every held deform bone is within the tolerances."""
        if not self.undriven:
            return []
        (first, why), *rest = self.undriven.items()
        more = ", ".join(f"'{bone}'" for bone, _ in rest[:3]) + (", …" if len(rest) > 3 else "")
        return [
            f"{len(self.undriven)} deform {'bones stay' if len(self.undriven) > 1 else 'bone stays'} off the motion in Blender's "
            f"evaluation (beyond {POSITION_TOLERANCE} heights / {ROTATION_TOLERANCE} rad): '{first}' {why}"
            + (f"; also {more}" if rest else "")
            + f" (each with its reason in the action's '{PROPERTY}' property)"
        ]


def result_of(action: bpy.types.Action) -> ControlResult | None:
    """The :class:`ControlResult` stored on an action written by :func:`write_to_controls`, else None."""
    text = action.get(PROPERTY) if action is not None else None
    return ControlResult(**json.loads(text)) if text else None


def check(
    armature_obj: bpy.types.Object, clip: MotionClip, cmap: ControlMap, targets: np.ndarray, height: float
) -> ControlResult:
    """Evaluate up to CHECK_FRAMES frames of the armature's animation (first and last included) and
    compare the deform bones' ``pose_bone.matrix`` with ``targets`` [F,J,4,4]; ``height`` in world units.
    The scene's frame is left at the last checked frame."""
    index = {pb.name: i for i, pb in enumerate(armature_obj.pose.bones)}
    idx = np.array([index[n] for n in clip.bone_names])
    lengths = np.array([armature_obj.data.bones[n].length for n in clip.bone_names])
    scale = max(max(abs(v) for v in armature_obj.matrix_world.to_scale()), 1e-12)
    picks = np.unique(np.linspace(0, clip.num_frames - 1, min(CHECK_FRAMES, clip.num_frames)).round().astype(int))
    pos_err = np.zeros(len(idx))
    rot_err = np.zeros(len(idx))
    for f in picks:
        bpy.context.scene.frame_set(int(clip.frame_start + f))
        got, want = pose_matrices(armature_obj)[idx], targets[f]
        heads = np.linalg.norm(got[:, :3, 3] - want[:, :3, 3], axis=-1)
        tails = np.linalg.norm(
            got[:, :3, 3]
            + lengths[:, None] * unit_rows(got[:, :3, 1])
            - want[:, :3, 3]
            - lengths[:, None] * unit_rows(want[:, :3, 1]),
            axis=-1,
        )
        pos_err = np.maximum(pos_err, np.maximum(heads, tails) * scale / height)
        rot_err = np.maximum(rot_err, rotation_angles(got[:, :3, :3], want[:, :3, :3]))
    held = np.array([bone not in cmap.aimed for bone in clip.bone_names], dtype=bool)
    result = ControlResult(
        position_error=float(pos_err[held].max(initial=0.0)),
        rotation_error=float(rot_err[held].max(initial=0.0)),
        aimed=dict(cmap.aimed),
        checked_frames=[int(clip.frame_start + f) for f in picks],
    )
    for i, bone in enumerate(clip.bone_names):
        if not held[i] or (pos_err[i] <= POSITION_TOLERANCE and rot_err[i] <= ROTATION_TOLERANCE):
            continue
        off = f"{pos_err[i]:.3f} heights / {rot_err[i]:.3f} rad off"
        if bone in cmap.unreached:
            result.undriven[bone] = f"{off}: {cmap.unreached[bone]}"
        elif bone in cmap.followers:
            result.undriven[bone] = f"{off}: moves only with {cmap.control_of[bone]}, the control of {cmap.followers[bone]}"
        else:
            result.undriven[bone] = f"{off}: the rig's constraints keep it from its control's target ({cmap.control_of[bone]})"
    return result


def unit_rows(v: np.ndarray) -> np.ndarray:
    """``v`` [...,3] with each last-axis vector scaled to unit length (zero vectors stay zero)."""
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def rotation_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[N] angle (radians) between rotation parts a, b [N,3,3] (columns normalised first), from the
    Frobenius distance ‖A − B‖ = 2√2 sin(θ/2) (accurate for small angles, unlike the trace)."""
    ra, rb = unit_rows(np.swapaxes(a, -1, -2)), unit_rows(np.swapaxes(b, -1, -2))
    distance = np.linalg.norm((ra - rb).reshape(len(ra), -1), axis=-1)
    return 2.0 * np.arcsin(np.clip(distance / (2.0 * np.sqrt(2.0)), 0.0, 1.0))
