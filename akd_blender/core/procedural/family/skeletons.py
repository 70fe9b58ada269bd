"""Seeded skeleton drafts of the family's kinds, in the character frame.

The character frame: metres, Z up, the character faces -Y, its left side is +X, the body roughly
at the origin (the mesh is scaled and set on the ground later). A draft is a list of :class:`Part`
(one per bone, parents before children) plus the counts and proportions that were drawn; each part
carries the words its name is made from (:mod:`.naming`), its colour group (:mod:`.meshes`) and its
true role in the vocabulary of :meth:`akd_blender.core.roles.BoneRoles.role_of` (None for ears,
jaw, fingers, antennae, beaks and non-deforming helpers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Part", "Draft", "DRAFTERS", "draft"]

SIDES = (("L", 1.0, "left"), ("R", -1.0, "right"))


@dataclass
class Part:
    """One bone of a draft.

    key: unique id inside the draft (e.g. ``"thigh.L"``); parent: the parent's key or None.
    head, tail: float64 [3] character-frame positions (metres). radius: mesh radius (metres).
    words: the bone's meaning as words (``("upper", "arm")``), side ``"L"``/``"R"``/``""``, index in its
    chain (1-based, 0 when alone). role: the true role or None. group: colour group (``"torso"``,
    ``"head"``, ``"limb"``, ``"limb_end"``, ``"tail"``, ``"wing"``, ``"extra"``). deform: whether it
    deforms (has mesh and weights).
    """

    key: str
    parent: str | None
    head: np.ndarray
    tail: np.ndarray
    radius: float
    words: tuple[str, ...]
    side: str = ""
    index: int = 0
    role: str | None = None
    group: str = "torso"
    deform: bool = True


@dataclass
class Draft:
    """A drafted skeleton: parts (parents first), what was drawn, and the rest pose name."""

    parts: list[Part] = field(default_factory=list)
    build: str = ""
    rest_pose: str = "-"
    counts: dict[str, int] = field(default_factory=dict)
    proportions: dict[str, float] = field(default_factory=dict)

    def add(self, key, parent, head, tail, radius, words, side="", index=0, role=None, group="torso", deform=True) -> str:
        """Append a part; returns its key."""
        self.parts.append(
            Part(
                key,
                parent,
                np.asarray(head, float),
                np.asarray(tail, float),
                float(radius),
                tuple(words),
                side,
                index,
                role,
                group,
                deform,
            )
        )
        return key

    def chain(self, key, parent, start, steps, radii, words, side="", role=None, group="torso") -> list[str]:
        """Connected bones from ``start`` along the offsets ``steps`` [N,3]; keys ``key.1`` … (or ``key`` for one)."""
        keys, head = [], np.asarray(start, float)
        n = len(steps)
        for i, step in enumerate(steps):
            tail = head + np.asarray(step, float)
            k = f"{key}.{i + 1}" if n > 1 else key
            index = i + 1 if n > 1 else 0
            keys.append(self.add(k, parent, head, tail, radii[i], words, side, index, role, group))
            parent, head = k, tail
        return keys


def _unit(v) -> np.ndarray:
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _split(total: np.ndarray, n: int, rng: np.random.Generator, bend: float = 0.0) -> np.ndarray:
    """``n`` steps [n,3] summing to ``total`` with jittered lengths and a sideways-free bend in the YZ plane."""
    frac = rng.uniform(0.8, 1.2, n)
    frac /= frac.sum()
    steps = frac[:, None] * np.asarray(total, float)[None]
    if bend and n > 1:
        offsets = np.sin(np.linspace(0, np.pi, n + 1)) * bend
        steps[:, 1] += np.diff(offsets)
    return steps


def _ears(d: Draft, rng, head_key: str, head_top: np.ndarray, spread: float, length: float, radius: float) -> None:
    """Two ears of 1–2 bones each from beside ``head_top``, pointing up and out."""
    n = int(rng.integers(1, 3))
    tilt = rng.uniform(-0.2, 0.3)
    for side, sx, _ in SIDES:
        start = head_top + np.array([sx * spread, 0.0, 0.0])
        direction = _unit([sx * 0.45, tilt, 1.0])
        steps = [direction * length / n] * n
        d.chain(f"ear.{side}", head_key, start, steps, [radius * (1 - 0.3 * i) for i in range(n)], ("ear",), side, group="extra")
    d.counts["ears"] = 2 * n


# --------------------------------------------------------------------------- biped

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
        _split(spine_total, n_spine, rng, bend=rng.uniform(-0.02, 0.02)),
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
            _split([0, 0, neck_len], n_neck, rng),
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
        _ears(d, rng, "head", head_tail, head_r * 0.6, head_h * 0.35, head_r * 0.18)
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
        fore_dir = _unit(direction + np.array([0, -np.sin(elbow), 0]))
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
        steps = _split(np.array([0, length, -length * rng.uniform(0.2, 0.7)]), n_tail, rng, bend=rng.uniform(-0.05, 0.08))
        radii = [torso_r * 0.45 * (1 - 0.6 * i / n_tail) for i in range(n_tail)]
        d.chain("tail", "hips", (0, torso_r * 0.8, hip - 0.02), steps, radii, ("tail",), role="tail", group="tail")
    return d


# --------------------------------------------------------------------------- quadruped

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
        _split(total, n_spine, rng, bend=rng.uniform(0, 0.04)),
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
        _split(np.array([0, -np.cos(a), np.sin(a)]) * neck_len, n_neck, rng),
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
        _ears(
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
    steps = _split(np.array([0, length, length * lift]), n_tail, rng, bend=rng.uniform(-0.08, 0.08))
    radii = [torso_r * 0.35 * (1 - 0.6 * i / n_tail) for i in range(n_tail)]
    d.chain(
        "tail", "pelvis", (0, back + torso_r * 0.6, hip_z + torso_r * 0.3), steps, radii, ("tail",), role="tail", group="tail"
    )
    d.counts.update(spine=n_spine, neck=n_neck, tail=n_tail, scapulae=2 * scapulae, toes=4 * toes)
    return d


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
    spine = d.chain("spine", "pelvis", start, _split(total, n_spine, rng), [body_r * 1.1] * n_spine, ("spine",), role="spine")
    chest = start + total
    neck_len = {"heron": 0.45, "songbird": 0.18, "penguin": 0.1}[build] * rng.uniform(0.85, 1.15)
    steps = _split(np.array([0, -neck_len * 0.25, neck_len]), n_neck, rng, bend=-neck_len * 0.15)
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
    steps = _split(np.array([0, body_r * 2.2, -body_r * 0.3]), n_tail, rng)
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
    steps = _split(np.array([0, length, -length * rng.uniform(0.0, 0.3)]), n_tail, rng, bend=rng.uniform(-0.05, 0.05))
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


DRAFTERS = {"biped": biped, "quadruped": quadruped, "bird": bird, "hexapod": hexapod}


def draft(kind: str, rng: np.random.Generator) -> Draft:
    """The draft of one member of ``kind`` (a key of :data:`DRAFTERS`), drawn from ``rng``."""
    return DRAFTERS[kind](rng)
