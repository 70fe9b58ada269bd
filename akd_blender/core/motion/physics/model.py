"""A MuJoCo model of a RigAsset, built in code with ``mujoco.MjSpec``.

1. Bodies: one per deform bone that dominates at least ``min_bone_vertices`` vertices (argmax of the
   skin weights); other bones below the root merge into their nearest body ancestor. The root body
   is the lowest common ancestor of the bodies and gets a free joint; bones above it follow the input.
   Weighted bones beside that hierarchy (another root's tree, as the IK target bones a glTF rig's
   hooves hang from) get bodies jointed to the body nearest them at rest.
2. Frames: a body's frame is its bone's rest frame (origin at the head, Y along the bone), in the
   *simulation space*: world space (armature → world, rotation part only for orientations), shifted
   so the ground (``rig.ground_height``) is z = 0 and scaled by ``scale`` to the simulated height.
3. Joints: ball at the bone head; a hinge about the one local axis the rig's rotation locks leave
   free; none where all three are locked (merged). Limits from ``rig.rotation_limits``.
4. Geoms: a capsule (or a box for flat parts) fitted along the principal axes of the vertices each
   body owns, masses from their volumes at ``density``; collide with the ground plane only. Feet
   (``metrics.detect_feet``) touch the ground with the convex hull of their vertices instead
   (``foot_hulls``), so the skinned sole, not a rounder proxy, is what stands on the ground.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from ...character.kinematics import ancestors_mask, nearest_body_bone
from ...character.rig import RigAsset
from ...character.rotations import nearest_rotation
from ...errors import InputError
from ..metrics import detect_feet, dominant_bones
from .config import PhysicsConfig

__all__ = ["PhysicsModel", "build_model"]

BODY_GROUP, GROUND_GROUP = 2, 1  # contype/conaffinity bits: bodies touch the ground, not each other


@dataclass(eq=False)
class PhysicsModel:
    """A compiled MuJoCo model of one rig plus the maps between the rig and the simulation.

    Attributes:
        rig, config: what it was built from.
        spec: the ``mujoco.MjSpec``; model: the compiled ``mujoco.MjModel``.
        scale: simulation metres per world unit.
        rotation: float [3,3], rotation part of the armature → world matrix (polar decomposition).
        body_bones: int [B], the bone of MuJoCo body ``i + 1`` (body 0 is the world).
        bone_body: int [J], body index (into ``body_bones``) that carries each bone, -1 for bones
            above the root body (they keep their input channels).
        rest_rotations: float [B,3,3], rest_positions [B,3]: bodies' rest frames in simulation space.
        rel_rotations: float [B,3,3], each body's rest orientation in its parent body's frame.
        hinge_axes: float [B,3], the local hinge axis, zero for ball joints (and the root).
    """

    rig: RigAsset
    config: PhysicsConfig
    spec: mujoco.MjSpec
    model: mujoco.MjModel
    scale: float
    rotation: np.ndarray
    body_bones: np.ndarray
    bone_body: np.ndarray
    body_parents: np.ndarray
    rest_rotations: np.ndarray
    rest_positions: np.ndarray
    rel_rotations: np.ndarray
    hinge_axes: np.ndarray

    @property
    def root_bone(self) -> int:
        return int(self.body_bones[0])

    @property
    def total_mass(self) -> float:
        return float(self.model.body_mass.sum())

    def to_sim(self, points: np.ndarray) -> np.ndarray:
        """Armature-space points [...,3] → simulation space."""
        world = points @ self.rig.armature_world[:3, :3].T + self.rig.armature_world[:3, 3]
        return (world - np.array([0.0, 0.0, self.rig.ground_height])) * self.scale

    def from_sim(self, points: np.ndarray) -> np.ndarray:
        """Simulation-space points [...,3] → armature space."""
        world = points / self.scale + np.array([0.0, 0.0, self.rig.ground_height])
        inv = np.linalg.inv(self.rig.armature_world)
        return world @ inv[:3, :3].T + inv[:3, 3]


def simulation_scale(rig: RigAsset, config: PhysicsConfig) -> float:
    """Simulation metres per world unit (see ``PhysicsConfig.height``)."""
    if rig.height <= 0:
        raise InputError(f"armature '{rig.name}': the mesh has no height, cannot build a physics model")
    if config.height is not None:
        return config.height / rig.height
    metres = rig.height * rig.unit_scale
    return rig.unit_scale if 0.3 <= metres <= 3.0 else 1.0 / rig.height


def plan_bodies(rig: RigAsset, min_vertices: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which bones get bodies. Returns ``body_bones`` [B] (depth first from the root, as MuJoCo numbers them),
    ``bone_body`` [J] (-1 for bones above the root and unweighted bones beside its hierarchy) and
    ``body_parents`` [B] (-1 for the root)."""
    owner = dominant_bones(rig)
    counts = np.bincount(owner[owner >= 0], minlength=rig.num_bones)
    candidate = rig.use_deform & (counts >= min_vertices) & ~rig.rotation_locks.all(1)
    if not candidate.any():
        candidate = counts == counts.max()
    chains = []
    for b in np.flatnonzero(candidate):
        chain, c = [], int(b)
        while c >= 0:
            chain.append(c)
            c = int(rig.parents[c])
        chains.append(chain[::-1])
    root = chains[0][0]
    for depth in range(min(len(c) for c in chains)):
        if len({c[depth] for c in chains}) != 1:
            break
        root = chains[0][depth]
    if len({c[0] for c in chains}) != 1:  # several hierarchies: the one holding the most vertices
        tops = [c[0] for c in chains]
        root = max(set(tops), key=lambda t: sum(counts[c[-1]] for c in chains if c[0] == t))
    candidate[root] = True
    above = ancestors_mask(rig.parents, root)
    bone_body = np.full(rig.num_bones, -1, dtype=np.int64)
    body_bones: list[int] = []
    body_parents: list[int] = []

    def add_body(b: int, parent_body: int) -> None:
        bone_body[b] = len(body_bones)
        body_bones.append(b)
        body_parents.append(parent_body)

    for b in range(rig.num_bones):
        p = int(rig.parents[b])
        if b == root:
            add_body(b, -1)
        elif p >= 0 and bone_body[p] >= 0:
            if candidate[b]:
                add_body(b, int(bone_body[p]))
            else:
                bone_body[b] = bone_body[p]
    # weighted bones beside the root's hierarchy (another root's tree, a sibling under a bone above the
    # root): bodies hung from the body nearest them at rest, their own bones below them as usual
    main = np.array(body_bones, dtype=np.int64)
    for b in range(rig.num_bones):
        p = int(rig.parents[b])
        if bone_body[b] >= 0 or above[b] or counts[b] == 0:
            continue
        carried = p >= 0 and bone_body[p] >= 0
        if carried and not candidate[b]:
            bone_body[b] = bone_body[p]
        elif not rig.rotation_locks[b].all():
            add_body(b, int(bone_body[p]) if carried else int(bone_body[nearest_body_bone(rig, main, b)]))
    # MuJoCo numbers the bodies of a tree depth first: number ours alike
    children: dict[int, list[int]] = {}
    for i, parent in enumerate(body_parents):
        children.setdefault(parent, []).append(i)
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack += children.get(i, [])[::-1]
    renumber = np.empty(len(order), dtype=np.int64)
    renumber[order] = np.arange(len(order))
    bone_body = np.where(bone_body >= 0, renumber[np.maximum(bone_body, 0)], -1)
    parents = np.array([-1 if body_parents[i] < 0 else renumber[body_parents[i]] for i in order], dtype=np.int64)
    return np.array(body_bones, dtype=np.int64)[order], bone_body, parents


def _fit_geom(points: np.ndarray, floor: float) -> dict:
    """A capsule (or a box for flat point sets) around local points [N,3]; MjsGeom attributes."""
    center = points.mean(0)
    _, _, axes = np.linalg.svd(points - center, full_matrices=False)
    if np.linalg.det(axes) < 0:
        axes[2] *= -1
    proj = (points - center) @ axes.T
    lo, hi = proj.min(0), proj.max(0)
    mid = (lo + hi) / 2
    half = np.maximum((hi - lo) / 2, floor)
    center = center + mid @ axes
    if half[1] > 1.8 * half[2] and half[2] < 0.6 * half[0]:  # flat: a box
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, axes.T.ravel())
        return {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": half, "pos": center, "quat": quat}
    radial = np.linalg.norm(proj[:, 1:] - mid[1:], axis=1)
    radius = max(float(radial.max()), floor)
    length = max(half[0] - radius, 0.0)
    if length < floor:
        return {"type": mujoco.mjtGeom.mjGEOM_SPHERE, "size": [max(radius, half[0]), 0, 0], "pos": center}
    ends = np.concatenate([center - length * axes[0], center + length * axes[0]])
    return {"type": mujoco.mjtGeom.mjGEOM_CAPSULE, "size": [radius, 0, 0], "fromto": ends}


def build_model(rig: RigAsset, config: PhysicsConfig | None = None) -> PhysicsModel:
    """Build and compile the MuJoCo model of ``rig`` (see the module docstring)."""
    config = config or PhysicsConfig()
    scale = simulation_scale(rig, config)
    rotation = nearest_rotation(rig.armature_world[:3, :3])
    body_bones, bone_body, body_parents = plan_bodies(rig, config.min_bone_vertices)
    probe = PhysicsModel(rig, config, None, None, scale, rotation, body_bones, bone_body, body_parents, *[None] * 4)
    rest_rot = rotation @ rig.rest_matrices[body_bones, :3, :3]
    rest_pos = probe.to_sim(rig.rest_matrices[body_bones, :3, 3])
    height = rig.height * scale
    floor = 0.005 * height

    spec = mujoco.MjSpec()
    spec.compiler.degree = False  # joint ranges in radians, as the rig stores them
    spec.modelname = "akd_" + "".join(c if c.isalnum() else "_" for c in rig.name)
    spec.option.timestep = config.timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = config.impratio
    spec.option.noslip_iterations = config.noslip_iterations
    spec.worldbody.add_geom(
        name="ground",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0, 0, 1],
        contype=GROUND_GROUP,
        conaffinity=BODY_GROUP,
        friction=[config.friction, 0.005, 0.0001],
    )
    owner = dominant_bones(rig)
    foot_bodies = {int(bone_body[b]) for b in detect_feet(rig).bones if bone_body[b] >= 0}
    verts = probe.to_sim(rig.vertices)
    rel_rot = np.zeros((len(body_bones), 3, 3))
    hinge = np.zeros((len(body_bones), 3))
    bodies = []
    for i, b in enumerate(body_bones):
        p = body_parents[i]
        parent_rot = np.eye(3) if p < 0 else rest_rot[p]
        parent_pos = np.zeros(3) if p < 0 else rest_pos[p]
        rel_rot[i] = parent_rot.T @ rest_rot[i]
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, rel_rot[i].ravel())
        parent = spec.worldbody if p < 0 else bodies[p]
        body = parent.add_body(name=f"b{i}_{rig.bone_names[b]}", pos=parent_rot.T @ (rest_pos[i] - parent_pos), quat=quat)
        bodies.append(body)
        if p < 0:
            body.add_freejoint(name="root")
        else:
            free_axes = np.flatnonzero(~rig.rotation_locks[b])
            limits = rig.rotation_limits[b]
            if len(free_axes) == 1:
                axis = np.eye(3)[free_axes[0]]
                hinge[i] = axis
                joint = body.add_joint(name=f"j{i}", type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis)
                lo, hi = limits[free_axes[0]]
                if np.isfinite(lo) and np.isfinite(hi) and hi > lo:
                    joint.limited, joint.range = mujoco.mjtLimited.mjLIMITED_TRUE, [lo, hi]
            else:
                joint = body.add_joint(name=f"j{i}", type=mujoco.mjtJoint.mjJNT_BALL)
                if np.isfinite(limits[free_axes]).all():
                    cone = float(np.abs(limits[free_axes]).max())
                    if 0 < cone < np.pi:
                        joint.limited, joint.range = mujoco.mjtLimited.mjLIMITED_TRUE, [0, cone]
        mine = np.flatnonzero(np.isin(owner, np.flatnonzero(bone_body == i)))
        if len(mine) >= 3:
            local = (verts[mine] - rest_pos[i]) @ rest_rot[i]
            geom = body.add_geom(name=f"g{i}", density=config.density, contype=BODY_GROUP, conaffinity=GROUND_GROUP)
            for key, value in _fit_geom(local, floor).items():
                setattr(geom, key, value)
            geom.friction = [config.friction, 0.005, 0.0001]
            geom.solref = [config.contact_timeconst, 1.0]
            if config.foot_hulls and i in foot_bodies and len(mine) >= 4:
                # feet touch the ground with the convex hull of their own vertices (exact contact
                # height); the fitted proxy above keeps giving the mass but no longer collides
                geom.contype = geom.conaffinity = 0
                spec.add_mesh(name=f"hull{i}", uservert=local.ravel().tolist())
                hull = body.add_geom(
                    name=f"h{i}",
                    type=mujoco.mjtGeom.mjGEOM_MESH,
                    meshname=f"hull{i}",
                    mass=0.0,
                    contype=BODY_GROUP,
                    conaffinity=GROUND_GROUP,
                )
                hull.friction = [config.friction, 0.005, 0.0001]
                hull.solref = [config.contact_timeconst, 1.0]
        else:  # no mesh of its own (e.g. a root above the pelvis): a small explicit inertia
            mass = config.density * (0.05 * height) ** 3
            body.explicitinertial = True
            body.mass = mass
            body.inertia = [mass * (0.05 * height) ** 2] * 3
    try:
        model = spec.compile()
    except ValueError as exc:
        raise InputError(f"armature '{rig.name}': MuJoCo could not build the physics model: {exc}") from None
    _add_armature(model, config.armature, config.min_joint_inertia * float(model.body_mass.sum()) * height**2)
    return PhysicsModel(
        rig, config, spec, model, scale, rotation, body_bones, bone_body, body_parents, rest_rot, rest_pos, rel_rot, hinge
    )


def _add_armature(model: mujoco.MjModel, fraction: float, floor: float) -> None:
    """Rotor inertia on the joint dofs (not the free root): ``fraction`` of each dof's rest inertia,
    or more where that is below ``floor`` (kg·m²), so that light end bones (paws, toes) get servos
    stiff enough to hold their pose against ground contact while staying stable at the timestep."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    diag = mass_diagonal(model, data)[6:]
    model.dof_armature[6:] = np.maximum(fraction * diag, floor - diag)


def mass_diagonal(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """float [nv], the diagonal of the joint-space inertia matrix at ``data``'s (computed) state."""
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, full)
    return np.diag(full).copy()
