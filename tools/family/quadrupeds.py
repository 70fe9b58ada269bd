"""Quadruped drafts: dog, deer (long legs and neck) and low-and-long builds, tails of 1–8 bones."""

from __future__ import annotations

import numpy as np

from tools.family.drafts import SIDES, Draft, add_ears, split_steps

__all__ = ["QUADRUPED_BUILDS", "quadruped"]

QUADRUPED_BUILDS = {  # leg length, torso radius, neck length, neck angle (deg above horizontal), head length (× body length)
    "dog": (0.85, 0.19, 0.32, 40.0, 0.32),
    "deer": (1.45, 0.15, 0.7, 62.0, 0.3),
    "low_long": (0.35, 0.15, 0.22, 25.0, 0.28),
}


def _leg(
    d: Draft,
    rng,
    key: str,
    parent: str,
    hip: np.ndarray,
    length: float,
    radius: float,
    side: str,
    role: str,
    hind: bool,
    toes: bool,
) -> None:
    """A leg from ``hip`` to the ground (z = 0): upper, lower, foot [, toe]; hind legs zig-zag (hock)."""
    zig = rng.uniform(0.05, 0.2) * length
    knee = hip + np.array([0, -zig if hind else zig * 0.4, -length * 0.42])
    hock = knee + np.array([0, zig * 1.4 if hind else -zig * 0.4, -length * 0.45])
    ground = np.array([hock[0], hock[1] - length * 0.06, radius * 0.6])
    d.add(f"{key}_upper.{side}", parent, hip, knee, radius, (key, "upper"), side, role=role, group="limb")
    d.add(f"{key}_lower.{side}", f"{key}_upper.{side}", knee, hock, radius * 0.8, (key, "lower"), side, role=role, group="limb")
    d.add(
        f"{key}_foot.{side}", f"{key}_lower.{side}", hock, ground, radius * 0.7, (key, "foot"), side, role=role, group="limb_end"
    )
    if toes:
        d.add(
            f"{key}_toe.{side}",
            f"{key}_foot.{side}",
            ground,
            ground + [0, -length * 0.09, 0],
            radius * 0.6,
            (key, "toe"),
            side,
            role=role,
            group="limb_end",
        )


def quadruped(rng: np.random.Generator) -> Draft:
    """A quadruped of body length ~1: pelvis root, spine 1–4, neck 1–3, head, four legs (optional
    scapulae, toes), tail 1–8, optional ears and jaw. Builds: dog, deer (long legs and neck), low and long."""
    build = str(rng.choice(list(QUADRUPED_BUILDS)))
    leg, torso_r, neck_len, neck_angle, head_len = (v * rng.uniform(0.88, 1.12) for v in QUADRUPED_BUILDS[build])
    body = rng.uniform(1.2, 1.6) if build == "low_long" else 1.0
    d = Draft(build=build)
    d.proportions = {"leg": leg, "torso_radius": torso_r, "neck": neck_len, "head": head_len, "body": body}
    n_spine, n_neck, n_tail = int(rng.integers(1, 5)), int(rng.integers(1, 4)), int(rng.integers(1, 9))
    hip_z = leg + torso_r * 0.3
    back, front = body * 0.5, -body * 0.5
    root_dir = str(rng.choice(["forward", "forward", "back", "up"]))
    root_tail = {"forward": (0, back - 0.22 * body, hip_z), "back": (0, back + 0.12, hip_z), "up": (0, back, hip_z + 0.12)}[
        root_dir
    ]
    d.add("pelvis", None, (0, back, hip_z), root_tail, torso_r, ("pelvis",), role="root")
    start = np.array(root_tail if root_dir == "forward" else (0, back, hip_z), float)
    total = np.array([0, front - start[1], rng.uniform(0.0, 0.06)])
    spine = d.chain(
        "spine",
        "pelvis",
        start,
        split_steps(total, n_spine, rng, bend=rng.uniform(0, 0.04)),
        [torso_r * 1.05] * n_spine,
        ("spine",),
        role="spine",
    )
    chest_end = start + total
    a = np.radians(neck_angle)
    neck = d.chain(
        "neck",
        spine[-1],
        chest_end,
        split_steps(np.array([0, -np.cos(a), np.sin(a)]) * neck_len, n_neck, rng),
        [torso_r * 0.5] * n_neck,
        ("neck",),
        role="neck",
        group="head",
    )
    head_at = chest_end + np.array([0, -np.cos(a), np.sin(a)]) * neck_len
    droop = np.radians(rng.uniform(-35, 5))
    head_tail = head_at + np.array([0, -np.cos(droop), np.sin(droop)]) * head_len
    head_r = torso_r * rng.uniform(0.55, 0.75)
    d.add("head", neck[-1], head_at, head_tail, head_r, ("head",), role="head", group="head")
    if rng.random() < 0.35:
        d.add(
            "jaw",
            "head",
            head_at + [0, -head_len * 0.2, -head_r * 0.4],
            head_tail + [0, 0, -head_r * 0.5],
            head_r * 0.4,
            ("jaw",),
            group="extra",
        )
        d.counts["jaw"] = 1
    if rng.random() < 0.6:
        add_ears(
            d,
            rng,
            "head",
            head_at + [0, -head_len * 0.1, head_r * 0.7],
            head_r * 0.55,
            head_len * rng.uniform(0.3, 0.6),
            head_r * 0.25,
        )
    scapulae, toes = rng.random() < 0.4, rng.random() < 0.4
    leg_r = torso_r * rng.uniform(0.3, 0.4)
    for side, sx, word in SIDES:
        shoulder = np.array([sx * torso_r * 0.6, front * 0.85, hip_z])
        parent = spine[-1]
        if scapulae:
            parent = d.add(
                f"scapula.{side}",
                spine[-1],
                shoulder + [0, 0.04, torso_r * 0.7],
                shoulder,
                leg_r,
                ("scapula",),
                side,
                role=f"leg.front.{word}",
                group="limb",
            )
        _leg(d, rng, "front", parent, shoulder, hip_z, leg_r, side, f"leg.front.{word}", False, toes)
        _leg(
            d,
            rng,
            "hind",
            "pelvis",
            np.array([sx * torso_r * 0.6, back * 0.8, hip_z]),
            hip_z,
            leg_r * 1.15,
            side,
            f"leg.hind.{word}",
            True,
            toes,
        )
    length = rng.uniform(0.3, 0.9) * body
    lift = rng.uniform(-0.6, 0.5)
    steps = split_steps(np.array([0, length, length * lift]), n_tail, rng, bend=rng.uniform(-0.08, 0.08))
    radii = [torso_r * 0.35 * (1 - 0.6 * i / n_tail) for i in range(n_tail)]
    d.chain(
        "tail", "pelvis", (0, back + torso_r * 0.6, hip_z + torso_r * 0.3), steps, radii, ("tail",), role="tail", group="tail"
    )
    d.counts.update(spine=n_spine, neck=n_neck, tail=n_tail, scapulae=2 * scapulae, toes=4 * toes)
    return d
