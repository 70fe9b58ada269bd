"""Head motions over bone roles, for every kind with a head or a neck:
``generate(rig, roles, frames, fps, variation) -> MotionClip``.

The turn is shared between the neck (its bones evenly) and the head, so a long-necked bird turns
along its neck and a biped mostly at the head; the body and the legs stay where they stood. Yaw is
about the body's up axis (positive turns to the character's left), pitch about its right axis
(positive lifts the face). Angles in degrees."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .labelled import Variation
from .limbs import rad
from .pose import BodyPose, bump, smoothstep

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = ["look_around", "nod", "shake_head", "turn_head", "window"]

NECK_SHARE = 0.45
"""Share of a head turn made by the neck bones (all of it by the head when there is no neck, all of
it by the neck when there is no head)."""


def turn_head(p: BodyPose, axis: np.ndarray, angle: np.ndarray) -> None:
    """Turn the head by ``angle`` (radians [F]) about ``axis`` ([3], armature space): the neck takes
    :data:`NECK_SHARE` of it, the head the rest."""
    neck, head = p.roles.neck, p.roles.head
    if head is not None and head == p.roles.root:  # a body rigged from its head back: turned back behind the head
        p.rotate(head, axis, angle)
        behind = [b for b in (*p.roles.spine[:1], *p.roles.tail[:1]) if p.rig.parents[b] == head][:1]
        for b in behind:
            p.rotate(b, axis, -angle)
            p.hold_place(p.head_position(b) - p.rig.heads[b])  # and kept where it lay
        return
    share = NECK_SHARE if neck and head is not None else (1.0 if neck else 0.0)
    p.bend_chain(neck, axis, share * angle)
    if head is not None:
        p.rotate(head, axis, (1.0 - share) * angle)


def window(p: BodyPose, v: Variation, start: float = 0.08, length: float = 0.8) -> np.ndarray:
    """Progress [F] through the motion: 0 before ``start`` (shifted up to 0.1 by the phase), 1 after
    ``length / speed`` of the clip (the window kept inside the clip's first 92 %), linear between."""
    begin = start + 0.1 * v.phase
    span = min(length / v.speed, 0.92 - begin)
    return np.clip((p.t - begin) / span, 0.0, 1.0)


def look_around(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Look to one side, then to the other, then ahead again: the head (and neck) yaws 60° (×
    amplitude) to the left, holds, swings across to 60° right, holds and comes back (``direction``
    −1 looks right first); a biped's chest turns 10° with it. The feet stay planted."""
    p = BodyPose(rig, roles, frames, fps)
    u = window(p, v)
    yaw = v.direction * rad(60) * min(v.amplitude, 1.15) * (bump(u, 0.0, 0.5, 0.18) - bump(u, 0.5, 1.0, 0.18))
    if roles.kind == "biped" and roles.spine:
        p.bend_chain(roles.spine, p.up, yaw / 6)
        yaw = yaw * 5 / 6
    turn_head(p, p.up, yaw)
    return p.clip(v.facing)


def nod(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Nod twice: the head (and neck) pitches 25° (× amplitude) face-down and back up, two times in a
    row; the body stays where it stands."""
    p = BodyPose(rig, roles, frames, fps)
    u = window(p, v, 0.1, 0.75)
    dip = 0.5 * (1.0 - np.cos(2 * np.pi * 2.0 * u))
    turn_head(p, p.right, -rad(25) * min(v.amplitude, 1.15) * dip)
    return p.clip(v.facing)


def shake_head(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Shake the head "no": it yaws side to side 3 times, ±30° (× amplitude), starting to the left
    (``direction`` −1: to the right), easing in and out; the body stays where it stands."""
    p = BodyPose(rig, roles, frames, fps)
    u = window(p, v, 0.06, 0.85)
    envelope = smoothstep(u / 0.12) * smoothstep((1.0 - u) / 0.12)
    yaw = v.direction * rad(30) * min(v.amplitude, 1.15) * np.sin(2 * np.pi * 3.0 * u) * envelope
    turn_head(p, p.up, yaw)
    return p.clip(v.facing)
