"""Per-frame rotations and paths for the pose search: the bones it searches, the candidate turns of a sweep, turn and tilt measures, the joint choice over frames (Viterbi), sign-continuous rotation vectors, smoothing and the keys that play a per-frame path."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ..character.rig import RigAsset
from ..character.rotations import quat_to_matrix, rotvec_to_quat
from ..motion.clip import interpolation_basis

__all__ = [
    "angle_between",
    "armature_direction",
    "candidate_rotations",
    "continuous_rotvecs",
    "keys_from_frames",
    "mean_facing",
    "searched_bones",
    "smooth_frames",
    "step_height_changes",
    "step_turns",
    "up_tilt",
    "viterbi_path",
]


def searched_bones(rig: RigAsset, min_influence: float = 0.01) -> np.ndarray:
    """Indices of the bones worth searching, parents first: rotatable (not all axes locked) and
    moving at least ``min_influence`` of the skin weight (their own plus their descendants')."""
    mass = rig.weights.sum(0).astype(np.float64)
    for j in range(rig.num_bones - 1, -1, -1):  # parents precede children: accumulate upwards
        if rig.parents[j] >= 0:
            mass[rig.parents[j]] += mass[j]
    share = mass / max(float(rig.weights.sum()), 1e-12)
    free = ~rig.rotation_locks.all(axis=1)
    return np.flatnonzero(free & (share >= min_influence)).astype(np.int64)


def candidate_rotations(angle: float, directions: int = 8, lock: Sequence[bool] = (False, False, False)) -> torch.Tensor:
    """Candidate local rotations [C,4] (wxyz) for one bone: identity first, then ``directions``
    swings by ``angle`` about axes in the bone's local XZ plane, then twists of ±``angle`` about its
    Y axis; components on locked axes are zeroed and duplicates dropped."""
    phi = torch.arange(directions, dtype=torch.float64) * (2 * math.pi / directions)
    swings = torch.stack([torch.cos(phi), torch.zeros_like(phi), torch.sin(phi)], -1)
    twists = torch.tensor([[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]], dtype=torch.float64)
    rotvec = torch.cat([torch.zeros(1, 3, dtype=torch.float64), swings, twists]) * angle
    rotvec = rotvec * (~torch.as_tensor(lock, dtype=torch.bool)).to(rotvec.dtype)
    keep = [0] + [i for i in range(1, rotvec.shape[0]) if not any(torch.allclose(rotvec[i], rotvec[k]) for k in range(i))]
    return rotvec_to_quat(rotvec[keep]).float()


def armature_direction(rig: RigAsset, world_direction: tuple[float, float, float]) -> torch.Tensor:
    """A world direction in the armature's space [3] (unit)."""
    direction = np.linalg.solve(rig.armature_world[:3, :3], np.asarray(world_direction))
    return torch.as_tensor(direction / np.linalg.norm(direction), dtype=torch.float32)


def mean_facing(
    rotations: torch.Tensor, base: torch.Tensor, rest: torch.Tensor, forward: torch.Tensor, up: torch.Tensor
) -> torch.Tensor:
    """The character's mean horizontal facing [3] (armature space, unit): ``forward`` (its facing in
    the base pose; characters face -Y) turned as the root's rotations [F,4] turn it from ``base``
    [F,4] (both relative to the root's rest orientation ``rest`` [3,3])."""
    turn = rest @ quat_to_matrix(rotations) @ quat_to_matrix(base).transpose(-1, -2) @ rest.T  # [F,3,3]
    facing = (turn @ forward).mean(0)
    facing = facing - (facing @ up) * up
    return facing / facing.norm().clamp_min(1e-9)


def angle_between(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Angle (radians) between rotations given as unit quaternions [...,4] (broadcast)."""
    dot = (a * b).sum(-1).abs().clamp(max=1.0)
    return 2 * torch.acos(dot)


def up_tilt(rotations: torch.Tensor, base: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """How far [C,F] root rotations tip the world's up axis relative to the base [F] (radians)."""
    seen = quat_to_matrix(rotations).transpose(-1, -2) @ up  # up in the posed bone's frame
    ref = (quat_to_matrix(base).transpose(-1, -2) @ up)[None]
    return torch.acos((seen * ref).sum(-1).clamp(-1.0, 1.0))


def step_turns(rotations: torch.Tensor) -> torch.Tensor:
    """Squared angles [F-1,C,C] between candidate c at frame f and candidate c' at frame f+1 of
    candidate rotations [C,F,4]."""
    dot = torch.einsum("cfq,dfq->fcd", rotations[:, :-1], rotations[:, 1:]).abs().clamp(max=1.0)
    return (2 * torch.acos(dot)).pow(2)


def step_height_changes(heights: torch.Tensor) -> torch.Tensor:
    """Squared changes [F-1,C,C] between candidate height c at frame f and c' at frame f+1 of heights [C,F]."""
    return (heights[:, None, :-1] - heights[None, :, 1:]).permute(2, 0, 1).pow(2)


def viterbi_path(unary: torch.Tensor, pairwise: torch.Tensor) -> torch.Tensor:
    """Viterbi: the candidate per frame [F] minimising Σ_f unary[c_f, f] + Σ_f pairwise[f, c_f, c_f+1]
    (unary [C,F], pairwise [F-1,C,C]); candidate 0 wins ties."""
    cost = unary[:, 0]
    back = []
    for f in range(1, unary.shape[1]):
        total = cost[:, None] + pairwise[f - 1]  # [C (previous), C (this)]
        cost, arg = total.min(0)
        cost = cost + unary[:, f]
        back.append(arg)
    path = [int(cost.argmin())]
    for arg in reversed(back):
        path.append(int(arg[path[-1]]))
    return torch.tensor(path[::-1], device=unary.device)


def continuous_rotvecs(rotvec: torch.Tensor) -> torch.Tensor:
    """Rotation vectors [F,...,3] with each frame's turned to whichever of its two forms near π
    (``r`` or ``r - 2π r/|r|``, the same rotation) lies closer to the previous frame's, so that
    interpolating them between frames does not swing through the identity."""
    out = rotvec.clone()
    for f in range(1, out.shape[0]):
        r = out[f]
        norm = r.norm(dim=-1, keepdim=True)
        alt = r - 2 * math.pi * r / norm.clamp_min(1e-12)
        closer = (alt - out[f - 1]).norm(dim=-1, keepdim=True) < (r - out[f - 1]).norm(dim=-1, keepdim=True)
        out[f] = torch.where(closer & (norm > 1e-6), alt, r)
    return out


def smooth_frames(values: torch.Tensor, sigma: float, hold_first: bool = False) -> torch.Tensor:
    """``values`` [F,...] smoothed over frames by a Gaussian of ``sigma`` frames (edges held; 0 = as
    is). The search picks each frame's pose from a ring of candidates, so consecutive frames differ by
    the ring's quantisation; unsmoothed, that jitter reads as a shuffled clip rather than a motion.
    ``hold_first``: the first frame keeps its value exactly (the smoothing's change there is taken
    back, fading as the same Gaussian over the next frames), so a root lift anchored at the first
    frame (``SearchConfig.anchor_start``) still starts where the character stood."""
    if sigma <= 0 or values.shape[0] < 2:
        return values
    radius = max(1, math.ceil(3 * sigma))
    kernel = torch.exp(-0.5 * (torch.arange(-radius, radius + 1, dtype=torch.float64) / sigma) ** 2)
    kernel = (kernel / kernel.sum()).to(values.device, values.dtype)
    flat = values.reshape(values.shape[0], -1).T[:, None]  # [N,1,F]
    padded = torch.nn.functional.pad(flat, (radius, radius), mode="replicate")
    smoothed = torch.nn.functional.conv1d(padded, kernel.view(1, 1, -1))[:, 0].T.reshape(values.shape)
    if hold_first:
        frames = torch.arange(values.shape[0], device=values.device, dtype=values.dtype)
        fade = torch.exp(-0.5 * (frames / sigma) ** 2).reshape(-1, *([1] * (values.dim() - 1)))
        smoothed = smoothed - fade * (smoothed[:1] - values[:1])
    return smoothed


def keys_from_frames(values: torch.Tensor, keys: int, interpolation: str = "cubic", smooth: float = 1e-2) -> torch.Tensor:
    """Keys [K,...] whose interpolation (:func:`interpolation_basis`) best reproduces per-frame
    ``values`` [F,...] sampled evenly over the same span (first and last frame on the first and last
    key); a small second-difference penalty ``smooth`` keeps keys between samples calm when K > F."""
    frames = values.shape[0]
    basis = torch.as_tensor(interpolation_basis(frames, keys, interpolation), dtype=torch.float64, device=values.device)
    flat = values.reshape(frames, -1).to(torch.float64)
    diff = torch.diff(torch.eye(keys, dtype=torch.float64, device=values.device), n=2, dim=0)
    lhs = basis.T @ basis + smooth * diff.T @ diff + 1e-9 * torch.eye(keys, dtype=torch.float64, device=values.device)
    solved = torch.linalg.solve(lhs, basis.T @ flat)
    return solved.to(values.dtype).reshape(keys, *values.shape[1:])
