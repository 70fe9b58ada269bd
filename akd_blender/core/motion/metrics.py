"""Motion quality metrics shared by the report JSON, the benchmark and the panel.

Everything is measured on the skinned mesh (``Skeleton(rig)(clip)``, world space, Z up) against the
ground plane at ``rig.ground_height`` (the mirror sets it to the floor of the rest pose, z = 0 where that is
within 2 % of the height; ``ground=`` overrides it). Lengths are in **body heights** (``h = rig.height``, the rest
pose's world-Z extent), so numbers compare across rigs of any scale (the Fox is 79 units tall, a
human 1.7 m); multiply by ``metrics["height"]`` for Blender units. Times are seconds.

Feet are found generically, for any rig (:func:`detect_feet`): every deform bone whose own vertices
(those it dominates, ``argmax`` of the weights) reach within ``foot_tolerance`` of the ground in the
rest pose is a foot; its vertices in the lower part of the body are its contact candidates. A foot
vertex is *in contact* at a frame when it is within ``contact_tolerance`` of the ground.

Keys of :func:`motion_metrics`:
    foot_skate: mean horizontal speed of foot vertices while in contact (in contact at both ends
        of a frame step), h/s.
    foot_skate_max: the largest per-frame-step mean of that speed, h/s.
    penetration: ∫ depth dt of the lowest vertex below the ground (depth × time), h·s.
    penetration_max: deepest penetration, h.
    floating: ∫ gap dt where the lowest vertex is more than ``contact_tolerance`` above the ground
        (support expected but no contact; gap measured beyond the tolerance), h·s.
    floating_fraction: fraction of frames with no vertex within ``contact_tolerance`` of the ground.
    contact_fraction: fraction of (frame, foot) pairs with the foot in contact.
    start_gap: the lowest vertex's height above the ground at the first frame, h (negative: below).
    root_travel: horizontal distance of the :func:`main_root` bone's head from where it was at the
        first frame, at the last frame, h; root_travel_max: the largest such distance over frames, h.
    root_tilt_max_deg: the largest tilt of the main root bone away from its first frame's
        orientation (the angle its first frame's world-up direction turns through; turns about the
        vertical alone, the facing, do not count), degrees.
    jitter: mean norm of the third time derivative of joint positions, h/s³.
    duration: seconds; height: h in Blender units (world); ground: the ground's world Z.
:func:`tracking_error` compares a result to its reference (joint angles in degrees, root in h).
:func:`motion_warnings` turns the metrics into one line per limit of :class:`MotionThresholds` exceeded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from ..character.kinematics import Skeleton
from ..character.rig import RigAsset
from ..character.rotations import quat_multiply
from .clip import MotionClip

__all__ = [
    "Feet",
    "MotionThresholds",
    "detect_feet",
    "main_root",
    "motion_curves",
    "motion_leaves_ground",
    "motion_metrics",
    "motion_thresholds",
    "motion_travels",
    "motion_warnings",
    "tracking_error",
]

CONTACT_TOLERANCE = 0.01  # h: a vertex this close to the ground is in contact (1.7 cm on a human)
FOOT_TOLERANCE = 0.02  # h: a bone whose rest vertices come this close to the ground is a foot
SOLE_HEIGHT = 0.15  # h: a foot's contact candidates are its vertices below this rest height


@dataclass(frozen=True)
class Feet:
    """The rig's feet: ``bones`` [N] bone indices and, per foot, its contact-candidate vertex indices."""

    bones: tuple[int, ...]
    vertices: tuple[np.ndarray, ...]

    @property
    def all_vertices(self) -> np.ndarray:
        return np.concatenate(self.vertices)


def dominant_bones(rig: RigAsset) -> np.ndarray:
    """int64 [V]: the bone with the largest weight at each vertex, -1 for an unweighted vertex."""
    owner = rig.weights.argmax(1).astype(np.int64)
    owner[rig.weights.sum(1) <= 0] = -1
    return owner


def main_root(rig: RigAsset) -> int:
    """The lowest common ancestor of the bones that dominate vertices (the pelvis of most rigs)."""
    owners = np.unique(dominant_bones(rig))
    owners = owners[owners >= 0]
    if len(owners) == 0:
        return int(rig.root_indices[0])

    def chain(b: int) -> list[int]:
        out = []
        while b >= 0:
            out.append(b)
            b = int(rig.parents[b])
        return out[::-1]

    chains = [chain(int(b)) for b in owners]
    lca = chains[0][0]
    for depth in range(min(len(c) for c in chains)):
        if len({c[depth] for c in chains}) != 1:
            break
        lca = chains[0][depth]
    return int(lca)


def detect_feet(rig: RigAsset, foot_tolerance: float = FOOT_TOLERANCE, sole_height: float = SOLE_HEIGHT) -> Feet:
    """Feet of any rig from its rest pose (see the module docstring); tolerances in body heights.

    Falls back to the bone owning the lowest vertex when no bone comes close to the ground.
    """
    z = rig.world_vertices()[:, 2] - rig.ground_height
    h = max(rig.height, 1e-9)
    owner = dominant_bones(rig)
    bones, verts = [], []
    for b in range(rig.num_bones):
        mine = np.flatnonzero(owner == b)
        if len(mine) and z[mine].min() <= foot_tolerance * h:
            bones.append(b)
            verts.append(mine[z[mine] <= max(sole_height * h, z[mine].min() + 1e-9)])
    if not bones:
        lowest = int(np.argmin(np.where(owner >= 0, z, np.inf)))
        b = int(owner[lowest])
        mine = np.flatnonzero(owner == b)
        bones, verts = [b], [mine[z[mine] <= z[mine].min() + sole_height * h]]
    return Feet(tuple(bones), tuple(verts))


def _world_vertices(rig: RigAsset, clip: MotionClip) -> tuple[np.ndarray, np.ndarray]:
    """World vertices [F,V,3] and joint heads [F,J,3] of ``clip`` (float64)."""
    verts, joints, _ = _world_pose(rig, clip)
    return verts, joints


def _world_pose(rig: RigAsset, clip: MotionClip) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World vertices [F,V,3], joint heads [F,J,3] and joint rotations [F,J,3,3] of ``clip`` (float64)."""
    skel = Skeleton(rig, dtype=torch.float64)
    rot, loc = clip.pose_channels(torch.float64)
    with torch.no_grad():
        verts = skel.deform(rot, loc).numpy()
        pose = skel.pose_matrices(rot, loc).numpy()  # [F,J,4,4] armature space
    world = rig.armature_world
    joints = pose[..., :3, 3] @ world[:3, :3].T + world[:3, 3]
    return verts, joints, world[:3, :3] @ pose[..., :3, :3]


def _tilt_degrees(rotations: np.ndarray) -> np.ndarray:
    """[F] angle (degrees) through which the world-up direction of frame 0, carried by the bone
    rotations [F,3,3], turns away from the vertical at each frame."""
    up = np.array([0.0, 0.0, 1.0])
    local_up = rotations[0].T @ up  # the vertical in the bone's own axes at frame 0
    carried = rotations @ local_up  # [F,3]
    return np.degrees(np.arccos(np.clip(carried @ up / np.maximum(np.linalg.norm(carried, axis=-1), 1e-12), -1.0, 1.0)))


def motion_curves(
    rig: RigAsset, clip: MotionClip, contact_tolerance: float = CONTACT_TOLERANCE, feet: Feet | None = None
) -> dict:
    """Per-frame curves behind the metrics (for plots), lengths in body heights.

    Returns a dict: ``time`` [F] s; ``feet`` (bone names); ``foot_height`` [F,N] lowest foot vertex
    above the ground; ``skate`` [F,N] horizontal speed (h/s) of the foot's vertices in contact over
    the step ending at each frame (0 at frame 0 and when none is in contact); ``lowest`` [F] lowest
    vertex of the whole mesh above the ground; ``in_contact`` bool [F,N].
    """
    if not clip.matches(rig):
        raise ValueError(f"motion_metrics: the clip's bones do not match armature '{rig.name}'")
    feet = feet or detect_feet(rig)
    h = max(rig.height, 1e-9)
    verts, _ = _world_vertices(rig, clip)
    z = (verts[..., 2] - rig.ground_height) / h  # [F,V]
    xy = verts[..., :2] / h
    frames = clip.num_frames
    foot_height = np.stack([z[:, v].min(1) for v in feet.vertices], 1)
    skate = np.zeros((frames, len(feet.bones)))
    for n, v in enumerate(feet.vertices):
        touching = z[:, v] <= contact_tolerance  # [F,n]
        both = touching[1:] & touching[:-1]
        speed = np.linalg.norm(np.diff(xy[:, v], axis=0), axis=-1) * clip.fps  # [F-1,n]
        count = both.sum(1)
        skate[1:, n] = np.where(count > 0, (speed * both).sum(1) / np.maximum(count, 1), 0.0)
    return {
        "time": np.arange(frames) / clip.fps,
        "feet": tuple(rig.bone_names[b] for b in feet.bones),
        "foot_height": foot_height,
        "skate": skate,
        "lowest": z.min(1),
        "in_contact": foot_height <= contact_tolerance,
    }


def motion_metrics(
    rig: RigAsset, clip: MotionClip, contact_tolerance: float = CONTACT_TOLERANCE, ground: float | None = None
) -> dict[str, float]:
    """Foot skate, penetration, floating, root travel and tilt, and jitter of ``clip`` on ``rig``
    (keys and units: module docstring); ``ground`` is the ground's world Z (default ``rig.ground_height``)."""
    if not clip.matches(rig):
        raise ValueError(f"motion_metrics: the clip's bones do not match armature '{rig.name}'")
    feet = detect_feet(rig)
    h = max(rig.height, 1e-9)
    ground = float(rig.ground_height if ground is None else ground)
    verts, joints, frames_rot = _world_pose(rig, clip)
    root = main_root(rig)
    travel = np.linalg.norm(joints[:, root, :2] - joints[0, root, :2], axis=-1) / h
    z = (verts[..., 2] - ground) / h
    xy = verts[..., :2] / h
    dt = 1.0 / clip.fps
    cand = feet.all_vertices
    touching = z[:, cand] <= contact_tolerance
    both = touching[1:] & touching[:-1]
    speed = np.linalg.norm(np.diff(xy[:, cand], axis=0), axis=-1) / dt
    per_step = np.where(both.sum(1) > 0, (speed * both).sum(1) / np.maximum(both.sum(1), 1), 0.0)
    lowest = z.min(1)
    depth = np.maximum(-lowest, 0.0)
    gap = np.maximum(lowest - contact_tolerance, 0.0)
    contact = np.stack([(z[:, v] <= contact_tolerance).any(1) for v in feet.vertices], 1)
    jitter = 0.0
    if clip.num_frames >= 4:
        jerk = np.diff(joints / h, n=3, axis=0) / dt**3
        jitter = float(np.linalg.norm(jerk, axis=-1).mean())
    return {
        "foot_skate": float((speed * both).sum() / both.sum()) if both.any() else 0.0,
        "foot_skate_max": float(per_step.max()) if len(per_step) else 0.0,
        "penetration": float(depth.sum() * dt),
        "penetration_max": float(depth.max()),
        "floating": float(gap.sum() * dt),
        "floating_fraction": float((lowest > contact_tolerance).mean()),
        "contact_fraction": float(contact.mean()),
        "start_gap": float(lowest[0]),
        "root_travel": float(travel[-1]),
        "root_travel_max": float(travel.max()),
        "root_tilt_max_deg": float(_tilt_degrees(frames_rot[:, root]).max()),
        "jitter": jitter,
        "duration": float(clip.num_frames * dt),
        "height": float(rig.height),
        "ground": ground,
    }


@dataclass(frozen=True)
class MotionThresholds:
    """Limits past which :func:`motion_warnings` warns; lengths in body heights (h), None = not checked.

    start_gap: the first frame's lowest vertex more than this above the ground (0.02 h: 3 cm on a
        human) — the character starts in the air.
    floating_fraction: more than this fraction of frames with no vertex touching the ground (0.25:
        a motion that keeps a foot down never leaves it; :func:`motion_thresholds` allows more for a
        jump or a run).
    penetration_max: the mesh more than this below the ground at some frame (0.03 h).
    foot_skate: feet in contact sliding faster than this on average (0.5 h/s: 0.8 m/s on a human).
    root_travel: the body's root ending or passing more than this from where it started (0.25 h);
        None for motions that travel (a walk, a run).
    root_tilt_deg: the body's root tipping more than this from its starting orientation (45°).
    """

    start_gap: float | None = 0.02
    floating_fraction: float | None = 0.25
    penetration_max: float | None = 0.03
    foot_skate: float | None = 0.5
    root_travel: float | None = 0.25
    root_tilt_deg: float | None = 45.0


_TRAVELLING = ("walk", "run", "trot", "gallop", "jog", "amble", "stride", "crawl", "fall")
_AIRBORNE = ("jump", "run", "hop", "leap", "gallop")
_TIPPING = ("sit", "bow", "lie", "roll", "jump", "fall", "crawl")


def motion_travels(motion: str | None) -> bool:
    """Whether a motion label (e.g. the teacher's ``"biped/walk"``) names a motion that travels (walk,
    run, trot, gallop …); False for None or an unknown label."""
    return any(word in (motion or "").lower() for word in _TRAVELLING)


def motion_leaves_ground(motion: str | None) -> bool:
    """Whether a motion label names a motion with frames in the air (jump, run, hop, leap, gallop);
    False for None or an unknown label."""
    return any(word in (motion or "").lower() for word in _AIRBORNE)


def motion_thresholds(motion: str | None = None) -> MotionThresholds:
    """Default :class:`MotionThresholds` for a motion label (e.g. the teacher's ``"walk"``, ``"sit"``;
    None or unknown: the defaults): travelling motions may travel (no root-travel limit), airborne ones
    may float up to 80 % of the frames, tipping ones (sit, bow, jump) may tip up to 100°."""
    label = (motion or "").lower()
    limits = MotionThresholds()
    if motion_travels(label):
        limits = replace(limits, root_travel=None)
    if motion_leaves_ground(label):
        limits = replace(limits, floating_fraction=0.8)
    if any(word in label for word in _TIPPING):
        limits = replace(limits, root_tilt_deg=100.0)
    return limits


def motion_warnings(metrics: dict[str, float], thresholds: MotionThresholds | None = None) -> list[str]:
    """One line per limit of ``thresholds`` (default :class:`MotionThresholds`) that ``metrics`` (from
    :func:`motion_metrics`) exceed, each naming the figure, its value and the limit, in body heights
    and in Blender units; an empty list when the motion is within every limit."""
    limits = thresholds or MotionThresholds()
    h = float(metrics.get("height", 1.0))

    def length(value: float) -> str:
        return f"{value:.3g} heights ({value * h:.3g} units)"

    checks = (
        ("start_gap", limits.start_gap, lambda v: f"the character starts {length(v)} above the ground"),
        ("floating_fraction", limits.floating_fraction, lambda v: f"no part touches the ground in {v:.0%} of the frames"),
        ("penetration_max", limits.penetration_max, lambda v: f"the mesh sinks {length(v)} into the ground"),
        ("foot_skate", limits.foot_skate, lambda v: f"feet on the ground slide at {length(v)} per second"),
        ("root_travel_max", limits.root_travel, lambda v: f"the body drifts {length(v)} from where it started"),
        ("root_tilt_max_deg", limits.root_tilt_deg, lambda v: f"the body tips {v:.0f}° from its starting orientation"),
    )
    out = []
    for key, limit, describe in checks:
        value = metrics.get(key)
        if limit is not None and value is not None and value > limit:
            unit = {"floating_fraction": "", "root_tilt_max_deg": "°", "foot_skate": " heights/s"}.get(key, " heights")
            shown = f"{limit:.0%}" if key == "floating_fraction" else f"{limit:g}{unit}"
            out.append(f"{describe(float(value))} (limit {shown})")
    return out


def tracking_error(rig: RigAsset, reference: MotionClip, clip: MotionClip) -> dict[str, float]:
    """How far ``clip`` is from ``reference`` (same rig, same frame count).

    Returns ``joint_angle_error_deg`` / ``joint_angle_error_max_deg`` (geodesic angle between the
    two clips' pose-bone rotations, mean / max over frames and bones that can rotate, degrees),
    ``root_position_error`` / ``root_position_error_max`` (world distance of the :func:`main_root`
    bone's head, h) and ``root_height_error`` (mean absolute vertical difference of that head, h).
    """
    if reference.num_frames != clip.num_frames or not (reference.matches(rig) and clip.matches(rig)):
        raise ValueError("tracking_error: the clips must match the rig and each other in length")
    free = ~rig.rotation_locks.all(1)
    a = torch.as_tensor(reference.rotations[:, free], dtype=torch.float64)
    b = torch.as_tensor(clip.rotations[:, free], dtype=torch.float64)
    a = a / a.norm(dim=-1, keepdim=True)
    b = b / b.norm(dim=-1, keepdim=True)
    conj = b * torch.tensor([1.0, -1.0, -1.0, -1.0], dtype=torch.float64)
    rel = quat_multiply(a, conj)
    angle = 2 * torch.atan2(rel[..., 1:].norm(dim=-1), rel[..., 0].abs()).numpy()
    skel = Skeleton(rig, dtype=torch.float64)
    root = main_root(rig)
    with torch.no_grad():
        pa = skel.joint_positions(*reference.pose_channels(torch.float64))[:, root].numpy()
        pb = skel.joint_positions(*clip.pose_channels(torch.float64))[:, root].numpy()
    h = max(rig.height, 1e-9)
    dist = np.linalg.norm(pa - pb, axis=-1) / h
    return {
        "joint_angle_error_deg": float(np.degrees(angle).mean()),
        "joint_angle_error_max_deg": float(np.degrees(angle).max()),
        "root_position_error": float(dist.mean()),
        "root_position_error_max": float(dist.max()),
        "root_height_error": float(np.abs(pa[:, 2] - pb[:, 2]).mean() / h),
    }
