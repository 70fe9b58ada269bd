"""Bone naming schemes: the same skeleton named as different tools and artists name bones.

A bone's meaning is given as words (``("upper", "arm")``), a side (``"L"``, ``"R"`` or ``""``) and
an index in its chain (1-based, 0 when alone). Schemes:

- ``"blender"``: ``upper_arm.L``, ``spine.002`` (Rigify-like);
- ``"mixamo"``: ``mixamorig:LeftArm``, ``mixamorig:Spine1`` (Mixamo's words where it has them);
- ``"prefix"``: ``L_UpperArm``, ``Spine_02``;
- ``"suffix"``: ``upperarm_l``, ``spine_02`` (Unreal-like);
- ``"bip01"``: ``Bip01 L UpperArm``, ``Bip01 Spine1`` (3ds Max Biped-like);
- ``"numbered"``: ``Bone``, ``Bone.001`` … in bone order (no meaning at all);
- ``"random"``: made-up words (no meaning, no side).

Names are unique within a rig (a clash gets a numeric suffix).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCHEMES", "bone_names"]

SCHEMES = ("blender", "mixamo", "prefix", "suffix", "bip01", "numbered", "random")

_MIXAMO = {
    ("hips",): "Hips",
    ("thigh",): "UpLeg",
    ("shin",): "Leg",
    ("foot",): "Foot",
    ("toe",): "ToeBase",
    ("clavicle",): "Shoulder",
    ("upper", "arm"): "Arm",
    ("forearm",): "ForeArm",
    ("hand",): "Hand",
}
_BIP = {("shin",): "Calf", ("hips",): "Pelvis", ("toe",): "Toe0", ("upper", "arm"): "UpperArm"}
_SYLLABLES = ("ka", "zu", "mo", "ri", "te", "lo", "vin", "sa", "gor", "pe", "ix", "nu", "dra", "fel", "qo", "ba")


def _pascal(words) -> str:
    return "".join(w[:1].upper() + w[1:] for w in words)


def _one(words: tuple[str, ...], side: str, index: int, scheme: str) -> str:
    long_side = {"L": "Left", "R": "Right"}.get(side, "")
    if scheme == "blender":
        return "_".join(words) + (f".{index - 1:03d}" if index > 1 else "") + (f".{side}" if side else "")
    if scheme == "mixamo":
        return f"mixamorig:{long_side}{_MIXAMO.get(words, _pascal(words))}" + (str(index - 1) if index > 1 else "")
    if scheme == "prefix":
        return (f"{side}_" if side else "") + _pascal(words) + (f"_{index:02d}" if index else "")
    if scheme == "suffix":
        return "".join(words) + (f"_{index:02d}" if index else "") + (f"_{side.lower()}" if side else "")
    if scheme == "bip01":
        return "Bip01 " + (f"{side} " if side else "") + _BIP.get(words, _pascal(words)) + (str(index) if index else "")
    raise ValueError(scheme)


def bone_names(labels: list[tuple[tuple[str, ...], str, int]], scheme: str, rng: np.random.Generator) -> list[str]:
    """Unique names for bones given as (words, side, index) in bone order, in ``scheme`` (one of :data:`SCHEMES`)."""
    if scheme == "numbered":
        names = ["Bone" + (f".{i:03d}" if i else "") for i in range(len(labels))]
    elif scheme == "random":
        names = ["".join(rng.choice(_SYLLABLES, int(rng.integers(2, 4)))).capitalize() for _ in labels]
    else:
        names = [_one(words, side, index, scheme) for words, side, index in labels]
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        unique.append(name if count == 0 else f"{name}_{count}")
    while len(set(unique)) < len(unique):  # a suffixed name met an original: number everything clashing
        unique = [f"{n}_{i}" if unique.count(n) > 1 else n for i, n in enumerate(unique)]
    return unique
