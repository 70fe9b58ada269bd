"""Ground a MotionClip: a MuJoCo body with a free root tracks it under gravity and ground contact.

Controller (per simulation step, torques written to ``qfrc_applied``):
1. Joint servos: ``kp · (q_ref ⊖ q) + kd · (v_ref − v)`` on every joint dof, with gains from the
   dof's own inertia at the first frame (``kp = ω² I``, ``kd = 2ζω I``), so any scale and mass
   distribution gets the same natural frequency.
2. Feed-forward torques learnt over passes (iterative learning control): pass k+1 adds pass k's
   feedback torques, step by step, so the servos need less error to produce the torque that the
   motion under gravity and contact takes.
3. Residual ("hand of God") forces on the free root only: a torque keeping its orientation on the
   reference (balance) and a weak horizontal pull towards the reference path. Nothing holds the
   root up: its height comes from the legs standing on the ground, so floating and sinking go,
   and feet in contact stick to the ground by friction instead of sliding.
Afterwards the whole result is shifted vertically by one constant so that the skinned mesh (not the
collision proxies) touches the ground over the frames in contact (``match_mesh_contact``).
The reference is interpolated between frames along its finite-difference velocity; simulated body
frames are sampled at every frame and turned back into Blender pose channels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import mujoco
import numpy as np
import torch

from ...character.kinematics import Skeleton
from ...character.rig import RigAsset
from ...errors import AkdError, InputError
from ...progress import Callbacks, eta_seconds
from ..clip import MotionClip
from ..metrics import motion_metrics, tracking_error
from .config import PhysicsConfig
from .convert import bodies_to_clip, clip_to_qpos, qpos_velocities
from .model import PhysicsModel, build_model, mass_diagonal
from .perturb import translate_root

__all__ = ["GroundingResult", "ground_clip", "simulate", "SimulationTrace"]


@dataclass
class GroundingResult:
    """What :func:`ground_clip` returns.

    Attributes:
        clip: the grounded motion (new MotionClip, same bones, fps and frame_start as the input).
        metrics_before: :func:`~akd_blender.core.motion.metrics.motion_metrics` of the input.
        metrics_after: the same for ``clip`` plus :func:`~akd_blender.core.motion.metrics.tracking_error`
            against the input (joint angles in degrees, root position in body heights).
        seconds: wall-clock seconds spent (model build, all passes, metrics).
        passes: per tracking pass: ``joint_error_deg`` (mean simulated-vs-reference joint angle)
            and ``max_speed`` (fastest body point, simulation m/s).
        model: the PhysicsModel used.
    """

    clip: MotionClip
    metrics_before: dict[str, float]
    metrics_after: dict[str, float]
    seconds: float
    passes: list[dict[str, float]] = field(default_factory=list)
    model: PhysicsModel | None = None


@dataclass
class SimulationTrace:
    """One pass: body frames per frame ([F,B,3,3], [F,B,3], simulation space), the feedback torques
    per step [S,nv], the mean joint tracking error (degrees) and the largest body speed (m/s)."""

    body_rot: np.ndarray
    body_pos: np.ndarray
    feedback: np.ndarray
    joint_error_deg: float
    max_speed: float
    contact: np.ndarray  # bool [F], the body touched the ground at that frame


def _lowest_geom_point(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """Lowest z of every colliding body geom (not the ground) in the current kinematic state."""
    low = np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] == 0 or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        size, pos, mat = model.geom_size[g], data.geom_xpos[g], data.geom_xmat[g].reshape(3, 3)
        kind = model.geom_type[g]
        if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            z = pos[2] - size[0]
        elif kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
            z = pos[2] - abs(mat[2, 2]) * size[1] - size[0]
        elif kind == mujoco.mjtGeom.mjGEOM_MESH:
            mesh = model.geom_dataid[g]
            start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
            z = pos[2] + (model.mesh_vert[start : start + count] @ mat[2]).min()
        else:  # box
            z = pos[2] - np.abs(mat[2]) @ size
        low = min(low, z)
    return float(low)


def simulate(
    pm: PhysicsModel,
    qref: np.ndarray,
    vref: np.ndarray,
    fps: float,
    feedforward: np.ndarray | None = None,
    callbacks: Callbacks | None = None,
    pass_index: int = 0,
    passes: int = 1,
    began: float | None = None,
) -> SimulationTrace:
    """Track ``qref`` [F,nq] / ``vref`` [F,nv] at ``fps`` once; see the module docstring.

    ``callbacks`` hear "physics" progress after each frame (counted over all ``passes``, this is pass
    ``pass_index``; the ETA from ``began``, a ``time.perf_counter()``) and a cancel before each.

    ``feedforward`` [S,nv] torques per step (S = (F-1) · substeps). Raises AkdError if the
    simulation goes unstable (NaN or a body faster than 100 body heights per second).
    """
    cfg, m = pm.config, pm.model
    substeps = max(1, int(np.ceil(1.0 / (fps * cfg.timestep) - 1e-9)))
    dt = 1.0 / (fps * substeps)
    m.opt.timestep = dt
    frames = len(qref)
    steps = (frames - 1) * substeps
    d = mujoco.MjData(m)
    d.qpos[:] = qref[0]
    mujoco.mj_kinematics(m, d)
    d.qpos[2] -= _lowest_geom_point(m, d)  # start standing on the ground
    d.qvel[:] = vref[0]
    d.qvel[2] = 0.0
    mujoco.mj_forward(m, d)
    inertia = mass_diagonal(m, d) + m.dof_armature
    w_joint, w_rot, w_pos = (
        2 * np.pi * f for f in (cfg.joint_frequency, cfg.root_rotation_frequency, cfg.root_position_frequency)
    )
    kp, kd = w_joint**2 * inertia, 2 * cfg.damping_ratio * w_joint * inertia
    kp[0:2], kd[0:2] = w_pos**2 * inertia[0:2], 2 * w_pos * inertia[0:2]
    kp[2], kd[2] = 0.0, 2 * 2 * np.pi * cfg.root_vertical_damping * inertia[2]
    kp[3:6], kd[3:6] = w_rot**2 * inertia[3:6], 2 * w_rot * inertia[3:6]
    m.dof_damping[:] = kd  # the damping acts implicitly (implicitfast integrator): stable at high gains
    feedforward = np.zeros((steps, m.nv)) if feedforward is None else feedforward
    feedback = np.zeros((steps, m.nv))
    nbody = len(pm.body_bones)
    body_rot = np.zeros((frames, nbody, 3, 3))
    body_pos = np.zeros((frames, nbody, 3))
    body_rot[0], body_pos[0] = d.xmat[1:].reshape(-1, 3, 3), d.xpos[1:]
    contact = np.zeros(frames, dtype=bool)
    contact[0] = d.ncon > 0
    err = np.zeros(m.nv)
    target = np.zeros(m.nq)
    joint_err = []
    limit = 100.0 * pm.rig.height * pm.scale
    callbacks = callbacks or Callbacks()
    began = time.perf_counter() if began is None else began
    step = 0
    for f in range(frames - 1):
        callbacks.stop_if_cancelled("physics grounding cancelled")
        for k in range(substeps):
            target[:] = qref[f]
            mujoco.mj_integratePos(m, target, vref[f], k * dt)
            mujoco.mj_differentiatePos(m, err, 1.0, d.qpos, target)
            fb = kp * err + kd * vref[f]  # plus the model's damping −kd·v
            feedback[step] = fb - kd * d.qvel
            d.qfrc_applied[:] = fb + feedforward[step]
            mujoco.mj_step(m, d)
            step += 1
        if not (np.isfinite(d.qpos).all() and np.abs(d.qvel[:3]).max() < limit):
            raise AkdError(f"physics simulation of '{pm.rig.name}' went unstable at frame {f + 1}; try a smaller timestep")
        body_rot[f + 1], body_pos[f + 1] = d.xmat[1:].reshape(-1, 3, 3), d.xpos[1:]
        contact[f + 1] = d.ncon > 0
        joint_err.append(np.abs(err[6:]).mean())
        done, total = pass_index * (frames - 1) + f + 1, passes * (frames - 1)
        eta = eta_seconds(time.perf_counter() - began, done, total)
        callbacks.report("physics", done, total, eta, f"pass {pass_index + 1}")
    speed = np.linalg.norm(np.diff(body_pos, axis=0), axis=-1).max() * fps if frames > 1 else 0.0
    mean_err = float(np.degrees(np.mean(joint_err))) if joint_err else 0.0
    return SimulationTrace(body_rot, body_pos, feedback, mean_err, float(speed), contact)


def mesh_contact_offset(rig: RigAsset, clip: MotionClip, contact: np.ndarray) -> float:
    """Median height (world units) of the mesh's lowest vertex over the frames where the simulated
    body touched the ground: the gap between the collision proxies and the skinned mesh."""
    if not contact.any():
        return 0.0
    skel = Skeleton(rig, dtype=torch.float64)
    with torch.no_grad():
        verts = skel(clip.pose_channels(torch.float64)).numpy()
    lowest = verts[..., 2].min(1) - rig.ground_height
    return float(np.median(lowest[contact]))


def ground_clip(
    rig: RigAsset,
    clip: MotionClip,
    config: PhysicsConfig | None = None,
    callbacks: Callbacks | None = None,
    model: PhysicsModel | None = None,
) -> GroundingResult:
    """Track ``clip`` with a simulated body and return the grounded motion.

    Args:
        rig: the character; clip: its motion (bones in the rig's order, ≥ 2 frames).
        config: PhysicsConfig (defaults documented there).
        callbacks: "physics" progress for each simulated frame, a cancel checked before each
            (:class:`~akd_blender.core.errors.Cancelled`).
        model: a PhysicsModel from :func:`build_model` to reuse (built from ``rig`` otherwise).
    Deterministic: the same inputs give the same output, bit for bit, on one machine.
    """
    start = time.perf_counter()
    config = config or PhysicsConfig()
    if not clip.matches(rig):
        raise InputError(f"the motion's bones do not match armature '{rig.name}'")
    if clip.num_frames < 2:
        raise InputError("physics grounding needs a motion of at least 2 frames")
    if not (np.isfinite(clip.rotations).all() and np.isfinite(clip.locations).all()):
        raise InputError("the motion has NaN or infinite values")
    pm = model or build_model(rig, config)
    qref = clip_to_qpos(pm, clip)
    vref = qpos_velocities(pm.model, qref, clip.fps)
    feedforward = None
    passes = []
    total = max(1, config.iterations)
    trace = None
    for i in range(total):
        trace = simulate(pm, qref, vref, clip.fps, feedforward, callbacks, i, total, start)
        passes.append({"joint_error_deg": trace.joint_error_deg, "max_speed": trace.max_speed})
        if i + 1 < total:
            learnt = config.learning_rate * trace.feedback
            learnt[:, 0:3] = 0.0  # never learn a root force: height and travel stay physical
            feedforward = learnt if feedforward is None else feedforward + learnt
    out = bodies_to_clip(pm, clip, trace.body_rot, trace.body_pos)
    if config.match_mesh_contact:
        offset = mesh_contact_offset(rig, out, trace.contact)
        out = translate_root(rig, out, np.tile([0.0, 0.0, -offset], (out.num_frames, 1)))
    before = motion_metrics(rig, clip)
    after = {**motion_metrics(rig, out), **tracking_error(rig, clip, out)}
    return GroundingResult(out, before, after, time.perf_counter() - start, passes, pm)
