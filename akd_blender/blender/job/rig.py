"""The rig a distillation job runs on, as the CLI and the panel read it.

:func:`job_rig`: the mirror of the armature (:func:`~.character.extract.rig_from_armature`) standing on the
job's floor; on a control rig (mirrored bones that constraints or drivers move) also the bones its
controls turn only together with their mirrored parent (:func:`tied_bones`), so that the motion
library bends a limb where the rig can bend it (a Rigify limb's upper arm is two deform segments
that one FK control turns as one). :func:`bind_job` also gives the armature bound for the job
(:class:`~.controls.bound.BoundArmature`: the rig a game rig copies, the control probe), which the write
(:mod:`.job.apply`) takes so that the rig is probed once per job.
"""

from __future__ import annotations

from dataclasses import replace

import bpy

from ...core.character.rig import RigAsset
from ..controls.bound import BoundArmature, bind_armature, bound_for
from .settings import on_floor

__all__ = ["bind_job", "job_rig", "tied_bones"]


def bind_job(armature_obj: bpy.types.Object, ground_height: float | None) -> tuple[RigAsset, BoundArmature]:
    """The job's rig and armature: the mirror of ``armature_obj`` on the floor at world Z ``ground_height``
    (None: the mirror's own), with ``tied_bones`` found where it is a control rig, and ``armature_obj``
    bound for its bones (:func:`~.controls.bound.bind_armature`; a control rig's probe held in it, for the
    write). Main thread; Object or Pose mode."""
    from ..character.extract import rig_from_armature

    rig = rig_from_armature(armature_obj)
    bound = bind_armature(armature_obj, rig.bone_names)
    if rig.driven_bones:
        rig = replace(rig, tied_bones=tied_bones(armature_obj, rig, bound))
    return on_floor(rig, ground_height), bound


def job_rig(armature_obj: bpy.types.Object, ground_height: float | None) -> RigAsset:
    """The rig of :func:`bind_job` (the armature's binding left out)."""
    return bind_job(armature_obj, ground_height)[0]


def tied_bones(armature_obj: bpy.types.Object, rig: RigAsset, bound: BoundArmature | None = None) -> tuple[str, ...]:
    """The mirrored bones of ``rig`` that ``armature_obj``'s controls move only as one piece with their
    mirrored parent, found by probing the rig in Blender (:func:`~.controls.probe.find_controls`): a
    bone is tied when the control that carries it turns (an FK control, not an IK target, pole or
    parentless control, which bend a chain) and was chosen for its parent, or for the bone its tied
    parent follows, or for a sibling (one control turning both hip bones of Rigify's horse with the
    spine: neither can swing a leg alone). An IK target, pole or parentless control ties a bone only to
    a lead it carries rigidly with it (Rigify's head control turns the head and skull bones as one; an
    IK target that bends a chain ties nothing). A game rig whose bones copy another armature's
    (:func:`~.character.game_rig.followed_armature`) is read through that armature's controls. ``()`` when no
    control moves the mirrored bones. ``bound``: the job's binding of ``armature_obj`` for ``rig``'s bones
    (:func:`~.controls.bound.bind_armature`, made here when None), which keeps the probe for the write."""
    from ...core.errors import InputError
    from ..character.game_rig import source_layout
    from ..controls.rig import set_switches

    bound = bound_for(bound, armature_obj, rig.bone_names)
    followed = bound.followed  # a game rig: probe the rig it copies
    probed = bound.keyed
    names = [followed[1][n] for n in rig.bone_names] if followed is not None else list(rig.bone_names)
    try:
        if followed is None:
            cmap = bound.control_map(probed, tuple(names))
        else:  # probed in the rig's own bone order, over the game rig's hierarchy
            _, probe_names, probe_parents = source_layout(probed, names, rig.parents)
            cmap = bound.control_map(probed, probe_names, probe_parents)
    except InputError:
        return ()
    if cmap.switches:  # the probe leaves IK/FK switches at FK: reading the rig changes nothing
        set_switches(probed, cmap.switches, fk=False)
    placed = cmap.free | {goal.control for goal in cmap.goals}  # IK targets, poles, parentless controls
    tied: set[str] = set()  # probed names
    index = {name: b for b, name in enumerate(names)}
    for b, name in enumerate(names):  # parents precede children
        p = int(rig.parents[b])
        lead = cmap.followers.get(name)
        control = cmap.control_of.get(name)
        if p < 0 or lead is None or (control in placed and not {name, lead} <= cmap.carried.get(control, set())):
            continue
        parent = names[p]
        if lead == parent or (parent in tied and cmap.followers.get(parent) == lead):
            tied.add(name)
        elif rig.parents[index[lead]] == p:  # one control turns two siblings (both hips): body, not limb
            tied |= {name, lead}
    return tuple(n for n, probed_name in zip(rig.bone_names, names) if probed_name in tied)
