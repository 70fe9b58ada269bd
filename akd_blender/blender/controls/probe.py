"""Find a rig's controls from Blender's own evaluation: which animatable bones move which deform bones.

Needs: main thread, Object or Pose mode. Probing changes pose channels temporarily and restores
them exactly (channel values, not matrices); IK/FK switches are left at their FK value
(:func:`~.controls.rig.find_switches`); constraints, drivers and other custom properties are not touched.

Terms (all read from the rig, never from bone names; :mod:`.controls.rig` defines animatable bones
and switches):

- *deform bones*: the bones of a motion (``MotionClip.bone_names``) in the deform skeleton's
  hierarchy (:func:`~.controls.rig.deform_parents`).
- *probe*: an animatable bone's channels are turned by :data:`PROBE_ANGLE` radians (about its
  unlocked local axes) or moved by :data:`PROBE_SHIFT` of the rig's height, the view layer is
  updated, and every bone's ``pose_bone.matrix`` is read. A deform bone is *moved* when its matrix
  changes, *carried rigidly* when its new matrix is the probe's motion applied to its old one, and
  *swung* when its head and tail are (its roll may differ: a rig that spreads a limb's twist).
- The *carrier* (travel): the location-unlocked animatable bone whose move translates the most deform
  bones rigidly, a deform root among them (then the deepest).
- A deform bone's *control*: among the animatable bones that swing it (its tail moving), those that
  move none of its deform ancestors first, then those that swing all its deform children, then the
  fewest deform bones moved, then rigid before swung, then the deepest in the hierarchy. The carrier
  and the bones whose probe moves it come last (they turn a bone only when nothing else does). One
  already chosen by a higher deform bone is passed over for a free one of the first kind; failing
  that (a reverse chain, as Rigify's spine below its pivot) for the free one moving the fewest
  deform bones, all within the parent's subtree; else it is shared (the bone *follows* the higher one).
- *Near* bones of a deform bone: itself, its deform parent and the bones sharing their controls. A
  *handle* is an animatable bone (not a control) whose move carries the deform bone's head along and
  moves only near bones or bones hanging from the deform bone; a *fixer* one whose turn carries it rigidly and moves only near bones
  (Rigify's tweaks): handles put heads on target, fixers take out the roll.
- IK constraints whose target or pole is an animatable bone that still moves deform bones (no
  switch turned them off) get it placed from the chain's tip (target) or first bone (pole). Where such
  a chain has no pole target, Blender's IK solver starts from the chain's own rotations and bends the
  way they do: its visible, rotatable bones are *bend hints*, keyed with the motion's rotations.
- *Order*: a keyed control that another keyed control's probe moved is posed after it.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..character.constraints import ik_chain
from .map import ControlMap, IKGoal, bend_frame, bend_joint
from .rig import (
    PROBE_ANGLE,
    PROBE_SHIFT,
    Switch,
    candidates,
    deform_parents,
    find_switches,
    ik_targets,
    is_bone_shown,
    pose_matrices,
    probe_shift_basis,
    probe_turn_basis,
    restore_pose_bone,
    rig_height,
    save_pose_bone,
)

__all__ = [
    "PROBE_ANGLE",
    "PROBE_SHIFT",
    "ControlMap",
    "Switch",
    "IKGoal",
    "find_controls",
    "pose_matrices",
    "deform_parents",
    "rig_height",
]


class _Prober:
    """Runs probes against a base state and classifies what moved."""

    def __init__(self, armature_obj, deform_idx: np.ndarray, candidates: list[str], height: float):
        self.obj, self.deform_idx, self.height = armature_obj, deform_idx, height
        self.index = {pb.name: i for i, pb in enumerate(armature_obj.pose.bones)}
        self.cand_idx = np.array([self.index[n] for n in candidates], dtype=np.int64)
        self.lengths = np.array([armature_obj.data.bones[int(i)].length for i in deform_idx])
        bpy.context.view_layer.update()
        self.base = pose_matrices(armature_obj)
        self._base_tails = self.lengths[:, None] * self.base[deform_idx, :3, 1] + self.base[deform_idx, :3, 3]

    def _moved(self, after: np.ndarray, idx: np.ndarray) -> np.ndarray:
        d = after[idx] - self.base[idx]
        return (np.abs(d[:, :3, :3]).max(axis=(1, 2)) > 1e-5) | (np.abs(d[:, :3, 3]).max(axis=1) > 1e-5 * self.height)

    def run(self, name: str, basis) -> dict:
        """Probe control ``name`` at ``basis`` (a 4×4 matrix_basis): deform (indices into the deform list)
        moved and carried rigidly, candidates moved (positions in the candidate list)."""
        pb = self.obj.pose.bones[name]
        saved = save_pose_bone(pb)
        pb.matrix_basis = basis
        bpy.context.view_layer.update()
        after = pose_matrices(self.obj)
        restore_pose_bone(pb, saved)
        c = self.index[name]
        motion = after[c] @ np.linalg.inv(self.base[c])
        moved = self._moved(after, self.deform_idx)
        carried = np.einsum("ij,njk->nik", motion, self.base[self.deform_idx])
        err = carried - after[self.deform_idx]
        head_ok = np.abs(err[:, :3, 3]).max(axis=1) < 1e-4 * self.height
        rigid = moved & head_ok & (np.abs(err[:, :3, :3]).max(axis=(1, 2)) < 1e-4)
        tails = self.lengths[:, None] * after[self.deform_idx, :3, 1]
        tail_moved = np.abs(tails + after[self.deform_idx, :3, 3] - self._base_tails).max(axis=1) > 1e-3 * self.height
        swing = moved & head_ok & tail_moved
        swing &= np.abs(tails - self.lengths[:, None] * carried[:, :3, 1]).max(axis=1) < 1e-4 * self.height
        ctrl = self._moved(after, self.cand_idx)
        step = after[c, :3, 3] - self.base[c, :3, 3]
        head_steps = after[self.deform_idx, :3, 3] - self.base[self.deform_idx, :3, 3]
        heads = (np.linalg.norm(head_steps - step, axis=1) < 1e-4 * self.height) & (np.linalg.norm(step) > 1e-3 * self.height)
        return {
            "moved": np.flatnonzero(moved),
            "rigid": np.flatnonzero(rigid),
            "swing": np.flatnonzero(swing),
            "heads": np.flatnonzero(heads),
            "controls": np.flatnonzero(ctrl),
        }

    def finish(self) -> None:
        bpy.context.view_layer.update()


def _moves_deform(name: str, shift: dict, rot: dict) -> bool:
    """Whether probing animatable bone ``name`` (its shift, else its turn) moved any deform bone."""
    probe = shift.get(name) or rot.get(name)
    return probe is not None and len(probe["moved"]) > 0


def _goal_chains(armature_obj, deform: tuple[str, ...], shift: dict, rot: dict) -> dict[int, str]:
    """Bones in IK chains whose target is an animatable bone that moves deform bones when probed (the IK is
    live: Blender solves these bones from the target, not from their keys): index into ``deform`` → why
    they are not keyed themselves, in words."""
    position = {n: i for i, n in enumerate(deform)}
    out = {}
    for owner, con in ik_targets(armature_obj):
        if _moves_deform(con.subtarget, shift, rot):
            bend = f"pole {con.pole_subtarget}" if con.pole_subtarget else "no pole target: the solver picks the bend"
            why = f"Blender's IK solves it from {con.subtarget} ({bend})"
            out |= {position[n]: why for n in ik_chain(owner) if n in position}
    return out


def _pole_plane(kind: str, pole: str, chain: list[str], base: np.ndarray, index: dict, pose) -> dict:
    """For a pole whose chain (deform bones, tip first) bends at rest: :class:`IKGoal`'s ``chain``,
    ``tip_length``, ``bend`` and ``plane`` (the pole's head in the chain's rest bend frame); else nothing."""
    if kind != "pole" or len(chain) < 2:
        return {}
    root_first = chain[::-1]
    matrices = [base[index[n]] for n in root_first]
    tip_length = float(pose[root_first[-1]].bone.length)
    bend = bend_joint(matrices, tip_length)
    frame = bend_frame(matrices, tip_length, bend)
    if frame is None:
        return {}
    axes, origin = frame
    plane = axes.T @ (base[index[pole]][:3, 3] - origin)
    return {"chain": tuple(root_first), "tip_length": tip_length, "bend": bend, "plane": plane}


_AIMING = {"DAMPED_TRACK", "TRACK_TO", "LOCKED_TRACK", "STRETCH_TO"}
"""Constraints that aim a bone at a target."""


def aimed_bones(armature_obj: bpy.types.Object, deform: tuple[str, ...]) -> dict[str, str]:
    """Deform bones the rig aims at another of ``deform`` (an enabled Damped Track, Track To, Locked Track or
    Stretch To on this armature, influence over 0): bone → ``"its <type> to <bone>"``. A mechanical part (a
    piston pointing at the limb below it) follows the bones it points at; Rigify's deform bones aim at
    helper bones only."""
    kept = set(deform)
    aimed = {}
    for name in deform:
        for con in armature_obj.pose.bones[name].constraints:
            if (
                con.type in _AIMING
                and not con.mute
                and con.influence > 0
                and con.target == armature_obj
                and con.subtarget in kept
            ):
                aimed[name] = f"its {con.type.replace('_', ' ').title()} to {con.subtarget}"
                break
    return aimed


def find_controls(armature_obj: bpy.types.Object, deform: tuple[str, ...], parents: tuple[int, ...] | None = None) -> ControlMap:
    """Probe ``armature_obj`` (see the module docstring) for the controls of the deform bones ``deform``.

    ``parents``: each deform bone's parent among ``deform`` (index, -1 for none) when the hierarchy is not
    the armature's own deform skeleton (:func:`~.controls.rig.deform_parents`): a game rig's, whose meshes
    this armature does not deform itself. Leaves the IK/FK switches found at their FK value (the caller keys
    them); every pose channel as it was. Every call probes: a job probes once through its bound armature
    (:meth:`~.controls.bound.BoundArmature.control_map`).
    """
    bpy.context.view_layer.update()
    pose = armature_obj.pose.bones
    index = {pb.name: i for i, pb in enumerate(pose)}
    deform_idx = np.array([index[n] for n in deform], dtype=np.int64)
    parents = deform_parents(armature_obj, deform) if parents is None else np.asarray(parents, dtype=np.int64)
    height = rig_height(armature_obj, deform)
    result = ControlMap(deform=tuple(deform))
    animatable = candidates(armature_obj)
    result.switches = find_switches(armature_obj, deform_idx, height, set(animatable))
    result.candidates = len(animatable)
    prober = _Prober(armature_obj, deform_idx, animatable, height)
    rot, shift = {}, {}
    for name in animatable:
        pb = pose[name]
        basis = probe_turn_basis(pb)
        if basis is not None:
            rot[name] = prober.run(name, basis)
        basis = probe_shift_basis(pb, PROBE_SHIFT * height)
        if basis is not None:
            shift[name] = prober.run(name, basis)
    prober.finish()
    base = prober.base
    depth = {n: len(pose[n].parent_recursive) for n in animatable}
    children = [np.flatnonzero(parents == i) for i in range(len(deform))]

    # The carrier: translates the most deform bones rigidly, a deform root among them.
    roots = set(np.flatnonzero(parents < 0).tolist())
    best = None
    for name, probe in shift.items():
        rigid = set(probe["rigid"].tolist())
        if roots & rigid:
            key = (-len(rigid), -depth[name])
            best = min(best or (key, name), (key, name))
    if best is not None:
        result.carrier = best[1]
        result.carrier_root = deform[min(roots & set(shift[best[1]]["rigid"].tolist()))]

    # Each deform bone's control (see the module docstring); a control that moves a deform ancestor of
    # the bone is taken only when no other carries it.
    ancestors = []
    for i in range(len(deform)):
        up, p = set(), parents[i]
        while p >= 0:
            up.add(int(p))
            p = parents[p]
        ancestors.append(up)
    subtree = [set() for _ in deform]  # each deform bone and its deform descendants
    for i in range(len(deform)):
        subtree[i].add(i)
        for a in ancestors[i]:
            subtree[a].add(i)
    carrier_pos = animatable.index(result.carrier) if result.carrier else -1
    goal_chains = _goal_chains(armature_obj, deform, shift, rot)
    result.aimed = aimed_bones(armature_obj, deform)
    for i in range(len(deform)):
        if deform[i] in result.aimed:
            continue
        ranked, behind = [], []
        for name, probe in rot.items():
            swing = set(probe["swing"].tolist())
            if i in swing:
                moved = set(probe["moved"].tolist())
                covers = set(children[i].tolist()) <= swing
                key = (bool(moved & ancestors[i]), not covers, len(moved), i not in probe["rigid"], -depth[name])
                # the carrier and the controls that move it turn a deform bone only when nothing else does
                travels = name == result.carrier or carrier_pos in probe["controls"]
                (behind if travels else ranked).append((key, name, moved))
        ranked = sorted(ranked) or sorted(behind)
        if not ranked:
            continue
        free = [r for r in ranked if not r[0][0] and r[1] not in result.driven]
        if not free and i in goal_chains:  # its IK goal places it (below), not a control carrying its ancestors
            continue
        if not free and parents[i] >= 0:  # a reverse chain: the most local free control in the parent's subtree
            local = subtree[int(parents[i])]
            free = sorted(((len(m), k[3], k[4]), n, m) for k, n, m in ranked if n not in result.driven and m <= local)
        name = (free or ranked)[0][1]
        result.control_of[deform[i]] = name
        offset = np.linalg.inv(base[index[name]]) @ base[deform_idx[i]]
        if name in result.driven:
            result.followers[deform[i]] = result.driven[name]
        else:
            result.driven[name] = deform[i]
            result.offset[name] = offset
        result.group.setdefault(name, []).append((deform[i], offset))
        result.carried.setdefault(name, frozenset(deform[j] for j in rot[name]["rigid"]))

    # Handles: a location-unlocked control that carries a deform bone's head along and moves no deform
    # bones beyond it, its deform parent, its deform subtree and the bones sharing the controls of its
    # parent and children (Rigify's tweaks; the shark's spine tweak carries its top fin along).
    groups: dict[str, set[int]] = {}
    for i, name in enumerate(deform):
        if name in result.control_of:
            groups.setdefault(result.control_of[name], set()).add(i)
    near_of = []
    for i in range(len(deform)):
        near = {i} | ({int(parents[i])} if parents[i] >= 0 else set()) | set(children[i].tolist())
        for j in list(near):
            near |= groups.get(result.control_of.get(deform[j]), set())
        near_of.append(near)
    for i, name in enumerate(deform):
        near = near_of[i] | subtree[i]  # a head carries the bones hanging from it
        fits = [
            (len(probe["moved"]), c)
            for c, probe in shift.items()
            if c not in result.driven and c != result.carrier and i in probe["heads"] and set(probe["moved"].tolist()) <= near
        ]
        if fits:
            result.handles[name] = min(fits)[1]

    # Fixers: a control that turns a deform bone rigidly and moves only bones near it (as for handles).
    for i, name in enumerate(deform):
        if name not in result.control_of:
            continue
        fits = [
            (len(probe["moved"]), c)
            for c, probe in rot.items()
            if c not in result.driven
            and c != result.carrier
            and i in probe["rigid"]
            and set(probe["moved"].tolist()) <= near_of[i]
        ]
        if fits:
            result.fixers[name] = min(fits)[1]
            result.fixer_reach[result.fixers[name]] = rot[result.fixers[name]]["moved"]

    result.free = {n for n in animatable if pose[n].parent is None}
    result.free |= {b for _, con in ik_targets(armature_obj) for b in (con.subtarget, con.pole_subtarget) if b in pose}

    # IK targets and poles that still move deform bones.
    deform_pos = {n: i for i, n in enumerate(deform)}
    for owner, con in ik_targets(armature_obj):
        chain = [n for n in ik_chain(owner) if n in deform_pos]
        for kind, bone_name, anchor in (("target", con.subtarget, chain[:1]), ("pole", con.pole_subtarget, chain[-1:])):
            if not anchor or not _moves_deform(bone_name, shift, rot) or bone_name in result.driven:
                continue
            if any(g.control == bone_name for g in result.goals):
                continue
            offset = np.linalg.inv(base[index[anchor[0]]]) @ base[index[bone_name]]
            result.goals.append(
                IKGoal(bone_name, anchor[0], offset, kind, **_pole_plane(kind, bone_name, chain, base, index, pose))
            )
            for n in chain:
                result.control_of.setdefault(n, bone_name)
    for owner, con in ik_targets(armature_obj):  # live chains with no pole: the solver bends them from their own rotations
        if con.pole_subtarget or not _moves_deform(con.subtarget, shift, rot):
            continue
        hints = [n for n in reversed(ik_chain(owner)) if n in deform_pos and is_bone_shown(pose[n].bone)]
        result.bend_hints += tuple(n for n in hints if n not in result.bend_hints and not all(pose[n].lock_rotation))

    # Evaluation order: a control moved by another keyed control comes after it.
    keyed = result.keyed
    edges = []
    for a in keyed:
        for probe in (rot.get(a), shift.get(a)):
            if probe is None:
                continue
            moved = {animatable[j] for j in probe["controls"]}
            edges += [(a, b) for b in keyed if b != a and b in moved]
    level = dict.fromkeys(keyed, 0)
    for _ in range(len(keyed)):
        changed = False
        for a, b in edges:
            if level[b] < level[a] + 1 <= len(keyed):
                level[b], changed = level[a] + 1, True
        if not changed:
            break
    result.order = level
    for i, name in enumerate(deform):
        if name not in result.control_of:
            moved_by = [n for n, p in rot.items() if i in p["moved"]]
            result.unreached[name] = (
                goal_chains[i]
                if i in goal_chains
                else "no animatable bone moves it"
                if not moved_by
                else f"no animatable bone carries it rigidly (moved by {', '.join(sorted(moved_by)[:3])})"
            )
    return result
