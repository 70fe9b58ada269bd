"""Body tracks: a clip of any rig as the paths of its role keypoints in its own body frame.

What a motion judge reads instead of pixels, so bodies, meshes, colours, textures and units do not
matter. Per frame (all lengths in character heights):

- the root's displacement since the first frame, in the first frame's posed body axes (left,
  forward, up);
- the root's height above the rest ground;
- the body's yaw since the first frame (sin, cos) and its tilt (the posed up axis's left and
  forward components, in axes turned with the body);
- for each :data:`SLOTS` entry the extremity's position relative to the root (:func:`slot_points`),
  in the body axes turned by the frame's yaw, minus its first-frame value (so a body's proportions
  do not show, its motion does), plus a 1/0 "present" flag.

Limbs without a front/middle/hind position (bipeds' and birds' legs) take the hind slots; a serpent's
limbs (fins) take none.
"""

from __future__ import annotations

import numpy as np
import torch

from ...character.kinematics import Skeleton
from ...character.rig import RigAsset
from ...character.roles import BoneRoles
from ..clip import MotionClip

__all__ = ["SLOTS", "TRACK_CHANNELS", "slot_chains", "slot_points", "body_tracks", "mirror_tracks"]

SLOTS: tuple[str, ...] = (
    "leg.front.left",
    "leg.front.right",
    "leg.middle.left",
    "leg.middle.right",
    "leg.hind.left",
    "leg.hind.right",
    "arm.left",
    "arm.right",
    "wing.left",
    "wing.right",
    "head",
    "tail",
)
ROOT_CHANNELS = 3 + 1 + 2 + 2
TRACK_CHANNELS = ROOT_CHANNELS + 4 * len(SLOTS)
"""Channels per frame of :func:`body_tracks`."""


def slot_chains(roles: BoneRoles) -> dict[str, tuple[int, ...]]:
    """Slot name → its chain of bones, body outwards (absent slots left out). A serpent's limbs (a fish's
    or a shark's fins) take no slot: a serpent is its body, head and tail."""
    out: dict[str, tuple[int, ...]] = {}
    groups = () if roles.kind == "serpent" else (("legs", "leg"), ("arms", "arm"), ("wings", "wing"))
    for group, word in groups:
        for limb in getattr(roles, group):
            position = limb.position or ("hind" if word == "leg" else "")
            name = ".".join(p for p in (word, position, limb.side) if p)
            if name in SLOTS and limb.bones:
                out[name] = tuple(limb.bones)
    if roles.head is not None:
        out["head"] = (*roles.neck, roles.head)
    if roles.tail:
        out["tail"] = tuple(roles.tail)
    return out


def slot_points(rig: RigAsset, roles: BoneRoles) -> dict[str, tuple[int, np.ndarray]]:
    """Slot name → (bone, rest point [3] in armature space): the extremity of the skin the chain's
    outermost weighted bone carries (the mean of its 5 % of vertices farthest from the chain's first
    joint: a sole, a hand, the top of the head, the tail's tip). Skin, not bone tails, because
    imported rigs' end bones point anywhere. Slots whose chain carries no skin are left out."""
    owner = np.where(rig.weights.sum(1) > 0, rig.weights.argmax(1), -1)
    out = {}
    for name, chain in slot_chains(roles).items():
        for b in reversed(chain):
            verts = rig.vertices[owner == b]
            if len(verts):
                far = np.linalg.norm(verts - rig.heads[chain[0]], axis=1)
                keep = far >= np.quantile(far, 0.95)
                out[name] = (int(b), verts[keep].mean(0))
                break
    return out


def body_tracks(rig: RigAsset, roles: BoneRoles, clip: MotionClip) -> np.ndarray:
    """float32 [F, TRACK_CHANNELS]: the clip's body tracks (see the module docstring)."""
    skeleton = Skeleton(rig)
    with torch.no_grad():
        pose = skeleton.pose_matrices(*clip.pose_channels(torch.float64)).numpy()  # [F,J,4,4] armature space
    frame = roles.frame
    axes = np.stack([frame.left, frame.forward, frame.up])  # rows: armature → body components
    height = frame.height
    root = pose[:, roles.root]
    rest_rot = rig.rest_matrices[roles.root, :3, :3]
    turn = root[:, :3, :3] @ rest_rot.T  # the root's rotation from rest, armature space
    fwd = (turn @ frame.forward) @ axes.T  # posed forward in body components [F,3]
    up = (turn @ frame.up) @ axes.T
    yaw = np.unwrap(np.arctan2(-fwd[:, 0], fwd[:, 1]))  # 0 = facing the rest forward, positive = turned left
    origin = root[:, :3, 3] @ axes.T  # body components

    def unturn(v: np.ndarray, angle: np.ndarray) -> np.ndarray:
        """Body-component vectors [F,3] turned by -angle [F] about up."""
        c, s = np.cos(angle), np.sin(angle)
        return np.stack([c * v[:, 0] + s * v[:, 1], -s * v[:, 0] + c * v[:, 1], v[:, 2]], 1)

    turned = yaw - yaw[0]
    channels = [
        unturn(origin - origin[:1], np.full(len(yaw), yaw[0])) / height,
        ((origin[:, 2] - frame.ground) / height)[:, None],
        np.stack([np.sin(turned), np.cos(turned)], 1),
        unturn(up, yaw)[:, :2],
    ]
    points = slot_points(rig, roles)
    for name in SLOTS:
        if name not in points:
            channels.append(np.zeros((clip.num_frames, 4)))
            continue
        b, rest_point = points[name]
        skin = pose[:, b] @ np.linalg.inv(rig.rest_matrices[b])  # [F,4,4]
        tip = skin[:, :3, :3] @ rest_point + skin[:, :3, 3]
        rel = unturn(tip @ axes.T - origin, yaw) / height
        channels.append(np.concatenate([rel - rel[:1], np.ones((clip.num_frames, 1))], 1))
    return np.concatenate(channels, 1).astype(np.float32)


def mirror_tracks(tracks: torch.Tensor) -> torch.Tensor:
    """Tracks [...,F,C] of the mirror-image motion: left and right slots swapped, lateral components
    and yaw negated."""
    out = tracks.clone()
    out[..., 0] = -tracks[..., 0]  # root's lateral travel
    out[..., 4] = -tracks[..., 4]  # sin(yaw)
    out[..., 6] = -tracks[..., 6]  # lateral tilt
    for i, name in enumerate(SLOTS):
        j = SLOTS.index(name.replace("left", "right")) if "left" in name else SLOTS.index(name.replace("right", "left"))
        src = ROOT_CHANNELS + 4 * j
        dst = ROOT_CHANNELS + 4 * i
        out[..., dst : dst + 4] = tracks[..., src : src + 4]
        out[..., dst] = -tracks[..., src]
    return out
