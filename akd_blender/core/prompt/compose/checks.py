"""Checks read from a motion itself (no judge, no labels): how far the body travelled, when it was in
the air, how far it turned, which hand rose, how high it went.

Everything is measured on the skinned mesh and posed skeleton in world space (Z up, the ground at
``rig.ground_height``), lengths in body heights (``rig.height``), like :mod:`akd_blender.core.motion.metrics`,
whose :func:`~akd_blender.core.motion.metrics.main_root` is the body's root here and whose contact tolerance
decides when the body is off the ground.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...character.kinematics import Skeleton
from ...character.rig import RigAsset
from ...motion.clip import MotionClip
from ...motion.metrics import CONTACT_TOLERANCE, main_root

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = ["MotionFacts", "motion_facts", "airborne_spells", "raised_hand"]

AIRBORNE_TOLERANCE: float = 2 * CONTACT_TOLERANCE
"""Height of the lowest vertex above the ground (body heights) past which a frame counts as in the air
(twice the metrics' contact tolerance, so a foot's skim does not count as a spell)."""


@dataclass(frozen=True)
class MotionFacts:
    """What a clip does, read from the posed mesh.

    Attributes:
        seconds: the clip's length. travel: horizontal distance of the root's head from its first to its
            last frame (h). path: horizontal length of the root's path (h). travel_per_second: path / seconds.
        turn_degrees: the root's heading change first → last frame about world Z, + counterclockwise
            seen from above (the character's left for a Z-up rig). airborne: in-the-air frame spells
            (:func:`airborne_spells`). lowest: [F] height of the lowest vertex above the ground (h).
        root_height: [F] the root's head above the ground (h). hand_height: side → [F] height of
            the tip of that arm's last bone above the ground (h), for bipeds with arms.
    """

    seconds: float
    travel: float
    path: float
    travel_per_second: float
    turn_degrees: float
    airborne: tuple[tuple[int, int], ...]
    lowest: np.ndarray
    root_height: np.ndarray
    hand_height: dict[str, np.ndarray]

    @property
    def peak(self) -> float:
        """The largest height of the lowest vertex above the ground (h): how high it jumped."""
        return float(self.lowest.max())


def airborne_spells(lowest: np.ndarray, tolerance: float = AIRBORNE_TOLERANCE) -> tuple[tuple[int, int], ...]:
    """(first, last) frames of each run of frames with ``lowest`` [F] above ``tolerance``."""
    air = np.concatenate([[False], np.asarray(lowest) > tolerance, [False]])
    edges = np.flatnonzero(np.diff(air.astype(int)))
    return tuple((int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2]))


def motion_facts(rig: RigAsset, clip: MotionClip, roles: BoneRoles | None = None) -> MotionFacts:
    """The :class:`MotionFacts` of ``clip`` on ``rig`` (``roles`` for the hands; none without them)."""
    if not clip.matches(rig):
        raise ValueError(f"motion_facts: the clip's bones do not match armature '{rig.name}'")
    skeleton = Skeleton(rig, dtype=torch.float64)
    rot, loc = clip.pose_channels(torch.float64)
    with torch.no_grad():
        verts = skeleton.deform(rot, loc).numpy()
        pose = skeleton.pose_matrices(rot, loc).numpy()
    world = rig.armature_world
    h = max(rig.height, 1e-9)
    joints = pose[..., :3, 3] @ world[:3, :3].T + world[:3, 3]
    turns = world[:3, :3] @ pose[..., :3, :3]
    root = main_root(rig)
    xy = joints[:, root, :2] / h
    step = np.linalg.norm(np.diff(xy, axis=0), axis=-1).sum()
    seconds = clip.num_frames / clip.fps
    # heading: the root's rest-frame axis that lies most level, carried by the pose, about world Z
    rest = world[:3, :3] @ rig.rest_matrices[root, :3, :3]
    change = turns[:, root] @ rest.T
    axis = min((rest[:, i] for i in range(3)), key=lambda a: abs(a[2]))
    axis = np.array([axis[0], axis[1], 0.0]) / max(np.linalg.norm(axis[:2]), 1e-12)
    carried = change @ axis
    yaw = np.unwrap(np.arctan2(carried[:, 1], carried[:, 0]))
    lowest = (verts[..., 2].min(1) - rig.ground_height) / h
    hands: dict[str, np.ndarray] = {}
    if roles is not None and roles.kind == "biped":
        for limb in roles.arms:
            if limb.side in ("left", "right") and limb.bones:
                tip = limb.bones[-1]
                heights = verts[:, rig.weights[:, tip] > 0.5, 2] if (rig.weights[:, tip] > 0.5).any() else joints[:, tip, 2:3]
                hands[limb.side] = (heights.max(1) - rig.ground_height) / h
    return MotionFacts(
        seconds=float(seconds),
        travel=float(np.linalg.norm(xy[-1] - xy[0])),
        path=float(step),
        travel_per_second=float(step / seconds),
        turn_degrees=float(np.degrees(yaw[-1] - yaw[0])),
        airborne=airborne_spells(lowest),
        lowest=lowest,
        root_height=(joints[:, root, 2] - rig.ground_height) / h,
        hand_height=hands,
    )


def raised_hand(facts: MotionFacts, margin: float = 0.05) -> str | None:
    """Which hand rose: "left" or "right", the one that went higher than the other by more than ``margin`` body heights
    at its highest; None when neither did (or the rig has no sided arms)."""
    if set(facts.hand_height) != {"left", "right"}:
        return None
    left, right = float(facts.hand_height["left"].max()), float(facts.hand_height["right"].max())
    if abs(left - right) <= margin:
        return None
    return "left" if left > right else "right"
