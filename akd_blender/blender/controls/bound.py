"""An armature bound for one job: read once on the way in, carried through to the write.

Needs: main thread, Object or Pose mode. :func:`bind_armature` reads the character's armature and, for a
"game rig" (:func:`~.character.game_rig.followed_armature`), the rig whose bones it copies;
:meth:`BoundArmature.control_map` probes that rig's controls (:func:`~.controls.probe.find_controls`) the
first time it is asked and hands out copies of that probe afterwards while the rig's fingerprint
(:func:`~.controls.fingerprint.rig_fingerprint`) and the bones asked about are the same: a job probes a
control rig once, when it reads it (its tied bones), and the write takes a copy. A rig edited in between
(a panel job runs while the user works) has another fingerprint and is probed again.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import bpy

from ..character.game_rig import followed_armature
from .fingerprint import rig_fingerprint
from .map import ControlMap
from .probe import find_controls
from .rig import set_switches

__all__ = ["BoundArmature", "bind_armature", "bound_for"]


@dataclass
class BoundArmature:
    """One job's armature.

    Attributes:
        armature: the character's armature (the one mirrored; a game rig where the mesh is bound to one).
        bones: the bones bound (the mirror's deform skeleton, which the job's clips move), Blender names.
        keyed: the armature whose controls take the keys: the rig ``armature``'s bones all copy whole (a game
            rig's control rig), else ``armature`` itself.
        copied: each of ``bones`` → the bone of ``keyed`` it copies; empty when ``keyed`` is ``armature``.
        probes: how many times :meth:`control_map` probed the rig (1 for a control rig's whole job).
    """

    armature: bpy.types.Object
    bones: tuple[str, ...]
    keyed: bpy.types.Object
    copied: dict[str, str] = field(default_factory=dict)
    probes: int = 0
    _key: tuple | None = field(default=None, repr=False)
    _controls: ControlMap | None = field(default=None, repr=False)

    @property
    def followed(self) -> tuple[bpy.types.Object, dict[str, str]] | None:
        """``(keyed, copied)`` for a game rig (as :func:`~.character.game_rig.followed_armature` gives), else None."""
        return (self.keyed, self.copied) if self.copied else None

    def is_valid(self) -> bool:
        """Whether the bound armatures still exist in Blender (a panel job's armature may be deleted while it runs)."""
        try:
            return bool(self.armature.name) and bool(self.keyed.name)
        except ReferenceError:
            return False

    def control_map(self, armature_obj: bpy.types.Object, deform: tuple[str, ...], parents=None) -> ControlMap:
        """:func:`~.controls.probe.find_controls` of ``armature_obj`` for ``deform`` (``parents`` as there): a copy
        of this job's probe when ``armature_obj``'s fingerprint (:func:`~.controls.fingerprint.rig_fingerprint`
        of ``deform``) and ``parents`` are the ones it ran with, the IK/FK switches set to FK as a probe leaves
        them; else a new probe (counted in :attr:`probes`), kept for the next call."""
        bpy.context.view_layer.update()
        key = (rig_fingerprint(armature_obj, tuple(deform)), None if parents is None else tuple(int(p) for p in parents))
        if self._controls is not None and self._key == key:
            result = copy.deepcopy(self._controls)
            set_switches(armature_obj, result.switches, fk=True)
            return result
        result = find_controls(armature_obj, tuple(deform), parents)
        self.probes += 1
        self._key, self._controls = key, copy.deepcopy(result)
        return result


def bind_armature(armature_obj: bpy.types.Object, bones) -> BoundArmature:
    """Bind ``armature_obj`` for a job moving its bones ``bones``: the rig they copy whole, if any
    (:func:`~.character.game_rig.followed_armature`); no probe yet (:meth:`BoundArmature.control_map`)."""
    followed = followed_armature(armature_obj, bones)
    if followed is None:
        return BoundArmature(armature_obj, tuple(bones), armature_obj)
    return BoundArmature(armature_obj, tuple(bones), followed[0], dict(followed[1]))


def bound_for(bound: BoundArmature | None, armature_obj: bpy.types.Object, bones) -> BoundArmature:
    """``bound`` when it binds ``armature_obj`` for ``bones`` and its armatures still exist, else a new
    :func:`bind_armature` (a write without a job's binding)."""
    if bound is not None and bound.is_valid() and bound.armature == armature_obj and bound.bones == tuple(bones):
        return bound
    return bind_armature(armature_obj, bones)
