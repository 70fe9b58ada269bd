"""PhysicsConfig: every knob of the MuJoCo model and the tracker, with documented defaults."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PhysicsConfig"]


@dataclass(frozen=True)
class PhysicsConfig:
    """Settings of :func:`build_model` and :func:`ground_clip`. Units are those of the simulation:
    metres of the scale-normalised character (see ``height``), kilograms, seconds.

    Model:
        height: simulated body height in metres. None: a character already 0.3–3 m tall (rig height
            × unit scale) keeps its size, any other (the Fox: 79 units) is scaled to 1 m.
        density: body density for masses from geom volumes, kg/m³ (water, like flesh).
        friction: sliding friction coefficient of body–ground contact (high, so planted feet hold:
            chosen on artists' walks and gallops, docs/benchmarks.md "Ground Action").
        min_bone_vertices: a deform bone dominating fewer vertices (argmax of the weights) is merged
            into its parent's body (no joint of its own; it keeps its input rotation).
        foot_hulls: feet collide through the convex hull of their own vertices (exact sole height)
            rather than their fitted capsule/box, which still gives their mass.
        contact_timeconst: contact softness (MuJoCo solref time constant), s.
        impratio: frictional-to-normal constraint impedance ratio (MuJoCo ``impratio``, elliptic
            friction cones); high values make static friction hold, so planted feet do not creep.
        noslip_iterations: MuJoCo's no-slip solver passes (0 disables it).
        armature: rotor inertia added to every joint dof, as a fraction of that dof's inertia at
            rest (keeps light chains such as tails stable at the timestep).
        min_joint_inertia: every joint dof's inertia (own plus rotor) is at least this fraction of
            total mass × height²; with servo gains proportional to inertia this keeps light end
            bones (paws, toes) from being folded by ground contact.
    Tracking:
        timestep: simulation step, s (rounded down so a whole number of steps fills a frame).
        joint_frequency: natural frequency of the joint PD servos, Hz (kp = (2πf)² · inertia).
        damping_ratio: of the joint servos (kd = 2ζ(2πf) · inertia).
        root_rotation_frequency: residual torque keeping the root's orientation on the reference
            (the only "hand of God" besides the horizontal one), Hz; 0 disables it.
        root_position_frequency: weak horizontal residual force pulling the root towards the
            reference path, Hz; 0 leaves horizontal motion to ground contact alone. Vertical motion
            is never assisted: gravity and contact decide the height.
        root_vertical_damping: a damper (no spring) on the root's vertical velocity, as the
            frequency in Hz of a critically damped 1-dof system of the body's mass; it calms hops
            without holding the body up. 0 disables it.
        iterations: tracking passes; each pass adds the previous pass's feedback torques to the
            feed-forward torques (iterative learning control), so later passes track closer.
        learning_rate: fraction of the feedback added per pass.
        match_mesh_contact: shift the result by one constant height so that the skinned mesh, not
            the capsule/box proxies, touches the ground while the body is in contact.
        seed: reserved for sampling-based trackers; the PD + learning tracker draws no random numbers.
    """

    height: float | None = None
    density: float = 1000.0
    friction: float = 2.5
    min_bone_vertices: int = 4
    foot_hulls: bool = True
    contact_timeconst: float = 0.004
    impratio: float = 10.0
    noslip_iterations: int = 0
    armature: float = 0.1
    min_joint_inertia: float = 0.002
    timestep: float = 0.001
    joint_frequency: float = 15.0
    damping_ratio: float = 1.0
    root_rotation_frequency: float = 2.0
    root_position_frequency: float = 0.0
    root_vertical_damping: float = 1.5
    iterations: int = 1
    learning_rate: float = 1.0
    match_mesh_contact: bool = True
    seed: int = 0
