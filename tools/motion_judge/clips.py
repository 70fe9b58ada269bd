"""The motion judge's clips: the role-based motion library played on many family members, 16 frames
over :data:`~akd_blender.core.motion.judge.JUDGE_SECONDS`.

Per member: every library motion of its kind at ``per_motion`` variations (tempo 0.6–1.8 × the
library's, 0.5–2.6 for locomotion; amplitude 0.65–1.35; any facing; locomotion also played on the
spot, as artists' cycles are (half of them); gaits of every kind with the body dipping and rocking
(:func:`body_motion`); 60 % of the quadrupeds' gaits with other footfalls, duty factors, strides and
foot lifts, :func:`gait_variant`), plus "none" clips: the rest pose, low-amplitude motions (15 %) and a
random smooth wiggle of every bone. Shuffled / frozen / reversed negatives are made at training
time (:func:`.augment.corrupt`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from akd_blender.core.character.rotations import quat_multiply, rotvec_to_quat
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.judge import JUDGE_SECONDS
from akd_blender.core.motion.library import LIBRARY, make_role_clip, motions_for, sample_variations
from akd_blender.core.motion.library.labelled import NONE_LABEL
from akd_blender.core.motion.library.limbs import gait
from akd_blender.core.motion.library.pose import location_axes, location_carrier
from akd_blender.core.render import DEFAULT_VIEW
from tools.family import make_member
from tools.family.truth import truth_roles

__all__ = [
    "JUDGE_KINDS",
    "LOCOMOTION",
    "UNJUDGED",
    "BODY_MOTION",
    "judge_labels",
    "JudgeItem",
    "member_items",
    "member_clips",
    "body_motion",
    "gait_variant",
    "remove_travel",
]

JUDGE_KINDS: tuple[str, ...] = tuple(LIBRARY)
"""Kinds with library motions (the judge's kinds)."""

UNJUDGED: dict[str, frozenset[str]] = {"serpent": frozenset({"look_around", "nod", "shake_head"})}
"""Library motions left out of the judge's clips, per kind: a serpent's head motions barely move its body
tracks, so they (and their low-amplitude "none" copies) teach the judge that a small head motion is
nothing in particular, and a quadruped's look around (the Fox's Survey) falls to "none"."""

LOCOMOTION = frozenset({"walk", "run", "gallop", "hop"})
"""Labels also played on the spot (no horizontal root travel)."""


def judge_labels() -> tuple[str, ...]:
    """Every library label once (library order) and ``"none"`` last."""
    labels: list[str] = []
    for specs in LIBRARY.values():
        labels += [s.label for s in specs if s.label not in labels]
    return (*labels, NONE_LABEL)


@dataclass(frozen=True)
class JudgeItem:
    """One clip: member (kind, seed), label (``"none"`` for negatives), the motion played
    (``source``: a library label, ``"rest"`` or ``"wiggle"``), its variation seed, amplitude scale,
    whether travel is removed, and a camera for rendering it (azimuth, elevation in degrees, the share
    of the frame the character fills; drawn with the item so a video judge can render the same items)."""

    kind: str
    seed: int
    label: str
    source: str
    variation_seed: int
    amplitude: float = 1.0
    in_place: bool = False
    azimuth: float = DEFAULT_VIEW[0]
    elevation: float = DEFAULT_VIEW[1]
    fill: float = 0.7


def member_items(kind: str, seed: int, split: str, per_motion: int, negatives: int) -> list[JudgeItem]:
    """The items of one member: ``per_motion`` per library motion and ``negatives`` "none" clips."""
    rng = np.random.default_rng([seed, 7 if split == "train" else 11])
    items = []

    def view() -> tuple[float, float, float]:
        """Azimuth, elevation (degrees) and how much of the frame the character fills."""
        return float(DEFAULT_VIEW[0] + rng.uniform(-40, 40)), float(rng.uniform(6, 26)), float(rng.uniform(0.35, 0.85))

    specs = [s for s in motions_for(kind) if s.label not in UNJUDGED.get(kind, ())]
    for spec in specs:
        for k in range(per_motion):
            in_place = spec.label in LOCOMOTION and rng.random() < 0.5
            items.append(JudgeItem(kind, seed, spec.label, spec.label, seed * 100 + k, 1.0, in_place, *view()))
    labels = [s.label for s in specs]
    for k in range(negatives):
        source = ("rest", "wiggle", "low")[k % 3]
        if source == "low":
            items.append(JudgeItem(kind, seed, NONE_LABEL, str(rng.choice(labels)), seed * 100 + 50 + k, 0.15, False, *view()))
        else:
            items.append(JudgeItem(kind, seed, NONE_LABEL, source, seed * 100 + 50 + k, 1.0, False, *view()))
    return items


def remove_travel(rig, roles, clip: MotionClip) -> MotionClip:
    """``clip`` with the root's horizontal travel removed (vertical bob and turns kept), as artists' cycles
    are played on the spot."""
    carrier = location_carrier(rig, roles.root)
    axes = location_axes(rig, carrier)
    delta = clip.locations[:, carrier] @ axes.T  # armature-space displacement
    up = roles.frame.up
    moved = delta - delta[:1]
    horizontal = moved - (moved @ up)[:, None] * up
    locations = clip.locations.copy()
    locations[:, carrier] = (delta - horizontal) @ axes
    return MotionClip(clip.bone_names, clip.fps, clip.frame_start, clip.rotations, locations)


def _wiggle(rig, frames: int, fps: float, rng: np.random.Generator, facing: float, up: np.ndarray) -> MotionClip:
    """Every bone turning along a random smooth path (≤ ~0.5 rad), the body turned by ``facing``."""
    knots = rng.normal(scale=0.25, size=(4, rig.num_bones, 3))
    t = np.linspace(0, 3, frames)
    rotvec = np.stack([np.interp(t, np.arange(4), knots[:, j, a]) for j in range(rig.num_bones) for a in range(3)], 1)
    quat = rotvec_to_quat(torch.as_tensor(rotvec.reshape(frames, rig.num_bones, 3)))
    root = int(rig.root_indices[0])
    local_up = rig.rest_matrices[root, :3, :3].T @ up
    yaw = rotvec_to_quat(torch.as_tensor(facing * local_up)).expand(frames, 4)
    quat[:, root] = quat_multiply(yaw, quat[:, root])
    return MotionClip(rig.bone_names, fps, 1, quat.numpy(), np.zeros((frames, rig.num_bones, 3))).continuous()


def member_clips(kind: str, seed: int, items: list[JudgeItem], frames: int = 16) -> list[MotionClip]:
    """The clips of one member's items (16 frames over the judge's window)."""
    member = make_member(kind, seed)
    rig, roles = member.rig, truth_roles(member)
    fps = frames / JUDGE_SECONDS
    clips = []
    for it in items:
        rng = np.random.default_rng(it.variation_seed)
        facing = float(rng.uniform(-np.pi, np.pi))
        if it.source == "rest":
            clip = _rest(rig, frames, fps, facing, roles)
        elif it.source == "wiggle":
            clip = _wiggle(rig, frames, fps, rng, facing, roles.frame.up)
        else:
            (v,) = sample_variations(it.source, "train", 1, it.variation_seed)
            slow, fast = (0.5, 2.6) if it.source in LOCOMOTION else (0.6, 1.8)
            v = replace(
                v,
                speed=float(rng.uniform(slow, fast)),
                amplitude=float(rng.uniform(0.65, 1.35)) * it.amplitude,
                facing=facing,
            )
            v = body_motion(it.source, v, rng)
            variant = gait_variant(rig, roles, it.source, frames, fps, v, rng) if rng.random() < 0.6 else None
            clip = variant if variant is not None else make_role_clip(rig, roles, it.source, v, frames, fps)
            if it.in_place:
                clip = remove_travel(rig, roles, clip)
        clips.append(clip)
    return clips


def _offsets(order: dict[tuple[str, str], float]):
    """A gait's phase offsets (cycles) by (position, side)."""
    return lambda roles, limb: order[(limb.position, limb.side)]


BODY_MOTION = {"walk": (0.08, 5.0), "run": (0.2, 12.0), "gallop": (0.25, 16.0)}
"""Gait label → the largest body dip (leg lengths) and rock (degrees) drawn for it."""


def body_motion(label: str, v, rng: np.random.Generator):
    """``v`` with a body dip and rock drawn for a gait label (:data:`BODY_MOTION`; other labels and a
    quarter of the gaits keep the library's level body): artists' runs bob and pitch."""
    bob, rock = BODY_MOTION.get(label, (0.0, 0.0))
    if rng.random() < 0.25:
        return v
    return replace(v, bob=float(rng.uniform(0, bob)), rock=float(rng.uniform(0, rock)), body_phase=float(rng.uniform(0, 1)))


def gait_variant(rig, roles, label: str, frames: int, fps: float, v, rng: np.random.Generator) -> MotionClip | None:
    """A quadruped's walk, run or gallop with its footfall pattern, duty factor, stride, foot path and
    spine flex drawn at random around the library's (real animals and artists vary all of them), or
    None for other labels and bodies (:func:`~akd_blender.core.motion.library.limbs.gait`).

    - Walks: lateral or diagonal sequence (couplets 0.1–0.25 apart), duty 0.55–0.8, feet highest
      0.3–0.7 of the way through the air.
    - Runs: a trot (diagonal pairs within ±0.1) or, for a fifth, a pace (lateral pairs); duty 0.2–0.5,
      feet reaching 24–50°, lifted 0.1–0.6 leg lengths, overreaching up to 0.35 leg lengths in the
      air, highest 0.15–0.85 of the way (front and hind drawn apart), the front sweep up to 0.15 leg
      lengths forward and the hind one as far back.
    - Gallops: each pair's second foot 0–0.25 after (in front: or before) its first, the front pair
      0.3–0.65 of a cycle after the hind one (rotary, transverse; a fifth are bounds); duty 0.15–0.45,
      feet reaching 28–55°, lifted 0.15–0.6 leg lengths, overreaching up to 0.4, highest 0.15–0.85 of
      the way, the front sweep up to 0.25 leg lengths forward and the hind one as far back, the spine
      flexing up to 20°, the body dipping once per stride.

    Runs and gallops lower the hips for at most 80 % of a leg's reach."""
    if roles.kind != "quadruped" or label not in ("walk", "run", "gallop"):
        return None
    u = rng.uniform
    if label == "walk":
        d = u(0.1, 0.25)
        lateral = rng.random() < 0.5
        front = {("front", "left"): 0.5 + d if not lateral else d, ("front", "right"): d if not lateral else 0.5 + d}
        order = {("hind", "left"): 0.0, ("hind", "right"): 0.5, **front}
        return gait(
            rig,
            roles,
            frames,
            fps,
            v,
            cycles=1.5,
            swing=u(14, 30),
            duty=u(0.55, 0.8),
            clearance=u(0.06, 0.25),
            offsets=_offsets(order),
            lift_peak=u(0.3, 0.7),
            front_lift_peak=u(0.3, 0.7),
        )
    if label == "run":
        e = u(-0.1, 0.1, 2)
        if rng.random() < 0.2:  # a pace: lateral pairs
            order = {("front", "left"): 0.0, ("hind", "left"): e[0], ("front", "right"): 0.5, ("hind", "right"): 0.5 + e[1]}
        else:  # a trot: diagonal pairs
            order = {("front", "left"): 0.0, ("hind", "right"): e[0], ("front", "right"): 0.5, ("hind", "left"): 0.5 + e[1]}
        return gait(
            rig,
            roles,
            frames,
            fps,
            v,
            cycles=2.5,
            swing=u(24, 50),
            duty=u(0.2, 0.5),
            clearance=u(0.1, 0.6),
            offsets=_offsets(order),
            tail_lift=u(0, 0.6),
            overreach=u(0, 0.35),
            reach_shift=u(0, 0.15),
            max_reach=0.8,
            lift_peak=u(0.15, 0.85),
            front_lift_peak=u(0.15, 0.85),
        )
    hind_lead = u(0.0, 0.25)
    front_lead = u(-0.25, 0.25)
    if rng.random() < 0.2:  # a bound: each pair together
        hind_lead, front_lead = u(0, 0.05), u(-0.05, 0.05)
    front = u(0.3, 0.65)
    order = {
        ("hind", "left"): 0.0,
        ("hind", "right"): hind_lead,
        ("front", "left"): front,
        ("front", "right"): front + front_lead,
    }
    return gait(
        rig,
        roles,
        frames,
        fps,
        v,
        cycles=2.0,
        swing=u(28, 55),
        duty=u(0.15, 0.45),
        clearance=u(0.15, 0.6),
        offsets=_offsets(order),
        spine_flex=u(0, 20),
        head_bob=u(2, 10),
        tail_lift=u(0, 0.8),
        bob_rate=1.0,
        overreach=u(0, 0.4),
        reach_shift=u(0, 0.25),
        max_reach=0.8,
        lift_peak=u(0.15, 0.85),
        front_lift_peak=u(0.15, 0.85),
    )


def _rest(rig, frames: int, fps: float, facing: float, roles) -> MotionClip:
    """The rest pose turned by ``facing`` about the body's up axis."""
    root = int(rig.root_indices[0])
    local_up = rig.rest_matrices[root, :3, :3].T @ roles.frame.up
    quat = np.zeros((frames, rig.num_bones, 4))
    quat[..., 0] = 1.0
    quat[:, root] = rotvec_to_quat(torch.as_tensor(facing * local_up)).numpy()
    return MotionClip(rig.bone_names, fps, 1, quat, np.zeros((frames, rig.num_bones, 3)))
