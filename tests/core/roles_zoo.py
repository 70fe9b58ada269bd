"""Characters shaped like real artist rigs, for bone-role tests: a Mixamo-like humanoid (fingers, toes,
eyes, twist bones, unweighted end bones and armature root), the same laid out as 3ds Max's Biped or holding
a shield, a dog (scapulae, ears, jaw, long tail, toes), the dog with a split hub or with dragon wings, a bird
with flat wings and a beak, a two-legged dinosaur with a heavy tail and short arms, a straight and an
S-curved snake, a spider, a human named as Unreal's mannequin, and creatures outside the first kinds: a
tarantula, a crab with its claws up (8 legs) or down (a lobster, 10 legs), an eagle with short legs under
wide wings, a dragon with its wings folded to the ground and a griffin. Each is built facing -Y on z = 0 (metres) with its true roles by bone name."""

from __future__ import annotations

import dataclasses

import numpy as np

from akd_blender.core.character.procedural import BoneSpec, build_character
from akd_blender.core.character.rig import RigAsset

GREY = (0.6, 0.6, 0.6)
SIDES = (("L", 1.0, "left"), ("R", -1.0, "right"))


def _chain(prefix: str, parent: str | None, points, radii) -> list[BoneSpec]:
    """Bones ``prefix1..n`` joining consecutive ``points``; the first hangs from ``parent``."""
    names = [f"{prefix}{i + 1}" for i in range(len(points) - 1)]
    return [
        BoneSpec(name, names[i - 1] if i else parent, points[i], points[i + 1], radii[i], GREY, connect=i > 0)
        for i, name in enumerate(names)
    ]


def humanoid() -> tuple[RigAsset, dict[str, str]]:
    """A 1.75 m Mixamo-like humanoid in T-pose (see :func:`_humanoid_specs`)."""
    specs, truth = _humanoid_specs()
    return build_character("Humanoid", specs), truth


def max_biped() -> tuple[RigAsset, dict[str, str]]:
    """The humanoid laid out as 3ds Max's Biped: the thighs hang from the first spine bone, not the pelvis."""
    specs, truth = _humanoid_specs()
    specs = [dataclasses.replace(b, parent="Spine1") if b.name in ("LLeg1", "RLeg1") else b for b in specs]
    return build_character("MaxBiped", specs), truth


def armed_humanoid() -> tuple[RigAsset, dict[str, str]]:
    """The humanoid with a heavy prop (a big round shield bone) in its right hand: mesh on one side only."""
    specs, truth = _humanoid_specs()
    specs.append(BoneSpec("Shield", "RArm4", (-0.75, -0.12, 1.42), (-0.75, -0.2, 1.42), 0.3, GREY))
    return build_character("ArmedHumanoid", specs), truth


def _humanoid_specs() -> tuple[list[BoneSpec], dict[str, str]]:
    """A 1.75 m Mixamo-like humanoid in T-pose (names as Mixamo's, without the prefix), with twist bones on
    the upper arms and calves as game rigs have them."""
    s = [
        BoneSpec("Root", None, (0, 0, 0), (0, 0.2, 0), 0.05, GREY, deform=False),
        BoneSpec("Hips", "Root", (0, 0.01, 0.98), (0, 0.01, 1.08), 0.15, GREY),
        *_chain("Spine", "Hips", [(0, 0.01, 1.08), (0, 0.0, 1.2), (0, -0.01, 1.32), (0, -0.01, 1.44)], [0.14, 0.15, 0.16]),
        BoneSpec("Neck", "Spine3", (0, -0.01, 1.47), (0, -0.02, 1.56), 0.05, GREY),
        BoneSpec("Head", "Neck", (0, -0.02, 1.56), (0, -0.02, 1.72), 0.11, GREY),
        BoneSpec("HeadTop_End", "Head", (0, -0.02, 1.75), (0, -0.02, 1.8), 0.02, GREY, deform=False),
    ]
    truth = {"Hips": "root", "Spine1": "spine", "Spine2": "spine", "Spine3": "spine", "Neck": "neck", "Head": "head"}
    for side, x, word in SIDES:
        s.append(BoneSpec(f"{side}Eye", "Head", (x * 0.035, -0.09, 1.65), (x * 0.035, -0.11, 1.65), 0.015, GREY))
        arm = [
            (x * 0.05, -0.01, 1.42),
            (x * 0.17, -0.01, 1.42),
            (x * 0.45, -0.01, 1.42),
            (x * 0.71, -0.01, 1.42),
            (x * 0.8, -0.01, 1.42),
        ]
        s += _chain(f"{side}Arm", "Spine3", arm, [0.05, 0.05, 0.04, 0.035])
        s.append(BoneSpec(f"{side}ArmTwist", f"{side}Arm2", (x * 0.3, -0.01, 1.42), (x * 0.44, -0.01, 1.42), 0.052, GREY))
        truth.update({f"{side}Arm{i}": f"arm.{word}" for i in (1, 2, 3, 4)})
        for f, y in enumerate((-0.035, -0.012, 0.012, 0.035)):
            pts = [(x * (0.8 + 0.03 * k), y, 1.42) for k in range(4)]
            s += _chain(f"{side}Finger{f}_", f"{side}Arm4", pts, [0.009] * 3)
        thumb = [(x * 0.76, -0.045, 1.41), (x * 0.78, -0.07, 1.4), (x * 0.8, -0.09, 1.4)]
        s += _chain(f"{side}Thumb", f"{side}Arm4", thumb, [0.01] * 2)
        leg = [
            (x * 0.09, 0.01, 0.96),
            (x * 0.095, 0.0, 0.52),
            (x * 0.1, 0.02, 0.09),
            (x * 0.1, -0.1, 0.03),
            (x * 0.1, -0.18, 0.03),
        ]
        s += _chain(f"{side}Leg", "Hips", leg, [0.075, 0.055, 0.045, 0.035])
        s.append(BoneSpec(f"{side}CalfTwist", f"{side}Leg2", (x * 0.097, 0.01, 0.3), (x * 0.1, 0.02, 0.1), 0.057, GREY))
        s.append(
            BoneSpec(f"{side}Toe_End", f"{side}Leg4", (x * 0.1, -0.18, 0.03), (x * 0.1, -0.22, 0.03), 0.01, GREY, deform=False)
        )
        truth.update({f"{side}Leg{i}": f"leg.{word}" for i in (1, 2, 3, 4)})
    return s, truth


def dog() -> tuple[RigAsset, dict[str, str]]:
    """A 0.7 m tall dog (see :func:`_dog_specs`)."""
    specs, truth = _dog_specs()
    return build_character("Dog", specs), truth


def _dog_specs() -> tuple[list[BoneSpec], dict[str, str]]:
    """Pelvis root, 3 spine bones, 2 neck bones, head with jaw and ears, 5-bone tail, legs with
    scapula/hip, upper, lower, paw and toe."""
    s = [
        BoneSpec("pelvis", None, (0, 0.3, 0.55), (0, 0.15, 0.56), 0.13, GREY),
        *_chain("spine", "pelvis", [(0, 0.15, 0.56), (0, 0.0, 0.57), (0, -0.15, 0.58), (0, -0.3, 0.6)], [0.13, 0.13, 0.14]),
        *_chain("neck", "spine3", [(0, -0.33, 0.62), (0, -0.4, 0.7), (0, -0.45, 0.78)], [0.06, 0.055]),
        BoneSpec("head", "neck2", (0, -0.45, 0.78), (0, -0.6, 0.78), 0.08, GREY),
        BoneSpec("jaw", "head", (0, -0.48, 0.74), (0, -0.62, 0.72), 0.03, GREY),
        *_chain(
            "tail",
            "pelvis",
            [(0, 0.36, 0.58), (0, 0.46, 0.62), (0, 0.56, 0.64), (0, 0.66, 0.64), (0, 0.75, 0.62), (0, 0.83, 0.58)],
            [0.04, 0.035, 0.03, 0.025, 0.02],
        ),
    ]
    truth = {
        "pelvis": "root",
        "spine1": "spine",
        "spine2": "spine",
        "spine3": "spine",
        "neck1": "neck",
        "neck2": "neck",
        "head": "head",
    }
    truth.update({f"tail{i}": "tail" for i in range(1, 6)})
    for side, x, word in SIDES:
        s += _chain(
            f"ear{side}", "head", [(x * 0.04, -0.47, 0.84), (x * 0.06, -0.47, 0.9), (x * 0.07, -0.47, 0.95)], [0.02, 0.015]
        )
        front = [
            (x * 0.07, -0.26, 0.6),
            (x * 0.1, -0.28, 0.45),
            (x * 0.1, -0.26, 0.27),
            (x * 0.1, -0.27, 0.05),
            (x * 0.1, -0.31, 0.03),
            (x * 0.1, -0.35, 0.02),
        ]
        s += _chain(f"front{side}", "spine3", front, [0.05, 0.05, 0.04, 0.03, 0.025])
        hind = [
            (x * 0.08, 0.28, 0.54),
            (x * 0.1, 0.22, 0.36),
            (x * 0.1, 0.3, 0.2),
            (x * 0.1, 0.28, 0.05),
            (x * 0.1, 0.24, 0.03),
            (x * 0.1, 0.2, 0.02),
        ]
        s += _chain(f"hind{side}", "pelvis", hind, [0.06, 0.05, 0.04, 0.03, 0.025])
        truth.update({f"front{side}{i}": f"leg.front.{word}" for i in range(1, 6)})
        truth.update({f"hind{side}{i}": f"leg.hind.{word}" for i in range(1, 6)})
    return s, truth


def dragon() -> tuple[RigAsset, dict[str, str]]:
    """The dog with two flat, broad wings spread from its back (the bone before the front legs' one)."""
    specs, truth = _dog_specs()
    names = []
    for side, x, word in SIDES:
        wing = [(x * 0.08, -0.02, 0.66), (x * 0.35, 0.0, 0.72), (x * 0.6, 0.05, 0.74), (x * 0.85, 0.1, 0.72)]
        specs += _chain(f"wing{side}", "spine2", wing, [0.05, 0.045, 0.04])
        names += [f"wing{side}{i}" for i in (1, 2, 3)]
        truth.update({f"wing{side}{i}": f"wing.{word}" for i in (1, 2, 3)})
    rig = build_character("Dragon", specs)
    return _flatten(rig, [rig.bone_index(n) for n in names], chord=4.0, thickness=0.2), truth


def split_quadruped() -> tuple[RigAsset, dict[str, str]]:
    """The dog with a body bone at the hub whose children are the hips (hind legs and tail) and the spine
    (front legs, neck, head), as some game rigs have it: the body bone is the root and the hips have no role."""
    specs, truth = _dog_specs()
    hub = BoneSpec("body", None, (0, 0.15, 0.56), (0, 0.05, 0.57), 0.12, GREY)
    specs = [hub] + [dataclasses.replace(b, parent="body") if b.name in ("pelvis", "spine1") else b for b in specs]
    truth = {**{k: v for k, v in truth.items() if k != "pelvis"}, "body": "root"}
    return build_character("SplitQuadruped", specs), truth


def bird() -> tuple[RigAsset, dict[str, str]]:
    """A bird with a horizontal body, S-neck, head with beak, 3-bone flat wings spread sideways, 2 legs
    with 3 forward toes and a hind toe, and a tail."""
    s = [
        BoneSpec("pelvis", None, (0, 0.12, 0.42), (0, 0.02, 0.45), 0.1, GREY),
        *_chain("spine", "pelvis", [(0, 0.02, 0.45), (0, -0.1, 0.48), (0, -0.18, 0.5)], [0.1, 0.1]),
        *_chain("neck", "spine2", [(0, -0.2, 0.52), (0, -0.23, 0.6), (0, -0.22, 0.68)], [0.035, 0.03]),
        BoneSpec("head", "neck2", (0, -0.22, 0.68), (0, -0.3, 0.7), 0.045, GREY),
        BoneSpec("beak", "head", (0, -0.3, 0.7), (0, -0.38, 0.68), 0.015, GREY),
        *_chain("tail", "pelvis", [(0, 0.16, 0.44), (0, 0.26, 0.46), (0, 0.36, 0.46)], [0.04, 0.03]),
    ]
    truth = {"pelvis": "root", "spine1": "spine", "spine2": "spine", "neck1": "neck", "neck2": "neck", "head": "head"}
    truth.update({"tail1": "tail", "tail2": "tail"})
    wings = []
    for side, x, word in SIDES:
        wing = [(x * 0.08, -0.12, 0.52), (x * 0.25, -0.1, 0.53), (x * 0.42, -0.06, 0.53), (x * 0.6, 0.0, 0.52)]
        s += _chain(f"wing{side}", "spine2", wing, [0.05, 0.045, 0.04])
        wings += [f"wing{side}{i}" for i in (1, 2, 3)]
        leg = [(x * 0.05, 0.06, 0.4), (x * 0.06, -0.02, 0.26), (x * 0.06, 0.04, 0.12), (x * 0.06, 0.02, 0.02)]
        s += _chain(f"leg{side}", "pelvis", leg, [0.03, 0.02, 0.015])
        for t, (dx, dy) in enumerate(((-0.03, -0.06), (0.0, -0.07), (0.03, -0.06), (0.0, 0.04))):
            s.append(BoneSpec(f"toe{side}{t}", f"leg{side}3", leg[-1], (x * 0.06 + dx, 0.02 + dy, 0.01), 0.008, GREY))
        truth.update({f"wing{side}{i}": f"wing.{word}" for i in (1, 2, 3)})
        truth.update({f"leg{side}{i}": f"leg.{word}" for i in (1, 2, 3)})
    rig = build_character("Bird", s)
    return _flatten(rig, [rig.bone_index(n) for n in wings], chord=4.0, thickness=0.2), truth


def _flatten(rig: RigAsset, bones: list[int], chord: float, thickness: float) -> RigAsset:
    """The mesh owned by ``bones`` stretched ``chord`` times along Y and squashed ``thickness`` times along Z
    about each bone's axis: a flat, broad wing."""
    vertices = rig.vertices.copy()
    owner = rig.weights.argmax(1)
    for b in bones:
        sel = owner == b
        axis = (rig.heads[b] + rig.tails[b]) / 2
        vertices[sel, 1] = axis[1] + (vertices[sel, 1] - axis[1]) * chord
        vertices[sel, 2] = axis[2] + (vertices[sel, 2] - axis[2]) * thickness
    return dataclasses.replace(rig, vertices=vertices)


def dinosaur() -> tuple[RigAsset, dict[str, str]]:
    """A two-legged dinosaur: horizontal body, long heavy tail, short arms hanging forward, big head with jaw."""
    s = [
        BoneSpec("hips", None, (0, 0.2, 1.5), (0, 0.0, 1.55), 0.3, GREY),
        *_chain("spine", "hips", [(0, 0.0, 1.55), (0, -0.35, 1.6), (0, -0.7, 1.62)], [0.3, 0.3]),
        *_chain("neck", "spine2", [(0, -0.75, 1.65), (0, -0.95, 1.85)], [0.15]),
        BoneSpec("head", "neck1", (0, -0.95, 1.85), (0, -1.45, 1.85), 0.2, GREY),
        BoneSpec("jaw", "head", (0, -1.0, 1.72), (0, -1.4, 1.7), 0.07, GREY),
        *_chain(
            "tail",
            "hips",
            [(0, 0.3, 1.5), (0, 0.8, 1.45), (0, 1.3, 1.35), (0, 1.8, 1.2), (0, 2.3, 1.0)],
            [0.25, 0.18, 0.12, 0.07],
        ),
    ]
    truth = {"hips": "root", "spine1": "spine", "spine2": "spine", "neck1": "neck", "head": "head"}
    truth.update({f"tail{i}": "tail" for i in range(1, 5)})
    for side, x, word in SIDES:
        s += _chain(
            f"arm{side}", "spine2", [(x * 0.2, -0.65, 1.45), (x * 0.25, -0.75, 1.25), (x * 0.25, -0.9, 1.15)], [0.06, 0.05]
        )
        leg = [(x * 0.25, 0.1, 1.45), (x * 0.3, -0.2, 0.85), (x * 0.3, 0.15, 0.35), (x * 0.3, 0.05, 0.06), (x * 0.3, -0.25, 0.04)]
        s += _chain(f"leg{side}", "hips", leg, [0.18, 0.12, 0.08, 0.06])
        truth.update({f"arm{side}{i}": f"arm.{word}" for i in (1, 2)})
        truth.update({f"leg{side}{i}": f"leg.{word}" for i in (1, 2, 3, 4)})
    return build_character("Dinosaur", s), truth


def snake() -> tuple[RigAsset, dict[str, str]]:
    """A snake of 12 bones lying on the ground from its tail end (the root) to its head."""
    points = [(0, 1.1 - 0.2 * i, 0.06 + 0.01 * (i == 12)) for i in range(13)]
    radii = [0.02 + 0.035 * min(i, 8) / 8 for i in range(11)] + [0.07]
    s = _chain("seg", None, points, radii)
    return build_character("Snake", s), {}


def curved_snake() -> tuple[RigAsset, dict[str, str]]:
    """The snake lying in an S-curve (no plane mirrors it)."""
    points = [(0.12 * np.sin(2 * np.pi * i / 6.0), 1.1 - 0.2 * i, 0.06 + 0.01 * (i == 12)) for i in range(13)]
    radii = [0.02 + 0.035 * min(i, 8) / 8 for i in range(11)] + [0.07]
    return build_character("CurvedSnake", _chain("seg", None, points, radii)), {}


def spider() -> tuple[RigAsset, dict[str, str]]:
    """A spider: body root, head, 8 legs rising to a knee then down to the ground."""
    specs, truth = _spider_specs()
    return build_character("Spider", specs), truth


def _spider_specs() -> tuple[list[BoneSpec], dict[str, str]]:
    s = [
        BoneSpec("body", None, (0, 0.05, 0.12), (0, -0.05, 0.12), 0.06, GREY),
        BoneSpec("head", "body", (0, -0.05, 0.12), (0, -0.1, 0.12), 0.04, GREY),
    ]
    truth = {"body": "root", "head": "head"}
    for side, x, _ in SIDES:
        for i, y in enumerate((-0.04, -0.01, 0.02, 0.05)):
            splay = (y - 0.005) * 2.5
            leg = [
                (x * 0.04, y, 0.12),
                (x * 0.12, y + splay * 0.1, 0.2),
                (x * 0.22, y + splay * 0.2, 0.1),
                (x * 0.26, y + splay * 0.25, 0.01),
            ]
            s += _chain(f"leg{side}{i}_", "body", leg, [0.012, 0.01, 0.008])
            truth.update({f"leg{side}{i}_{k}": "leg" for k in (1, 2, 3)})
    return s, truth


def mannequin() -> tuple[RigAsset, dict[str, str]]:
    """A 1.75 m human named as Unreal's mannequin is (``root``, ``pelvis``, ``spine_01``–``03``, ``neck_01``,
    ``head``, ``clavicle/upperarm/lowerarm/hand_{l,r}``, ``thigh/calf/foot/ball_{l,r}``, twist bones, the
    non-deforming ``ik_foot_*`` / ``ik_hand_*`` bones), in A-pose, its toes to -Y, standing as game idles
    do: the hips thrust 8 cm ahead of the ankles, the knees a little bent, the head back over the heels."""
    hip_y = -0.08
    s = [
        BoneSpec("root", None, (0, 0, 0), (0, 0.2, 0), 0.02, GREY, deform=False),
        BoneSpec("pelvis", "root", (0, hip_y, 0.95), (0, hip_y, 1.02), 0.14, GREY),
        *_chain("spine_0", "pelvis", [(0, hip_y, 1.02), (0, -0.02, 1.12), (0, 0.0, 1.24), (0, 0.0, 1.42)], [0.14, 0.15, 0.16]),
        BoneSpec("neck_01", "spine_03", (0, 0.0, 1.46), (0, -0.01, 1.55), 0.05, GREY),
        BoneSpec("head", "neck_01", (0, -0.01, 1.55), (0, -0.01, 1.75), 0.1, GREY),
        BoneSpec("ik_foot_root", "root", (0, 0, 0), (0, 0.1, 0), 0.02, GREY, deform=False),
        BoneSpec("ik_hand_root", "root", (0, 0, 0), (0, 0.1, 0), 0.02, GREY, deform=False),
        BoneSpec("ik_hand_gun", "ik_hand_root", (-0.56, -0.05, 1.05), (-0.56, -0.1, 1.05), 0.02, GREY, deform=False),
    ]
    truth = {"pelvis": "root", "spine_01": "spine", "spine_02": "spine", "spine_03": "spine", "neck_01": "neck", "head": "head"}
    for side, x, word in (("l", 1.0, "left"), ("r", -1.0, "right")):
        arm = [
            (x * 0.03, -0.01, 1.4),
            (x * 0.17, 0.0, 1.41),
            (x * 0.38, 0.0, 1.22),
            (x * 0.56, -0.05, 1.05),
            (x * 0.63, -0.07, 0.98),
        ]
        leg = [
            (x * 0.09, hip_y, 0.93),
            (x * 0.1, -0.05, 0.51),
            (x * 0.11, 0.01, 0.09),
            (x * 0.12, -0.11, 0.02),
            (x * 0.12, -0.18, 0.02),
        ]
        names = {"arm": ("clavicle", "upperarm", "lowerarm", "hand"), "leg": ("thigh", "calf", "foot", "ball")}
        for limb, points, radii, parent in (
            ("arm", arm, (0.05, 0.05, 0.04, 0.035), "spine_03"),
            ("leg", leg, (0.075, 0.055, 0.045, 0.035), "pelvis"),
        ):
            chain = [f"{n}_{side}" for n in names[limb]]
            s += [
                BoneSpec(n, chain[i - 1] if i else parent, points[i], points[i + 1], radii[i], GREY, connect=i > 0)
                for i, n in enumerate(chain)
            ]
            truth.update({n: f"{limb}.{word}" for n in chain})
        s += [
            BoneSpec(f"upperarm_twist_01_{side}", f"upperarm_{side}", (x * 0.27, 0.0, 1.32), (x * 0.37, 0.0, 1.23), 0.052, GREY),
            BoneSpec(f"thigh_twist_01_{side}", f"thigh_{side}", (x * 0.095, -0.07, 0.75), (x * 0.1, -0.05, 0.52), 0.077, GREY),
            BoneSpec(f"calf_twist_01_{side}", f"calf_{side}", (x * 0.105, -0.02, 0.3), (x * 0.11, 0.01, 0.1), 0.057, GREY),
            BoneSpec(f"ik_foot_{side}", "ik_foot_root", leg[2], (x * 0.11, 0.1, 0.09), 0.02, GREY, deform=False),
            BoneSpec(f"ik_hand_{side}", "ik_hand_gun", arm[3], (x * 0.6, -0.05, 1.05), 0.02, GREY, deform=False),
        ]
    return build_character("Mannequin", s), truth


def bust() -> tuple[RigAsset, dict[str, str]]:
    """The humanoid from the hips up, standing on its hips (a bust, a turret, a puppet's upper half):
    root, spine, neck, head and arms with hands, no legs."""
    specs, truth = _humanoid_specs()
    keep = {s.name for s in specs if not s.name.startswith(("LLeg", "RLeg", "LCalf", "RCalf", "LToe", "RToe"))}
    low = 0.98
    specs = [
        dataclasses.replace(s, head=(s.head[0], s.head[1], s.head[2] - low), tail=(s.tail[0], s.tail[1], s.tail[2] - low))
        for s in specs
        if s.name in keep and s.name != "Root"
    ]
    specs = [dataclasses.replace(s, parent=None) if s.name == "Hips" else s for s in specs]
    return build_character("Bust", specs), {k: v for k, v in truth.items() if k in keep and not v.startswith("leg")}


def _spider_legs(
    prefix_parent: str,
    count: int,
    hip_y0: float,
    hip_dy: float,
    hip_x: float,
    hip_z: float,
    span: float,
    knee_z: float,
    bones: int,
    radius: float,
) -> tuple[list[BoneSpec], dict[str, str]]:
    """``count`` legs a side hanging from ``prefix_parent``, hips from ``hip_y0`` back by ``hip_dy``: each
    rises to a knee ``knee_z`` high, reaches ``span`` out sideways (fanned forward at the front, back at the
    rear) and comes down to the ground in ``bones`` (3 or 4) bones; true roles "leg.<position>.<side>"."""
    specs, truth = [], {}
    for side, x, word in SIDES:
        for i in range(count):
            y = hip_y0 + i * hip_dy
            fan = (i - (count - 1) / 2) / max(count - 1, 1) * span * 1.2
            pts = [
                (x * hip_x, y, hip_z),
                (x * (hip_x + 0.3 * span), y + 0.3 * fan, knee_z),
                (x * (hip_x + 0.75 * span), y + 0.75 * fan, 0.5 * knee_z),
                (x * (hip_x + span), y + fan, 0.01),
            ]
            if bones == 4:
                pts.insert(3, (x * (hip_x + 0.9 * span), y + 0.9 * fan, 0.15 * knee_z))
            position = "front" if i == 0 else ("hind" if i == count - 1 else "middle")
            specs += _chain(f"leg{side}{i}_", prefix_parent, pts, [radius * (1 - 0.15 * k) for k in range(bones)])
            truth.update({f"leg{side}{i}_{k}": f"leg.{position}.{word}" for k in range(1, bones + 1)})
    return specs, truth


def tarantula() -> tuple[RigAsset, dict[str, str]]:
    """A tarantula: cephalothorax root with a head in front carrying two pedipalps, a big round abdomen
    behind (a tail), 8 four-bone legs splayed sideways, rising to a knee and coming down to the ground."""
    s = [
        BoneSpec("thorax", None, (0, 0.04, 0.1), (0, -0.04, 0.1), 0.05, GREY),
        BoneSpec("head", "thorax", (0, -0.04, 0.1), (0, -0.08, 0.1), 0.035, GREY),
        *_chain("abdomen", "thorax", [(0, 0.05, 0.1), (0, 0.12, 0.11), (0, 0.19, 0.1)], [0.065, 0.055]),
    ]
    truth = {"thorax": "root", "head": "head", "abdomen1": "tail", "abdomen2": "tail"}
    for side, x, _ in SIDES:  # pedipalps: short feelers held forward off the ground
        s += _chain(
            f"palp{side}", "head", [(x * 0.02, -0.07, 0.1), (x * 0.04, -0.1, 0.09), (x * 0.045, -0.13, 0.06)], [0.008, 0.007]
        )
    legs, leg_truth = _spider_legs("thorax", 4, -0.03, 0.02, 0.035, 0.1, 0.2, 0.16, 4, 0.011)
    return build_character("Tarantula", s + legs), {**truth, **leg_truth}


def crab() -> tuple[RigAsset, dict[str, str]]:
    """A crab: a wide flat carapace root with a mouth, two big claws held up in front (arms) and 8
    three-bone walking legs splayed sideways down to the ground."""
    return _crab("Crab", claws_down=False)


def lobster() -> tuple[RigAsset, dict[str, str]]:
    """The crab with its claws resting on the ground in front of it: ten legs, five a side."""
    return _crab("Lobster", claws_down=True)


def _crab(name: str, claws_down: bool) -> tuple[RigAsset, dict[str, str]]:
    s = [
        BoneSpec("carapace", None, (0, 0.05, 0.09), (0, -0.05, 0.09), 0.07, GREY),
        BoneSpec("mouth", "carapace", (0, -0.05, 0.09), (0, -0.08, 0.09), 0.03, GREY),
    ]
    truth = {"carapace": "root", "mouth": "head"}
    for side, x, word in SIDES:
        if claws_down:
            claw = [(x * 0.05, -0.06, 0.09), (x * 0.14, -0.12, 0.12), (x * 0.16, -0.2, 0.07), (x * 0.14, -0.27, 0.02)]
        else:
            claw = [(x * 0.05, -0.06, 0.1), (x * 0.12, -0.12, 0.13), (x * 0.1, -0.2, 0.14), (x * 0.06, -0.26, 0.13)]
        s += _chain(f"claw{side}", "carapace", claw, [0.02, 0.025, 0.02 if claws_down else 0.03])
        role = f"leg.front.{word}" if claws_down else f"arm.{word}"
        truth.update({f"claw{side}{k}": role for k in (1, 2, 3)})
    legs, leg_truth = _spider_legs("carapace", 4, -0.03, 0.025, 0.06, 0.09, 0.17, 0.13, 3, 0.012)
    if claws_down:  # the claws are the front pair: the walking legs' front pair becomes a middle one
        leg_truth = {k: v.replace("front", "middle") for k, v in leg_truth.items()}
    return build_character(name, s + legs), {**truth, **leg_truth}


def eagle() -> tuple[RigAsset, dict[str, str]]:
    """An eagle perched: horizontal body, short neck and head with a hooked beak, short legs with talons
    close together under the body (7 cm apart), long broad flat wings spread to a span 4.5 times its
    height, a tail."""
    s = [
        BoneSpec("pelvis", None, (0, 0.1, 0.22), (0, 0.0, 0.24), 0.08, GREY),
        *_chain("spine", "pelvis", [(0, 0.0, 0.24), (0, -0.1, 0.27), (0, -0.16, 0.29)], [0.09, 0.08]),
        BoneSpec("neck1", "spine2", (0, -0.17, 0.3), (0, -0.22, 0.36), 0.04, GREY),
        BoneSpec("head", "neck1", (0, -0.22, 0.36), (0, -0.3, 0.37), 0.045, GREY),
        BoneSpec("beak", "head", (0, -0.3, 0.37), (0, -0.35, 0.34), 0.012, GREY),
        *_chain("tail", "pelvis", [(0, 0.14, 0.22), (0, 0.26, 0.2), (0, 0.36, 0.18)], [0.04, 0.03]),
    ]
    truth = {"pelvis": "root", "spine1": "spine", "spine2": "spine", "neck1": "neck", "head": "head"}
    truth.update({"tail1": "tail", "tail2": "tail"})
    wings = []
    for side, x, word in SIDES:
        wing = [(x * 0.06, -0.1, 0.3), (x * 0.35, -0.08, 0.32), (x * 0.65, -0.04, 0.31), (x * 0.95, 0.02, 0.29)]
        s += _chain(f"wing{side}", "spine2", wing, [0.05, 0.045, 0.04])
        wings += [f"wing{side}{i}" for i in (1, 2, 3)]
        leg = [(x * 0.03, 0.04, 0.17), (x * 0.035, 0.0, 0.1), (x * 0.035, 0.02, 0.03)]
        s += _chain(f"leg{side}", "pelvis", leg, [0.022, 0.015])
        for t, (dx, dy) in enumerate(((-0.015, -0.04), (0.0, -0.05), (0.015, -0.04), (0.0, 0.03))):
            s.append(BoneSpec(f"talon{side}{t}", f"leg{side}2", leg[-1], (x * 0.035 + dx, 0.02 + dy, 0.01), 0.006, GREY))
        truth.update({f"wing{side}{i}": f"wing.{word}" for i in (1, 2, 3)})
        truth.update({f"leg{side}{i}": f"leg.{word}" for i in (1, 2)})
    rig = build_character("Eagle", s)
    return _membrane(rig, [rig.bone_index(n) for n in wings], chord=4.0, thickness=0.2), truth


def _winged_quadruped(name: str, wing_span: float, wing_droop: float) -> tuple[RigAsset, dict[str, str]]:
    """The dog's body with a long neck and two flat wings reaching ``wing_span`` out from its back,
    their tips ``wing_droop`` below the shoulders."""
    specs, truth = _dog_specs()
    names = []
    for side, x, word in SIDES:
        z = 0.66
        wing = [
            (x * 0.08, -0.02, z),
            (x * 0.35 * wing_span, 0.0, z + 0.1),
            (x * 0.7 * wing_span, 0.05, z + 0.05 - 0.5 * wing_droop),
            (x * wing_span, 0.1, z - wing_droop),
        ]
        specs += _chain(f"wing{side}", "spine2", wing, [0.06, 0.05, 0.045])
        names += [f"wing{side}{i}" for i in (1, 2, 3)]
        truth.update({f"wing{side}{i}": f"wing.{word}" for i in (1, 2, 3)})
    rig = build_character(name, specs)
    return _membrane(rig, [rig.bone_index(n) for n in names], chord=4.0, thickness=0.2), truth


def _membrane(rig: RigAsset, bones: list[int], chord: float, thickness: float) -> RigAsset:
    """The mesh owned by ``bones`` stretched ``chord`` times along Y and squashed ``thickness`` times across
    the plane of Y and the bone (a wing membrane that follows the bone wherever it slopes)."""
    vertices = rig.vertices.copy()
    owner = rig.weights.argmax(1)
    y = np.array([0.0, 1.0, 0.0])
    for b in bones:
        sel = owner == b
        axis = (rig.heads[b] + rig.tails[b]) / 2
        normal = np.cross(rig.tails[b] - rig.heads[b], y)
        normal /= np.linalg.norm(normal)
        rel = vertices[sel] - axis
        rel[:, 1] *= chord
        rel -= (1.0 - thickness) * np.outer(rel @ normal, normal)
        vertices[sel] = axis + rel
    return dataclasses.replace(rig, vertices=vertices)


def great_dragon() -> tuple[RigAsset, dict[str, str]]:
    """The dog with wings spanning 3 times its height, folded down so their tips rest on the ground beside
    its feet (a dragon standing with its wings lowered)."""
    return _winged_quadruped("GreatDragon", 1.4, 0.655)


def griffin() -> tuple[RigAsset, dict[str, str]]:
    """The dog with level wings spanning twice its height (a griffin)."""
    return _winged_quadruped("Griffin", 1.05, 0.0)


ZOO = {
    "humanoid": humanoid,
    "max_biped": max_biped,
    "armed_humanoid": armed_humanoid,
    "dog": dog,
    "split_quadruped": split_quadruped,
    "dragon": dragon,
    "bird": bird,
    "dinosaur": dinosaur,
    "snake": snake,
    "curved_snake": curved_snake,
    "spider": spider,
    "mannequin": mannequin,
    "bust": bust,
    "tarantula": tarantula,
    "crab": crab,
    "lobster": lobster,
    "eagle": eagle,
    "great_dragon": great_dragon,
    "griffin": griffin,
}
