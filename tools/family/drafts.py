"""Skeleton drafts: the parts a family member's bones are made from, and shared drafting helpers.

The character frame: metres, Z up, the character faces -Y, its left side is +X, the body roughly
at the origin (the mesh is scaled and set on the ground later). A draft is a list of :class:`Part`
(one per bone, parents before children) plus the counts and proportions that were drawn; each part
carries the words its name is made from (:mod:`.naming`), its colour group (:mod:`.meshes`) and its
true role in the vocabulary of :meth:`akd_blender.core.character.roles.BoneRoles.role_of` (None for ears,
jaw, fingers, antennae, beaks, tongues and non-deforming helpers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SIDES", "Part", "Draft", "unit", "split_steps", "add_ears"]

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


def unit(v) -> np.ndarray:
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def split_steps(total: np.ndarray, n: int, rng: np.random.Generator, bend: float = 0.0) -> np.ndarray:
    """``n`` steps [n,3] summing to ``total`` with jittered lengths and a sideways-free bend in the YZ plane."""
    frac = rng.uniform(0.8, 1.2, n)
    frac /= frac.sum()
    steps = frac[:, None] * np.asarray(total, float)[None]
    if bend and n > 1:
        offsets = np.sin(np.linspace(0, np.pi, n + 1)) * bend
        steps[:, 1] += np.diff(offsets)
    return steps


def add_ears(d: Draft, rng, head_key: str, head_top: np.ndarray, spread: float, length: float, radius: float) -> None:
    """Two ears of 1–2 bones each from beside ``head_top``, pointing up and out."""
    n = int(rng.integers(1, 3))
    tilt = rng.uniform(-0.2, 0.3)
    for side, sx, _ in SIDES:
        start = head_top + np.array([sx * spread, 0.0, 0.0])
        direction = unit([sx * 0.45, tilt, 1.0])
        steps = [direction * length / n] * n
        d.chain(f"ear.{side}", head_key, start, steps, [radius * (1 - 0.3 * i) for i in range(n)], ("ear",), side, group="extra")
    d.counts["ears"] = 2 * n
