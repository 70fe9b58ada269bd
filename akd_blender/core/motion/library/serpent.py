"""Legless long-bodied (serpent) motions over bone roles: ``generate(rig, roles, frames, fps, variation) ->
MotionClip``. Snakes, eels, sharks and other fish whose roles are a trunk (root, spine, neck, head) and a tail.

The body is bent by a curvature along its length (radians per body length; positive curls the body
towards its left seen from the head): each trunk bone turns about the body's up axis by the curvature
at its head times its share of the length, so a sinusoidal curvature travelling from head to tail is a
serpenoid slither or swim. Bones of the root-to-head chain bend the part in front of them, tail bones
the part behind, so the two halves take opposite signs for the same curvature. Angles in degrees."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...character.rig import RigAsset
from ..clip import MotionClip
from .labelled import Variation
from .limbs import rad
from .pose import BodyPose, bump, rotvec_matrices, smoothstep, untied

if TYPE_CHECKING:
    from ...character.roles import BoneRoles

__all__ = ["slither", "dash", "turn", "rear_up"]


def _trunk(p: BodyPose) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The bending bones: indices [B], signs [B] (−1 on the root-to-head chain, +1 on the tail), places
    [B] of their heads along the body (0 at the front end, 1 at the tail tip) and length shares [B]
    (summing to 1 over the body's length)."""
    rig, roles = p.rig, p.roles
    front = untied(rig, (*roles.spine, *roles.neck))
    away = rig.heads[roles.root]  # a tail bone pointing back towards the root would turn about its far end: kept rigid
    back = tuple(b for b in untied(rig, roles.tail) if np.linalg.norm(rig.tails[b] - away) >= np.linalg.norm(rig.heads[b] - away))
    bones = np.array([*front, *back], dtype=np.int64)
    signs = np.array([-1.0] * len(front) + [1.0] * len(back))
    ends = [rig.heads[b] for b in bones] + [rig.tails[b] for b in bones] + [rig.heads[roles.root]]
    along = np.array(ends) @ p.forward
    length = max(float(np.ptp(along)), 1e-9)
    places = (along.max() - rig.heads[bones] @ p.forward) / length
    shares = np.linalg.norm(rig.tails[bones] - rig.heads[bones], axis=1) / length
    return bones, signs, np.clip(places, 0.0, 1.0), shares


def _curl(p: BodyPose, curvature) -> None:
    """Bend the trunk by ``curvature(places [B]) -> [F,B]`` (radians per body length) about the body's up
    axis; the whole body turns back by its mean heading change (length-weighted), so a body rigged from
    one end keeps heading where it faced instead of swinging about that end."""
    bones, signs, places, shares = _trunk(p)
    if not len(bones):
        return
    bend = curvature(places) * shares[None] * signs[None]  # [F,B]
    for k, b in enumerate(bones):
        p.rotate(int(b), p.up, bend[:, k])
    front = signs < 0  # each chain's bones in order from the root: a segment turns by the bends up to it
    heading = np.concatenate([np.cumsum(bend[:, front], axis=1), np.cumsum(bend[:, ~front], axis=1)], axis=1)
    yaw = -heading @ np.concatenate([shares[front], shares[~front]])
    p.yaw = p.yaw + yaw
    # and slides back by its centre's sideways and lengthways shift, so the body's centre keeps its path
    rig = p.rig
    mass = rig.weights[:, bones].sum(0) if rig.num_vertices else shares  # the skin each bone carries
    weights = mass / mass.sum() if mass.sum() > 0 else shares / shares.sum()
    posed = sum(
        w * (p.head_position(int(b)) + 0.5 * p.posed(int(b)) @ (rig.tails[b] - rig.heads[b])) for b, w in zip(bones, weights)
    )
    rest = sum(w * 0.5 * (rig.heads[b] + rig.tails[b]) for b, w in zip(bones, weights))
    turns = rotvec_matrices(p.yaw[:, None] * p.up)  # the whole body's turn about its centre, applied by the clip
    p.hold_place(np.einsum("fij,fj->fi", turns, posed - rest))


def _travelling_wave(p: BodyPose, v: Variation, cycles: float, waves: float, swing: float, distance: float) -> MotionClip:
    """``cycles`` waves pass from head to tail over the clip, ``waves`` of them along the body at once, the
    heading along the body swinging ``swing``° either way; the body travels ``distance`` body lengths
    forward; the head keeps most of its heading."""
    a = min(v.amplitude, 1.2)
    k = 2 * np.pi * waves
    amplitude = rad(swing) * a * k  # curvature amplitude whose integral swings the heading by ±swing
    ramp = smoothstep(p.t / 0.15)
    phase = 2 * np.pi * (cycles * v.speed * p.t + v.phase)
    _curl(p, lambda s: amplitude * ramp[:, None] * np.sin(phase[:, None] - k * s[None]))
    if p.roles.head is not None and p.roles.head != p.roles.root:
        p.level(p.roles.head, 0.6)
    p.travel = p.travel + np.outer(distance * v.speed * a * p.t * float(p.roles.frame.length), p.forward)
    return p.clip(v.facing)


def slither(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Slither or swim forward: 1.5 waves pass along the body (1.2 on it at once, heading ±45°), 0.4 body
    lengths travelled over the clip."""
    return _travelling_wave(BodyPose(rig, roles, frames, fps), v, cycles=1.5, waves=1.2, swing=45, distance=0.4)


def dash(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Slither or swim fast: 3 waves pass (heading ±50°), 1.1 body lengths travelled over the clip."""
    return _travelling_wave(BodyPose(rig, roles, frames, fps), v, cycles=3.0, waves=1.0, swing=50, distance=1.1)


def turn(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Turn around in place by ``160°·amplitude`` (left for direction +1): the body curls into a C towards
    the turn (up to 120° per body length) while it comes round, then straightens; the head leads."""
    p = BodyPose(rig, roles, frames, fps)
    a = v.amplitude
    span = 0.85 / v.speed
    p.yaw = v.direction * rad(160) * a * smoothstep((p.t - 0.05) / span)
    curl = v.direction * rad(120) * min(a, 1.2) * bump(p.t, 0.05, 0.05 + span, 0.3 * span)
    _curl(p, lambda s: np.repeat(curl[:, None], len(s), axis=1))
    return p.clip(v.facing)


def rear_up(rig: RigAsset, roles: BoneRoles, frames: int, fps: float, v: Variation) -> MotionClip:
    """Rear up: the front third of the body rises (its bones lift 70° in all), the head kept level, held,
    then lowered back; the rest of the body stays on the ground. A chain rigged from its head back (the
    head is the root) rises by tilting the root up and the rest of the body back down behind the front third."""
    p = BodyPose(rig, roles, frames, fps)
    bones, signs, places, _ = _trunk(p)
    start = 0.05 + 0.1 * v.phase
    span = 0.8 / v.speed
    lift = rad(70) * min(v.amplitude, 1.2) * bump(p.t, start, start + span, 0.3 * span)
    front = [int(b) for b, sign, s in zip(bones, signs, places) if sign < 0 and s < 0.35]
    if roles.head is not None and roles.head == roles.root:
        p.pitch(roles.root, lift)
        for b in [int(b) for b, sign, s in zip(bones, signs, places) if sign > 0 and s >= 0.35][:1]:
            p.pitch(b, -lift)
            p.hold_place(p.head_position(b) - rig.heads[b])  # the body behind the rise stays where it lay
        return p.clip(v.facing)
    if not front and len(bones):
        front = [int(b) for b, sign in zip(bones, signs) if sign < 0][-2:]
    for b in front:
        p.pitch(b, lift / len(front))
    if roles.head is not None:
        p.level(roles.head, 0.8)
    return p.clip(v.facing)
