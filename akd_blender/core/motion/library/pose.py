"""A role-aware pose builder: bone rotations about body-frame axes, the root's travel, ground contact.

Blender poses bone ``b`` (parent ``p``, default flags) as ``pose_b = pose_p · rest_p⁻¹ · rest_b · basis_b``,
so the rotation a bone applies to its subtree, seen in armature space with its parent at rest, is
``G_b = R_rest_b · Q_b · R_rest_bᵀ`` and the bone's posed orientation change is ``D_b = D_p · G_b``.
:class:`BodyPose` accumulates ``G_b`` per frame from rotations about armature-space axes *as posed at
the time of the call* (``D_b ← R(axis, angle) · D_b``, i.e. ``G_b ← R(D_pᵀ axis, angle) · G_b``), so
motions are written in the character's body frame (``roles.frame``: up / forward / left, any facing,
Y-up armatures too) and never depend on bone rolls or bone-axis conventions; the channel quaternion
is ``Q_b = R_rest_bᵀ · G_b · R_rest_b``. Call order matters: a parent's rotations before its children's.

Directions of limb segments come from the rest geometry (a bone's head to the next bone's head in
its chain, the last bone to its farthest skinned vertex), never from bone tails, which glTF imports
point anywhere. The finished clip turns the body by the facing yaw about its rest centre, carries the
root's travel through the root bone's location channel (whatever its parent and rest orientation),
and lifts or lowers the root each frame so that the lowest skinned vertex is at ``frame.ground`` plus
the motion's ``lift`` (root height compensation from the posed geometry).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import torch

from ...character.rig import RigAsset
from ...character.rotations import matrix_to_quat, quat_to_matrix, quat_to_rotvec, rotvec_to_quat
from ..clip import MotionClip
from .ground_contact import lowest_heights

if TYPE_CHECKING:
    from ...character.roles import BoneRoles, Limb

__all__ = [
    "BodyPose",
    "normalized_time",
    "smoothstep",
    "bump",
    "bone_tip",
    "dominant_bone",
    "untied",
    "segment_directions",
    "leg_bones",
    "is_sprawled",
    "limb_length",
    "knee_sign",
    "location_carrier",
    "location_axes",
    "rotvec_matrices",
]


def normalized_time(frames: int) -> np.ndarray:
    """Time [F] in [0, 1): frame k at k / F."""
    return np.arange(frames) / frames


def smoothstep(x: np.ndarray) -> np.ndarray:
    """0 below 0, 1 above 1, the cubic 3x² − 2x³ between (same shape as ``x``)."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


def bump(t: np.ndarray, start: float, end: float, ramp: float = 0.15) -> np.ndarray:
    """0 → 1 → 0 over [start, end] with smooth ramps of ``ramp`` (same units as ``t``)."""
    return smoothstep((t - start) / ramp) * smoothstep((end - t) / ramp)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)


def rotvec_matrices(rotvec: np.ndarray) -> np.ndarray:
    """Rotation vectors [...,3] (radians, armature axes) → rotation matrices [...,3,3], float64 numpy."""
    return quat_to_matrix(rotvec_to_quat(torch.as_tensor(rotvec, dtype=torch.float64))).numpy()


def _rotvecs(matrix: np.ndarray) -> np.ndarray:
    """Rotation matrices [...,3,3] → rotation vectors [...,3] (angle in [0, π])."""
    return quat_to_rotvec(matrix_to_quat(torch.as_tensor(matrix, dtype=torch.float64))).numpy()


@lru_cache(maxsize=16)
def dominant_bone(rig: RigAsset) -> np.ndarray:
    """int64 [V]: the bone with the largest weight on each vertex (-1 for unweighted vertices)."""
    dominant = np.argmax(rig.weights, axis=1)
    return np.where(rig.weights.max(axis=1) > 0, dominant, -1)


def bone_tip(rig: RigAsset, bone: int) -> np.ndarray:
    """The far end [3] of a chain's last bone: its skinned vertex farthest from its head (tail if none)."""
    owned = rig.vertices[dominant_bone(rig) == bone]
    if len(owned) == 0:
        return rig.tails[bone]
    return owned[np.argmax(np.linalg.norm(owned - rig.heads[bone], axis=1))]


def segment_directions(rig: RigAsset, chain: tuple[int, ...]) -> np.ndarray:
    """Unit rest directions [n,3] (armature space) of a chain's bones: head to the next bone's head,
    the last bone head to its tip (:func:`bone_tip`). A zero-length segment falls back to head → tail."""
    points = [rig.heads[b] for b in chain] + [bone_tip(rig, chain[-1])]
    out = []
    for k, b in enumerate(chain):
        d = points[k + 1] - points[k]
        if np.linalg.norm(d) < 1e-6 * max(rig.height, 1e-9):
            d = rig.tails[b] - rig.heads[b]
        out.append(_unit(d))
    return np.stack(out)


def untied(rig: RigAsset, chain: tuple[int, ...]) -> tuple[int, ...]:
    """``chain`` without the rig's tied bones (``RigAsset.tied_bones``: segments its controls turn
    only with their parent), which then follow their parent rigidly; its first bone alone when every
    bone of it is tied."""
    if not rig.tied_bones:
        return chain
    tied = set(rig.tied_bones)
    return tuple(b for b in chain if rig.bone_names[b] not in tied) or chain[:1]


def leg_bones(rig: RigAsset, limb: Limb) -> tuple[int, ...]:
    """The leg's bones from the hip down, tied segments left out (:func:`untied`): a short first bone
    (a scapula or hip bone under 60 % of the next segment's length) is dropped from legs of 4+ bones."""
    bones = untied(rig, limb.bones)
    if len(bones) >= 4:
        points = [rig.heads[b] for b in bones[:3]]
        if np.linalg.norm(points[1] - points[0]) < 0.6 * np.linalg.norm(points[2] - points[1]):
            return bones[1:]
    return bones


def is_sprawled(rig: RigAsset, roles: BoneRoles, limb: Limb) -> bool:
    """Whether the leg reaches out sideways more than down (an insect's leg), hip to foot at rest."""
    reach = bone_tip(rig, limb.bones[-1]) - rig.heads[limb.bones[0]]
    return abs(float(reach @ roles.frame.left)) > abs(float(reach @ roles.frame.up))


def limb_length(rig: RigAsset, roles: BoneRoles, limb: Limb) -> float:
    """How high the limb's first joint stands above the rest ground (armature units): the length a
    gait's stride and a crouch scale with. At least 5 % of the character's height."""
    frame = roles.frame
    height = float(rig.heads[limb.bones[0]] @ frame.up) - frame.ground
    return max(height, 0.05 * frame.height)


def knee_sign(rig: RigAsset, roles: BoneRoles, limb: Limb) -> float:
    """+1 when the limb's second bone flexes by pitching forward (a quadruped's front leg, a bird's
    leg), -1 when it flexes backward (a human knee, a quadruped's hind knee). Read from the rest
    bend between the first two segments when it exceeds 5°, else from the kind and limb position."""
    if len(limb.bones) >= 2:
        d = segment_directions(rig, limb.bones)[:2]
        bend = float(np.cross(d[0], d[1]) @ -roles.frame.left)  # pitch (about the right axis) upper → lower
        if abs(bend) > np.sin(np.deg2rad(5.0)):
            return float(np.sign(bend))
    if roles.kind == "bird" or (roles.kind != "biped" and limb.position == "front"):
        return 1.0
    return -1.0


def location_carrier(rig: RigAsset, root: int) -> int:
    """The bone whose location channel moves ``root``: the root itself, or its nearest ancestor that is
    not connected to its parent (Blender ignores a connected bone's location)."""
    bone = root
    while rig.use_connect[bone] and rig.parents[bone] >= 0:
        bone = int(rig.parents[bone])
    return bone


def location_axes(rig: RigAsset, bone: int) -> np.ndarray:
    """[3,3] L with armature-space delta = L · location, for a bone whose ancestors are at rest."""
    if rig.use_local_location[bone]:
        return rig.rest_matrices[bone, :3, :3]
    parent = int(rig.parents[bone])
    return rig.rest_matrices[parent, :3, :3] if parent >= 0 else np.eye(3)


class BodyPose:
    """Per-frame rotations of a rig's bones about armature-space axes plus the body's travel.

    Attributes: ``t`` normalised time [F]; ``up``, ``forward``, ``left``, ``right`` the body frame's
    unit axes (armature space, from ``roles.frame``); ``travel`` [F,3] the root's displacement in the
    body frame before the facing turn (armature units); ``lift`` [F] height of the lowest vertex above
    the ground wanted per frame; ``yaw`` [F] extra turn about ``up`` (radians, positive turns left);
    ``legs`` the roles' legs from the hip down (:func:`leg_bones`); ``wings`` the roles' wings without
    tied segments (:func:`untied`).
    """

    def __init__(self, rig: RigAsset, roles: BoneRoles, frames: int, fps: float) -> None:
        self.rig, self.roles, self.frames, self.fps = rig, roles, frames, fps
        self.t = normalized_time(frames)
        frame = roles.frame
        self.up, self.forward, self.left = (np.asarray(v, dtype=np.float64) for v in (frame.up, frame.forward, frame.left))
        self.right = -self.left
        self.height = float(frame.height)
        self.local = np.tile(np.eye(3), (frames, rig.num_bones, 1, 1))  # G_b, armature axes
        self.travel = np.zeros((frames, 3))
        self.lift = np.zeros(frames)
        self.yaw = np.zeros(frames)
        self.legs = tuple(replace(limb, bones=leg_bones(rig, limb)) for limb in roles.legs if limb.bones)
        self.wings = tuple(replace(limb, bones=untied(rig, limb.bones)) for limb in roles.wings if limb.bones)
        self._tied = {rig.bone_names.index(n) for n in rig.tied_bones}

    # ------------------------------------------------------------------ orientation bookkeeping

    def posed(self, bone: int) -> np.ndarray:
        """[F,3,3] the bone's accumulated orientation change D_b (armature space, before the facing)."""
        chain = []
        b = bone
        while b >= 0:
            chain.append(b)
            if not self.rig.inherit_rotation[b]:
                break
            b = int(self.rig.parents[b])
        out = np.tile(np.eye(3), (self.frames, 1, 1))
        for b in reversed(chain):
            out = out @ self.local[:, b]
        return out

    def head_position(self, bone: int) -> np.ndarray:
        """[F,3] where the bone's head is carried by its ancestors' rotations so far (armature space,
        before the facing and travel; the root's ancestors stay at rest)."""
        parent = int(self.rig.parents[bone])
        if parent < 0:
            return np.tile(self.rig.heads[bone], (self.frames, 1))
        offset = self.rig.heads[bone] - self.rig.heads[parent]
        return self.head_position(parent) + self.posed(parent) @ offset

    def _parent_posed(self, bone: int) -> np.ndarray:
        parent = int(self.rig.parents[bone])
        if parent < 0 or not self.rig.inherit_rotation[bone]:
            return np.tile(np.eye(3), (self.frames, 1, 1))
        return self.posed(parent)

    def rotate_by(self, bone: int, rotvec: np.ndarray) -> BodyPose:
        """Turn the bone (and its subtree) about its head by rotation vectors [3] or [F,3] given in
        armature space as posed now: D_b ← R(rotvec) · D_b. A tied bone (``RigAsset.tied_bones``: the
        rig's controls turn it only with its parent) is turned with its nearest untied ancestor, about
        that one's head (Rigify's skull, the head role, turns with the head bone that carries it)."""
        while bone in self._tied and self.rig.inherit_rotation[bone] and self.rig.parents[bone] >= 0:
            bone = int(self.rig.parents[bone])
        rotvec = np.broadcast_to(np.asarray(rotvec, dtype=np.float64), (self.frames, 3))
        parent = self._parent_posed(bone)
        local_rotvec = np.einsum("fji,fj->fi", parent, rotvec)  # D_pᵀ · rotvec
        self.local[:, bone] = rotvec_matrices(local_rotvec) @ self.local[:, bone]
        return self

    def rotate(self, bone: int, axis: np.ndarray, angle: np.ndarray | float) -> BodyPose:
        """Turn the bone by ``angle`` (radians, scalar or [F]) about ``axis`` ([3] or [F,3], armature
        space, right-hand rule)."""
        angle = np.broadcast_to(np.asarray(angle, dtype=np.float64), (self.frames,))
        return self.rotate_by(bone, _unit(np.asarray(axis, dtype=np.float64)) * angle[:, None])

    def pitch(self, bone: int, angle: np.ndarray | float) -> BodyPose:
        """Rotate about the body's right axis: positive lifts the front / swings a hanging limb forward."""
        return self.rotate(bone, self.right, angle)

    def direction(self, bone: int, chain: tuple[int, ...]) -> np.ndarray:
        """[F,3] the posed direction of ``bone``'s segment in ``chain`` (armature space)."""
        rest = segment_directions(self.rig, chain)[chain.index(bone)]
        return self.posed(bone) @ rest

    def aim(self, bone: int, chain: tuple[int, ...], target: np.ndarray, weight: np.ndarray | float = 1.0) -> BodyPose:
        """Swing ``bone`` (no twist) so its segment in ``chain`` points along ``target`` ([3] or [F,3],
        armature space); ``weight`` in [0,1] (scalar or [F]) goes part of the way."""
        return self.aim_vector(bone, self.direction(bone, chain), target, weight)

    def aim_vector(self, bone: int, current: np.ndarray, target: np.ndarray, weight: np.ndarray | float = 1.0) -> BodyPose:
        """Swing ``bone`` (no twist) by the rotation taking ``current`` [F,3] (a direction its subtree
        carries, as posed now) to ``target`` ([3] or [F,3]); ``weight`` goes part of the way."""
        current = _unit(np.asarray(current, dtype=np.float64))
        target = _unit(np.broadcast_to(np.asarray(target, dtype=np.float64), current.shape))
        axis = np.cross(current, target)
        sin, cos = np.linalg.norm(axis, axis=-1), (current * target).sum(-1)
        fallback = np.cross(current, self.up)
        fallback = np.where(np.linalg.norm(fallback, axis=-1, keepdims=True) > 1e-6, fallback, np.cross(current, self.forward))
        axis = np.where(sin[:, None] > 1e-9, axis, fallback)
        weight = np.broadcast_to(np.asarray(weight, dtype=np.float64), (self.frames,))
        return self.rotate(bone, axis, np.arctan2(sin, cos) * weight)

    def hold_place(self, shift: np.ndarray) -> BodyPose:
        """Move the body back by the horizontal part of ``shift`` ([F,3] or [3], armature units; the clip
        grounds the vertical): what a pose displaced stays where it lay."""
        shift = np.broadcast_to(np.asarray(shift, dtype=np.float64), (self.frames, 3))
        self.travel = self.travel - (shift - np.outer(shift @ self.up, self.up))
        return self

    def level(self, bone: int, weight: np.ndarray | float = 1.0) -> BodyPose:
        """Turn ``bone`` back towards its rest orientation in armature space (a foot kept level)."""
        weight = np.broadcast_to(np.asarray(weight, dtype=np.float64), (self.frames,))
        undo = _rotvecs(np.swapaxes(self.posed(bone), -1, -2))
        return self.rotate_by(bone, undo * weight[:, None])

    def bend_chain(self, chain: tuple[int, ...], axis: np.ndarray, angle: np.ndarray | float) -> BodyPose:
        """Spread a bend of ``angle`` (radians, scalar or [F]) about ``axis`` evenly over ``chain``
        (a spine of 1–4 bones, a neck; tied segments left out, :func:`untied`): the chain's total turn is
        ``angle``."""
        chain = untied(self.rig, chain)
        if not chain:
            return self
        angle = np.broadcast_to(np.asarray(angle, dtype=np.float64), (self.frames,))
        for b in chain:
            self.rotate(b, axis, angle / len(chain))
        return self

    def wave_chain(
        self, chain: tuple[int, ...], axis: np.ndarray, amplitude: float | np.ndarray, phase: np.ndarray, lag: float = 2.0
    ) -> BodyPose:
        """A wave travelling root → tip along ``chain`` (a tail of 1–8 bones): bone k of n turns
        ``amplitude·w_k·sin(phase − k·lag/n)`` about ``axis``, weights rising towards the tip and summing
        to 1 (radians; ``amplitude`` scalar or [F]; ``phase`` [F]; ``lag`` the phase delay from root to tip)."""
        chain = untied(self.rig, chain)
        if not chain:
            return self
        n = len(chain)
        weights = 1.0 + np.arange(n) / max(n - 1, 1)
        weights /= weights.sum()
        for k, b in enumerate(chain):
            self.rotate(b, axis, amplitude * weights[k] * np.sin(phase - k * lag / n))
        return self

    # ------------------------------------------------------------------ the clip

    def clip(self, facing: float = 0.0, grounded: str = "lowest") -> MotionClip:
        """The clip [F]: every bone's channel quaternion, the body turned by ``facing + yaw`` about
        ``up`` around its rest centre, ``travel`` turned by ``facing``, and the root moved along
        ``up`` so the lowest carried vertex is at ``ground + lift`` every frame (``grounded="lowest"``)
        or only where it would be below that (``"floor"``: the travel's own height otherwise)."""
        if grounded not in ("lowest", "floor"):
            raise ValueError(f"grounded must be 'lowest' or 'floor', not {grounded!r}")
        rig, root = self.rig, int(self.roles.root)
        total_yaw = rotvec_matrices((facing + self.yaw)[:, None] * self.up)
        local = self.local.copy()
        local[:, root] = total_yaw @ local[:, root]
        rest = rig.rest_matrices[:, :3, :3]
        channel = np.einsum("jba,fjbc,jcd->fjad", rest, local, rest)  # R_restᵀ · G · R_rest
        rotations = matrix_to_quat(torch.as_tensor(channel)).numpy()
        # Root travel and the pivot about the rest centre, armature space.
        turn = rotvec_matrices(np.asarray(facing) * self.up)
        head = rig.heads[root]
        centre = rig.vertices[rig.weights.sum(1) > 0].mean(0) if rig.num_vertices else head
        offset = head - centre
        offset = offset - (offset @ self.up) * self.up
        delta = self.travel @ turn.T + (total_yaw @ offset - offset)
        carrier = location_carrier(rig, root)
        axes = location_axes(rig, carrier)
        locations = np.zeros((self.frames, rig.num_bones, 3))
        locations[:, carrier] = delta @ axes  # Lᵀ · delta
        clip = MotionClip(rig.bone_names, self.fps, 1, rotations, locations)
        lowest = lowest_heights(rig, clip, self.up, carrier)
        shift = self.roles.frame.ground + self.lift - lowest
        if grounded == "floor":
            shift = np.clip(shift, 0.0, None)
        if np.any(shift != 0):
            delta = delta + shift[:, None] * self.up
            locations[:, carrier] = delta @ axes
            clip = MotionClip(rig.bone_names, self.fps, 1, rotations, locations)
        return clip.continuous()
