"""Biped drafts: human, robot, stocky, long-limbed and big-headed builds; T, A and arms-down rest poses."""

from __future__ import annotations

import numpy as np

from tools.family.drafts import SIDES, Draft, add_ears, split_steps, unit

__all__ = ["BIPED_BUILDS", "REST_POSES", "biped"]

BIPED_BUILDS = {  # leg (hip height / height), head, half shoulder width, limb radius, torso radius, arm length
    "human": (0.47, 0.13, 0.12, 0.032, 0.085, 0.38),
    "robot": (0.46, 0.13, 0.14, 0.038, 0.095, 0.38),
    "stocky": (0.38, 0.15, 0.15, 0.050, 0.125, 0.33),
    "long_limbed": (0.55, 0.11, 0.11, 0.025, 0.070, 0.45),
    "big_headed": (0.34, 0.27, 0.12, 0.040, 0.100, 0.30),
}
REST_POSES = {"T": (-4.0, 6.0), "A": (30.0, 50.0), "down": (68.0, 80.0)}  # arm angle below horizontal, degrees


def biped(rng: np.random.Generator) -> Draft:
    """A biped of height ~1 (scaled later): hips root, spine 1–4, neck 0–3, head, arms (optional
    clavicles, hands, fingers), legs (optional toes), optional tail 1–8, ears, jaw."""
    build = str(rng.choice(list(BIPED_BUILDS)))
    leg, head_h, shoulder, limb_r, torso_r, arm = (v * rng.uniform(0.9, 1.1) for v in BIPED_BUILDS[build])
    rest_pose = str(rng.choice(list(REST_POSES)))
    d = Draft(build=build, rest_pose=rest_pose)
    d.proportions = {"leg": leg, "head": head_h, "shoulder": shoulder, "limb_radius": limb_r, "torso_radius": torso_r, "arm": arm}
    n_spine, n_neck = int(rng.integers(1, 5)), int(rng.integers(0, 4))
    n_tail = int(rng.integers(1, 9)) if rng.random() < 0.3 else 0
    ankle, top = 0.045, 1.0
    hip = ankle + leg
    head_base = top - head_h
    neck_len = rng.uniform(0.03, 0.06) if n_neck else 0.0
    neck_base = head_base - neck_len
    lean = rng.uniform(-0.02, 0.02)
    # 1. root (hips): up (most rigs), down or back
    root_dir = str(rng.choice(["up", "up", "up", "down", "back"]))
    root_len = rng.uniform(0.05, 0.09)
    root_tail = {"up": (0, 0, hip + root_len), "down": (0, 0, hip - root_len), "back": (0, root_len, hip)}[root_dir]
    d.add("hips", None, (0, 0, hip), root_tail, torso_r * 1.05, ("hips",), role="root")
    # 2. spine and neck
    spine_start = np.array(root_tail if root_dir == "up" else (0, 0, hip), float)
    spine_total = np.array([0.0, lean, neck_base - spine_start[2]])
    spine_r = [torso_r * (1.0 + 0.15 * i / max(n_spine - 1, 1)) for i in range(n_spine)]
    spine = d.chain(
        "spine",
        "hips",
        spine_start,
        split_steps(spine_total, n_spine, rng, bend=rng.uniform(-0.02, 0.02)),
        spine_r,
        ("spine",),
        role="spine",
    )
    chest, chest_top = spine[-1], spine_start + spine_total
    parent, at = chest, chest_top
    if n_neck:
        neck = d.chain(
            "neck",
            chest,
            at,
            split_steps([0, 0, neck_len], n_neck, rng),
            [limb_r * 1.3] * n_neck,
            ("neck",),
            role="neck",
            group="head",
        )
        parent, at = neck[-1], at + np.array([0, 0, neck_len])
    head_r = head_h * rng.uniform(0.38, 0.46)
    head_tail = at + np.array([0, rng.uniform(-0.01, 0.01), head_h - head_r * 0.75])
    d.add("head", parent, at, head_tail, head_r, ("head",), role="head", group="head")
    if rng.random() < 0.35:
        d.add(
            "jaw",
            "head",
            at + [0, -head_r * 0.2, head_r * 0.3],
            at + [0, -head_r * 0.9, head_r * 0.1],
            head_r * 0.35,
            ("jaw",),
            group="extra",
        )
        d.counts["jaw"] = 1
    if rng.random() < 0.25:
        add_ears(d, rng, "head", head_tail, head_r * 0.6, head_h * 0.35, head_r * 0.18)
    # 3. arms
    shoulder_z = neck_base - 0.025
    sw = max(shoulder, torso_r + limb_r * 1.6)
    lo, hi = REST_POSES[rest_pose]
    down = np.radians(rng.uniform(lo, hi))
    elbow = np.radians(rng.uniform(0, 12))
    clavicles, hands = rng.random() < 0.6, rng.random() < 0.75
    fingers = hands and rng.random() < 0.25
    upper_len, fore_len = arm * 0.47, arm * 0.4
    for side, sx, word in SIDES:
        start, parent = np.array([sx * sw, lean * 0.8, shoulder_z]), chest
        if clavicles:
            parent = d.add(
                f"clavicle.{side}",
                chest,
                (sx * 0.02, lean * 0.8, shoulder_z + 0.01),
                start,
                limb_r * 1.2,
                ("clavicle",),
                side,
                role=f"arm.{word}",
                group="limb",
            )
        direction = np.array([sx * np.cos(down), rng.uniform(-0.05, 0.05), -np.sin(down)])
        fore_dir = unit(direction + np.array([0, -np.sin(elbow), 0]))
        elbow_at = start + direction * upper_len
        d.add(f"upper_arm.{side}", parent, start, elbow_at, limb_r, ("upper", "arm"), side, role=f"arm.{word}", group="limb")
        wrist = elbow_at + fore_dir * fore_len
        d.add(
            f"forearm.{side}",
            f"upper_arm.{side}",
            elbow_at,
            wrist,
            limb_r * 0.88,
            ("forearm",),
            side,
            role=f"arm.{word}",
            group="limb",
        )
        if hands:
            hand_tip = wrist + fore_dir * arm * 0.13
            d.add(
                f"hand.{side}",
                f"forearm.{side}",
                wrist,
                hand_tip,
                limb_r * 0.85,
                ("hand",),
                side,
                role=f"arm.{word}",
                group="limb_end",
            )
            if fingers:
                for f in range(3):
                    spread = np.array([0, (f - 1) * limb_r * 0.7, 0])
                    steps = [fore_dir * arm * 0.045] * 2
                    d.chain(
                        f"finger{f}.{side}",
                        f"hand.{side}",
                        hand_tip + spread,
                        steps,
                        [limb_r * 0.3] * 2,
                        ("finger", str(f + 1)),
                        side,
                        group="extra",
                    )
    d.counts.update(spine=n_spine, neck=n_neck, tail=n_tail, clavicles=2 * clavicles, hands=2 * hands, fingers=6 * fingers)
    # 4. legs
    toes = rng.random() < 0.5
    hip_w = torso_r * rng.uniform(0.5, 0.75)
    knee_z = ankle + (hip - ankle) * 0.52
    foot_len = rng.uniform(0.1, 0.14)
    for side, sx, word in SIDES:
        spread = sx * rng.uniform(0.0, 0.04)
        knee = np.array([sx * hip_w + spread * 0.5, -rng.uniform(0.0, 0.02), knee_z])
        ankle_at = np.array([sx * hip_w + spread, 0.0, ankle])
        d.add(
            f"thigh.{side}", "hips", (sx * hip_w, 0, hip), knee, limb_r * 1.35, ("thigh",), side, role=f"leg.{word}", group="limb"
        )
        d.add(f"shin.{side}", f"thigh.{side}", knee, ankle_at, limb_r * 1.1, ("shin",), side, role=f"leg.{word}", group="limb")
        ball = ankle_at + np.array([0, -foot_len * (0.7 if toes else 1.0), -ankle * 0.6])
        d.add(
            f"foot.{side}", f"shin.{side}", ankle_at, ball, limb_r * 0.95, ("foot",), side, role=f"leg.{word}", group="limb_end"
        )
        if toes:
            d.add(
                f"toe.{side}",
                f"foot.{side}",
                ball,
                ball + [0, -foot_len * 0.35, 0],
                limb_r * 0.8,
                ("toe",),
                side,
                role=f"leg.{word}",
                group="limb_end",
            )
    d.counts["toes"] = 2 * toes
    # 5. tail
    if n_tail:
        length = rng.uniform(0.25, 0.6)
        steps = split_steps(np.array([0, length, -length * rng.uniform(0.2, 0.7)]), n_tail, rng, bend=rng.uniform(-0.05, 0.08))
        radii = [torso_r * 0.45 * (1 - 0.6 * i / n_tail) for i in range(n_tail)]
        d.chain("tail", "hips", (0, torso_r * 0.8, hip - 0.02), steps, radii, ("tail",), role="tail", group="tail")
    return d
