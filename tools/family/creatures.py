"""Drafts of the other kinds: birds with wings, six-legged insects, snakes."""

from __future__ import annotations

import numpy as np

from tools.family.drafts import SIDES, Draft, split_steps

__all__ = ["bird", "hexapod", "serpent"]

# --------------------------------------------------------------------------- bird


def bird(rng: np.random.Generator) -> Draft:
    """A bird of height ~1: pelvis root, spine 1–2, S-shaped neck 2–4, head (optional beak), two
    3-bone wings (spread or drooping), two legs (thigh, shin, tarsus, optional toe), tail 1–3."""
    build = str(rng.choice(["songbird", "heron", "penguin"]))
    leg = {"songbird": 0.3, "heron": 0.55, "penguin": 0.15}[build] * rng.uniform(0.85, 1.15)
    body_r = {"songbird": 0.14, "heron": 0.1, "penguin": 0.17}[build] * rng.uniform(0.85, 1.15)
    d = Draft(build=build, rest_pose=str(rng.choice(["wings_spread", "wings_drooping"])))
    d.proportions = {"leg": leg, "torso_radius": body_r}
    n_spine, n_neck, n_tail = int(rng.integers(1, 3)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
    hip_z = leg + body_r * 0.5
    tilt = np.radians({"penguin": 70.0}.get(build, rng.uniform(10, 35)))
    d.add(
        "pelvis",
        None,
        (0, 0.08, hip_z),
        (0, 0.08 - 0.1 * np.cos(tilt), hip_z + 0.1 * np.sin(tilt)),
        body_r,
        ("pelvis",),
        role="root",
    )
    start = np.array([0, 0.08 - 0.1 * np.cos(tilt), hip_z + 0.1 * np.sin(tilt)])
    total = np.array([0, -np.cos(tilt), np.sin(tilt)]) * body_r * 2.2
    spine = d.chain(
        "spine", "pelvis", start, split_steps(total, n_spine, rng), [body_r * 1.1] * n_spine, ("spine",), role="spine"
    )
    chest = start + total
    neck_len = {"heron": 0.45, "songbird": 0.18, "penguin": 0.1}[build] * rng.uniform(0.85, 1.15)
    steps = split_steps(np.array([0, -neck_len * 0.25, neck_len]), n_neck, rng, bend=-neck_len * 0.15)
    neck = d.chain("neck", spine[-1], chest, steps, [body_r * 0.35] * n_neck, ("neck",), role="neck", group="head")
    head_at = chest + steps.sum(0)
    head_len = body_r * rng.uniform(0.9, 1.3)
    head_tail = head_at + np.array([0, -head_len, head_len * 0.15])
    d.add("head", neck[-1], head_at, head_tail, head_len * 0.42, ("head",), role="head", group="head")
    if rng.random() < 0.6:
        d.add(
            "beak",
            "head",
            head_tail,
            head_tail + [0, -head_len * rng.uniform(0.4, 1.2), -head_len * 0.1],
            head_len * 0.14,
            ("beak",),
            group="extra",
        )
        d.counts["beak"] = 1
    span = body_r * rng.uniform(3.0, 5.0)
    droop = np.radians(rng.uniform(0, 10) if d.rest_pose == "wings_spread" else rng.uniform(25, 50))
    sweep = np.radians(rng.uniform(0, 25))
    for side, sx, word in SIDES:
        shoulder = chest + np.array([sx * body_r * 0.7, body_r * 0.3, -body_r * 0.2])
        direction = np.array([sx * np.cos(droop) * np.cos(sweep), np.sin(sweep), -np.sin(droop)])
        steps = [direction * span * f for f in (0.32, 0.36, 0.32)]
        radii = [body_r * r for r in (0.3, 0.24, 0.18)]
        d.chain(f"wing.{side}", spine[-1], shoulder, steps, radii, ("wing",), side, role=f"wing.{word}", group="wing")
    toes = rng.random() < 0.7
    leg_r = body_r * 0.18
    for side, sx, word in SIDES:
        hip = np.array([sx * body_r * 0.45, 0.02, hip_z])
        knee = hip + np.array([0, -leg * 0.2, -leg * 0.3])
        ankle = knee + np.array([0, leg * 0.25, -leg * 0.38])
        foot = np.array([ankle[0], ankle[1] - leg * 0.08, leg_r])
        role = f"leg.{word}"
        d.add(f"thigh.{side}", "pelvis", hip, knee, leg_r * 1.5, ("thigh",), side, role=role, group="limb")
        d.add(f"shin.{side}", f"thigh.{side}", knee, ankle, leg_r * 1.1, ("shin",), side, role=role, group="limb")
        d.add(f"tarsus.{side}", f"shin.{side}", ankle, foot, leg_r, ("tarsus",), side, role=role, group="limb_end")
        if toes:
            d.add(
                f"toe.{side}",
                f"tarsus.{side}",
                foot,
                foot + [0, -leg * 0.2, 0],
                leg_r * 0.8,
                ("toe",),
                side,
                role=role,
                group="limb_end",
            )
    steps = split_steps(np.array([0, body_r * 2.2, -body_r * 0.3]), n_tail, rng)
    d.chain(
        "tail", "pelvis", (0, 0.08 + body_r * 0.5, hip_z), steps, [body_r * 0.3] * n_tail, ("tail",), role="tail", group="tail"
    )
    d.counts.update(spine=n_spine, neck=n_neck, tail=n_tail, toes=2 * toes, wings=2)
    return d


# --------------------------------------------------------------------------- hexapod


def hexapod(rng: np.random.Generator) -> Draft:
    """A six-legged insect of body length ~1: thorax root, optional prothorax (spine), optional neck,
    head, abdomen 1–4 (as the tail), six legs (optional coxa, femur, tibia, tarsus) front/middle/hind,
    antennae 1–3 bones, optional mandibles."""
    build = str(rng.choice(["beetle", "ant", "stick"]))
    body_r = {"beetle": 0.16, "ant": 0.09, "stick": 0.05}[build] * rng.uniform(0.85, 1.15)
    reach = {"beetle": 0.45, "ant": 0.55, "stick": 0.8}[build] * rng.uniform(0.85, 1.15)
    d = Draft(build=build)
    d.proportions = {"torso_radius": body_r, "leg_reach": reach}
    z = reach * 0.45 + body_r * 0.3
    n_spine, n_neck, n_tail = int(rng.integers(0, 2)), int(rng.integers(0, 2)), int(rng.integers(1, 5))
    d.add("thorax", None, (0, 0.12, z), (0, -0.08, z + 0.01), body_r, ("thorax",), role="root")
    front_parent, at = "thorax", np.array([0, -0.08, z + 0.01])
    if n_spine:
        front_parent = d.add("prothorax", "thorax", at, at + [0, -0.14, 0.01], body_r * 0.8, ("prothorax",), role="spine")
        at = at + [0, -0.14, 0.01]
    head_parent = front_parent
    if n_neck:
        head_parent = d.add("neck", front_parent, at, at + [0, -0.06, 0.02], body_r * 0.4, ("neck",), role="neck", group="head")
        at = at + [0, -0.06, 0.02]
    head_len = body_r * rng.uniform(1.2, 1.8)
    head_tail = at + [0, -head_len, -head_len * 0.1]
    d.add("head", head_parent, at, head_tail, head_len * 0.45, ("head",), role="head", group="head")
    n_ant = int(rng.integers(1, 4))
    for side, sx, _ in SIDES:
        steps = [np.array([sx * 0.3, -1.0, 0.6]) * (reach * 0.5 / n_ant)] * n_ant
        d.chain(
            f"antenna.{side}",
            "head",
            head_tail + [sx * head_len * 0.2, 0, head_len * 0.3],
            steps,
            [body_r * 0.08] * n_ant,
            ("antenna",),
            side,
            group="extra",
        )
        if rng.random() < 0.4:
            d.add(
                f"mandible.{side}",
                "head",
                head_tail + [sx * head_len * 0.2, 0, -head_len * 0.2],
                head_tail + [sx * head_len * 0.05, -head_len * 0.4, -head_len * 0.25],
                body_r * 0.1,
                ("mandible",),
                side,
                group="extra",
            )
    length = {"beetle": 0.7, "ant": 0.55, "stick": 1.2}[build] * rng.uniform(0.85, 1.15)
    steps = split_steps(np.array([0, length, -length * rng.uniform(0.0, 0.3)]), n_tail, rng, bend=rng.uniform(-0.05, 0.05))
    radii = [body_r * (1.3 - 0.5 * i / n_tail) for i in range(n_tail)]
    d.chain("abdomen", "thorax", (0, 0.12, z), steps, radii, ("abdomen",), role="tail", group="tail")
    coxa = rng.random() < 0.5
    leg_r = body_r * rng.uniform(0.18, 0.28)
    for position, parent, y, yaw in (
        ("front", front_parent, -0.12 if n_spine else -0.04, -40.0),
        ("middle", "thorax", 0.0, 0.0),
        ("hind", "thorax", 0.1, 40.0),
    ):
        for side, sx, word in SIDES:
            role = f"leg.{position}.{word}"
            base = np.array([sx * body_r * 0.7, y, z - body_r * 0.3])
            out = np.array([sx * np.cos(np.radians(yaw)), np.sin(np.radians(yaw)), 0.0])
            p, key = parent, f"{position}_leg"
            if coxa:
                p = d.add(
                    f"{key}_coxa.{side}",
                    parent,
                    base,
                    base + out * reach * 0.12 + [0, 0, -0.01],
                    leg_r * 1.2,
                    (position, "coxa"),
                    side,
                    role=role,
                    group="limb",
                )
                base = base + out * reach * 0.12 + [0, 0, -0.01]
            knee = base + out * reach * 0.4 + [0, 0, reach * 0.15]
            foot = np.array([*(base + out * reach * 0.75)[:2], leg_r * 0.8])
            d.add(f"{key}_femur.{side}", p, base, knee, leg_r, (position, "femur"), side, role=role, group="limb")
            d.add(
                f"{key}_tibia.{side}",
                f"{key}_femur.{side}",
                knee,
                foot,
                leg_r * 0.8,
                (position, "tibia"),
                side,
                role=role,
                group="limb",
            )
            d.add(
                f"{key}_tarsus.{side}",
                f"{key}_tibia.{side}",
                foot,
                foot + out * reach * 0.15,
                leg_r * 0.6,
                (position, "tarsus"),
                side,
                role=role,
                group="limb_end",
            )
    d.counts.update(spine=n_spine, neck=n_neck, tail=n_tail, antenna_bones=2 * n_ant, coxae=6 * coxa)
    return d


# --------------------------------------------------------------------------- serpent


def serpent(rng: np.random.Generator) -> Draft:
    """A snake lying in an S-curve along Y (head at -Y): a body root about 60 % of the way from the head,
    spine 4–10 bones forward to a neck of 1–2 and the head (raised for a cobra), tail 3–8 bones backward,
    an optional jaw and tongue."""
    build = str(rng.choice(["viper", "python", "cobra"]))
    radius = {"viper": 0.035, "python": 0.06, "cobra": 0.03}[build] * rng.uniform(0.85, 1.15)
    d = Draft(build=build)
    n_spine, n_neck, n_tail = int(rng.integers(4, 11)), int(rng.integers(1, 3)), int(rng.integers(3, 9))
    wave, amplitude = rng.uniform(0.35, 0.7), rng.uniform(0.03, 0.12)
    d.proportions = {"radius": radius, "wavelength": wave, "amplitude": amplitude}
    phase = rng.uniform(0, 2 * np.pi)

    def at(y: float, rise: float = 0.0) -> np.ndarray:
        return np.array([amplitude * np.sin(2 * np.pi * y / wave + phase), y, radius + rise])

    root_y = 0.1  # the head end is at -0.5, the tail tip at +0.5
    head_len = radius * rng.uniform(2.2, 3.0)
    neck_y = -0.5 + head_len + 0.06
    ys = np.linspace(root_y, neck_y, n_spine + 2)  # root, spine bones, up to the neck
    d.add("body", None, at(ys[0]), at(ys[1]), radius, ("body",), role="root")
    rise = radius * rng.uniform(3.0, 6.0) if build == "cobra" else 0.0
    parent = "body"
    for i in range(n_spine):
        parent = d.add(f"spine.{i + 1}", parent, at(ys[i + 1]), at(ys[i + 2]), radius, ("spine",), "", i + 1, "spine")
    neck_at = at(neck_y)
    neck_end = at(-0.5 + head_len, rise)
    steps = split_steps(neck_end - neck_at, n_neck, rng)
    neck = d.chain("neck", parent, neck_at, steps, [radius * 0.9] * n_neck, ("neck",), role="neck", group="head")
    head_tail = neck_end + np.array([0, -head_len, -rise * 0.1])
    d.add("head", neck[-1], neck_end, head_tail, radius * 1.1, ("head",), role="head", group="head")
    if rng.random() < 0.4:
        d.add(
            "jaw",
            "head",
            neck_end + [0, -head_len * 0.2, -radius * 0.5],
            head_tail + [0, 0, -radius * 0.5],
            radius * 0.5,
            ("jaw",),
            group="extra",
        )
        d.counts["jaw"] = 1
    if rng.random() < 0.3:
        d.add("tongue", "head", head_tail, head_tail + [0, -head_len * 0.6, 0], radius * 0.12, ("tongue",), group="extra")
    tail_ys = np.linspace(root_y, 0.5, n_tail + 1)
    tail_r = [radius * (1 - 0.75 * i / n_tail) for i in range(n_tail)]
    parent = "body"
    for i in range(n_tail):
        parent = d.add(
            f"tail.{i + 1}", parent, at(tail_ys[i]), at(tail_ys[i + 1]), tail_r[i], ("tail",), "", i + 1, "tail", "tail"
        )
    d.counts.update(spine=n_spine, neck=n_neck, tail=n_tail)
    return d
