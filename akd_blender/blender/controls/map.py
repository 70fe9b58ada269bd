"""What a probe of a rig's controls finds (:func:`~.controls.probe.find_controls`): :class:`ControlMap`,
and :class:`IKGoal` for the IK targets and poles placed from their chains. Plain data: names and numpy arrays."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .rig import Switch

__all__ = ["ControlMap", "IKGoal", "bend_frame", "bend_joint"]


@dataclass(frozen=True)
class IKGoal:
    """An IK constraint's target or pole that is a control: placed each frame as ``deform`` (a deform bone
    of the chain: the tip for a target, the chain's first bone for a pole) times ``offset`` [4,4] (the
    control's rest matrix in that bone's frame, as evaluated when probed).

    A pole whose chain bends at rest is placed by its chain's bend instead (:meth:`pole_position`): Blender's
    IK lays the chain in the plane through its root, its target and the pole, turned by the constraint's
    pole angle, so the pole keeps the place about the root-to-tip axis it has at rest relative to the bend.
    ``chain``: the chain's deform bones, root first; ``tip_length``: the last one's rest length;
    ``bend``: the index in ``chain`` of the bone whose head bends most at rest; ``plane`` [3]: the pole's head
    at rest in the chain's bend frame (root-to-tip axis, bend direction, their cross product), from the
    chain's root; None places it by ``offset``."""

    control: str
    deform: str
    offset: np.ndarray
    kind: str  # "target" or "pole"
    chain: tuple[str, ...] = ()
    tip_length: float = 0.0
    bend: int = -1
    plane: np.ndarray | None = None

    def pole_position(self, matrices: dict[str, np.ndarray]) -> np.ndarray | None:
        """The pole's head [3] for the chain's bone matrices ``matrices`` (name → [4,4], armature space), or
        None where the chain has no bend frame (no ``plane``, or a chain straight within 1e-3 of its span)."""
        if self.plane is None:
            return None
        frame = bend_frame([matrices[n] for n in self.chain], self.tip_length, self.bend)
        return None if frame is None else frame[1] + frame[0] @ self.plane


def _off_axis(matrices: list[np.ndarray], tip_length: float) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """A chain's root head [3], unit root-to-tip axis [3], span and each bone head's offset [N,3] from that
    axis, from its bones' matrices [4,4] (root first; the tip is the last bone's head plus ``tip_length``
    along it); a zero axis for a chain of no span."""
    root = matrices[0][:3, 3]
    span = matrices[-1][:3, 3] + tip_length * matrices[-1][:3, 1] - root
    length = float(np.linalg.norm(span))
    axis = span / length if length > 0.0 else np.zeros(3)
    heads = np.stack([m[:3, 3] for m in matrices]) - root
    return root, axis, length, heads - np.outer(heads @ axis, axis)


def bend_joint(matrices: list[np.ndarray], tip_length: float) -> int:
    """The index (from 1) of the chain's bone whose head lies farthest off its root-to-tip axis."""
    off = _off_axis(matrices, tip_length)[3]
    return 1 + int(np.argmax(np.linalg.norm(off[1:], axis=1)))


def bend_frame(matrices: list[np.ndarray], tip_length: float, bend: int) -> tuple[np.ndarray, np.ndarray] | None:
    """An IK chain's bend frame from its bones' matrices [4,4] (root first): (axes [3,3] as columns: root to
    tip, the bend (joint ``bend``'s head off that axis), their cross product; origin [3]: the root's head),
    or None where the joint lies within 1e-3 of the span off the axis."""
    root, axis, length, off = _off_axis(matrices, tip_length)
    if length <= 0.0 or float(np.linalg.norm(off[bend])) < 1e-3 * length:
        return None
    side = off[bend] / np.linalg.norm(off[bend])
    return np.stack([axis, side, np.cross(axis, side)], 1), root


@dataclass
class ControlMap:
    """What :func:`find_controls` found.

    Attributes:
        deform: the deform bones (the motion's bone names).
        control_of: deform bone → the control that carries it.
        offset: control → [4,4] ``control⁻¹ · deform`` as evaluated (armature space) for the deform bone
            it was chosen for; the deform bone's target times its inverse is the control's target.
        free: controls placed by position as well as rotation: IK targets and poles and bones without
            a parent (the others keep their location channel and turn about their head).
        group: control → ``[(deform bone, [4,4] control⁻¹ · deform)]`` for the bone it was chosen for
            and the bones following it (the bones it turns as one).
        driven: control → the deform bone it was chosen for.
        carried: control → the deform bones its turn carries rigidly (as probed), for the controls chosen.
        followers: deform bone → the deform bone whose control carries it too.
        carrier: the control that carries the travel, or None.
        carrier_root: the deform root that the carrier translates rigidly (its head is put on target).
        goals: IK targets and poles keyed from the chain (:class:`IKGoal`).
        bend_hints: bones of live IK chains without a pole target, parents first: keyed with the motion's
            rotations, the solver's starting pose, so that it bends the chain the motion's way.
        switches: IK/FK switches (:class:`Switch`), keyed at their FK value.
        fixers: deform bone → a second control that turns only that bone (and bones sharing its control)
            rigidly, used to take out what its control cannot (a roll the rig distributes along a limb).
        fixer_reach: fixer → positions in ``deform`` of the deform bones its turn moves (the bone it fixes
            and the near bones it also turns: a spine tweak fixing a belly bone turns a spine bone too).
        handles: deform bone → a control whose move carries that bone's head and moves only bones near
            it (see ``find_controls``), used to put heads its control leaves off target (a spine whose
            deform bones stretch between tweak controls).
        order: control → evaluation level (a control moved by another comes after it).
        unreached: deform bone → why no control moves it.
        aimed: deform bone → the constraint by which the rig aims it at another deform bone (a piston's
            Damped Track to the part it points at): Blender places it; no control is fitted to it and the
            check does not hold it to the motion.
        candidates: number of animatable bones probed.
    """

    deform: tuple[str, ...]
    control_of: dict[str, str] = field(default_factory=dict)
    offset: dict[str, np.ndarray] = field(default_factory=dict)
    group: dict[str, list] = field(default_factory=dict)
    free: set[str] = field(default_factory=set)
    driven: dict[str, str] = field(default_factory=dict)
    carried: dict[str, frozenset[str]] = field(default_factory=dict)
    followers: dict[str, str] = field(default_factory=dict)
    carrier: str | None = None
    carrier_root: str | None = None
    goals: list[IKGoal] = field(default_factory=list)
    bend_hints: tuple[str, ...] = ()
    switches: list[Switch] = field(default_factory=list)
    fixers: dict[str, str] = field(default_factory=dict)
    fixer_reach: dict[str, np.ndarray] = field(default_factory=dict)
    handles: dict[str, str] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    unreached: dict[str, str] = field(default_factory=dict)
    aimed: dict[str, str] = field(default_factory=dict)
    candidates: int = 0

    @property
    def keyed(self) -> list[str]:
        """The controls whose channels get keys, in evaluation order."""
        names = set(self.driven) | {g.control for g in self.goals} | ({self.carrier} if self.carrier else set())
        names |= set(self.bend_hints)
        names |= set(self.fixers.values()) | set(self.handles.values())
        return sorted(names, key=lambda n: (self.order.get(n, 0), n))
