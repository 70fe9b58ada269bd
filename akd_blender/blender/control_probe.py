"""Find a rig's controls from Blender's own evaluation: which animatable bones move which deform bones.

Needs: main thread, Object or Pose mode. Probing changes pose channels and switch properties
temporarily and restores them exactly (channel values, not matrices); the rig's constraints,
drivers and custom properties are left as they were.

Terms (all read from the rig, never from bone names):

- *deform bones*: the bones of a motion (``MotionClip.bone_names``), each one's parent its nearest
  ancestor among them.
- *animatable bones* (candidates): bones shown in a visible bone collection (or in none), not
  hidden, with a rotation or location channel unlocked, whose transform no constraint overrides
  (enabled constraints other than Limit Rotation/Location/Scale/Distance with influence > 0), that
  are not in an IK chain and whose channels no driver sets.
- *switch*: a number custom property of a pose bone that a driver reads to set a constraint's
  influence; it is an IK/FK switch when moving the rig's IK targets moves fewer deform bones at one
  end of its range than at the other; that end is its FK value.
- *probe*: a candidate's channels are turned by :data:`PROBE_ANGLE` radians (about its unlocked
  local axes) or moved by :data:`PROBE_SHIFT` of the rig's height, the view layer is updated, and
  every bone's ``pose_bone.matrix`` is read. A deform bone is *moved* when its matrix changes, and
  *carried rigidly* when its new matrix is the control's motion applied to its old one.
- A deform bone's *control* is the candidate that carries it and all its deform children rigidly,
  moving the fewest deform bones (then the deepest in the hierarchy); a deform bone whose control
  another, higher deform bone already claimed *follows* it. The *carrier* (travel) is the
  location-unlocked candidate whose move translates the most deform bones rigidly, the deform root
  among them (then the deepest). IK constraints whose target is a candidate that still moves deform
  bones get that target placed from the chain's tip and their pole target from the chain's root.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np

__all__ = [
    "PROBE_ANGLE",
    "PROBE_SHIFT",
    "ControlMap",
    "Switch",
    "IKGoal",
    "find_controls",
    "pose_matrices",
    "deform_parents",
    "constraint_driven",
    "rig_height",
]

PROBE_ANGLE = 0.3  # radians
PROBE_SHIFT = 0.05  # fraction of the rig's height
_NON_DRIVING = {"LIMIT_ROTATION", "LIMIT_LOCATION", "LIMIT_SCALE", "LIMIT_DISTANCE"}
_CHANNELS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")


@dataclass(frozen=True)
class Switch:
    """An IK/FK switch: ``pose.bones[bone][prop]``, its value now and the value at which FK controls move
    the deform bones."""

    bone: str
    prop: str
    value: float
    fk_value: float


@dataclass(frozen=True)
class IKGoal:
    """An IK constraint's target or pole that is a control: placed each frame as ``deform`` (a deform bone
    of the chain: the tip for a target, the chain's first bone for a pole) times ``offset`` [4,4] (the
    control's rest matrix in that bone's frame, as evaluated when probed)."""

    control: str
    deform: str
    offset: np.ndarray
    kind: str  # "target" or "pole"


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
        followers: deform bone → the deform bone whose control carries it too.
        carrier: the control that carries the travel, or None.
        carrier_root: the deform root that the carrier translates rigidly (its head is put on target).
        goals: IK targets and poles keyed from the chain (:class:`IKGoal`).
        switches: IK/FK switches (:class:`Switch`), keyed at their FK value.
        fixers: deform bone → a second control that turns only that bone (and bones sharing its control)
            rigidly, used to take out what its control cannot (a roll the rig distributes along a limb).
        order: control → evaluation level (a control moved by another comes after it).
        unreached: deform bone → why no control moves it.
        candidates: number of animatable bones probed.
    """

    deform: tuple[str, ...]
    control_of: dict[str, str] = field(default_factory=dict)
    offset: dict[str, np.ndarray] = field(default_factory=dict)
    group: dict[str, list] = field(default_factory=dict)
    free: set[str] = field(default_factory=set)
    driven: dict[str, str] = field(default_factory=dict)
    followers: dict[str, str] = field(default_factory=dict)
    carrier: str | None = None
    carrier_root: str | None = None
    goals: list[IKGoal] = field(default_factory=list)
    switches: list[Switch] = field(default_factory=list)
    fixers: dict[str, str] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    unreached: dict[str, str] = field(default_factory=dict)
    candidates: int = 0

    @property
    def keyed(self) -> list[str]:
        """The controls whose channels get keys, in evaluation order."""
        names = set(self.driven) | {g.control for g in self.goals} | ({self.carrier} if self.carrier else set())
        names |= set(self.fixers.values())
        return sorted(names, key=lambda n: (self.order.get(n, 0), n))


def pose_matrices(armature_obj: bpy.types.Object) -> np.ndarray:
    """[B,4,4] every pose bone's ``matrix`` (armature space), as last evaluated."""
    bones = armature_obj.pose.bones
    buf = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix", buf)
    return buf.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)


def deform_parents(armature_obj: bpy.types.Object, names) -> np.ndarray:
    """int [N]: each of ``names``' parent among them (index), -1 for none: the deform skeleton's parent
    (:func:`~.deform_skeleton.find_deform_skeleton`, walked up to a bone of ``names``) when ``names``
    are bones of it, else the nearest Blender ancestor among ``names``."""
    from .deform_skeleton import find_deform_skeleton

    index = {n: i for i, n in enumerate(names)}
    parents = np.full(len(names), -1, dtype=np.int64)
    skeleton = find_deform_skeleton(armature_obj)
    if set(names) <= set(skeleton.bones):
        position = {n: i for i, n in enumerate(skeleton.bones)}
        for i, name in enumerate(names):
            p = skeleton.parents[position[name]]
            while p >= 0 and skeleton.bones[p] not in index:
                p = skeleton.parents[p]
            parents[i] = -1 if p < 0 else index[skeleton.bones[p]]
        return parents
    for i, name in enumerate(names):
        bone = armature_obj.data.bones[name].parent
        while bone is not None and bone.name not in index:
            bone = bone.parent
        parents[i] = -1 if bone is None else index[bone.name]
    return parents


def driving_constraints(pb) -> list:
    """The enabled constraints of pose bone ``pb`` that override its transform (not limits)."""
    return [c for c in pb.constraints if not c.mute and c.influence > 0.0 and c.type not in _NON_DRIVING]


def ik_chain(pb) -> list:
    """The bones an IK constraint on ``pb`` moves: ``pb`` and its ancestors up to ``chain_count``."""
    out = []
    for con in driving_constraints(pb):
        if con.type != "IK":
            continue
        bone, count = pb, con.chain_count or 10**6
        while bone is not None and count > 0:
            out.append(bone.name)
            bone, count = bone.parent, count - 1
    return out


def constraint_driven(armature_obj: bpy.types.Object, names) -> list[str]:
    """Those of bones ``names`` whose keys Blender overrides: a transform constraint, an IK chain, or a
    driver on a pose channel."""
    pose = armature_obj.pose.bones
    in_chain = {n for pb in pose for n in ik_chain(pb)}
    return [n for n in names if n in in_chain or n in _driven_channels(armature_obj) or driving_constraints(pose[n])]


def _driven_channels(armature_obj) -> set[str]:
    """Pose bones with a driver on a transform channel."""
    out = set()
    if armature_obj.animation_data is not None:
        for fc in armature_obj.animation_data.drivers:
            path = fc.data_path
            if path.startswith('pose.bones["') and path.rsplit(".", 1)[-1] in _CHANNELS:
                out.add(path[len('pose.bones["') :].split('"]', 1)[0])
    return out


def _visible(bone) -> bool:
    if bone.hide:
        return False
    collections = list(bone.collections)
    return not collections or any(getattr(c, "is_visible_effectively", c.is_visible) for c in collections)


def _candidates(armature_obj) -> list[str]:
    """The animatable bones (see the module docstring), Blender order."""
    pose = armature_obj.pose.bones
    in_chain = {name for pb in pose for name in ik_chain(pb)}
    driven_channels = _driven_channels(armature_obj)
    out = []
    for pb in pose:
        if pb.name in in_chain or pb.name in driven_channels or driving_constraints(pb) or not _visible(pb.bone):
            continue
        if all(pb.lock_location) and all(pb.lock_rotation) and pb.rotation_mode != "AXIS_ANGLE":
            continue
        out.append(pb.name)
    return out


def _save(pb) -> tuple:
    return tuple(tuple(getattr(pb, ch)) for ch in _CHANNELS)


def _restore(pb, saved: tuple) -> None:
    for ch, value in zip(_CHANNELS, saved):
        setattr(pb, ch, value)


def _rotation_probe(pb):
    """The basis matrix turned by PROBE_ANGLE about a fixed skew axis with locked axes left out, or None."""
    from mathutils import Matrix, Vector

    axis = Vector([0.0 if lock else w for lock, w in zip(pb.lock_rotation, (0.45, 0.62, 0.64))])
    if pb.rotation_mode == "AXIS_ANGLE":
        axis = Vector((0.45, 0.62, 0.64))
    if axis.length < 1e-6:
        return None
    return pb.matrix_basis @ Matrix.Rotation(PROBE_ANGLE, 4, axis.normalized())


def _shift_probe(pb, shift: float):
    """The basis matrix moved by ``shift`` along a skew direction with locked axes left out, or None."""
    from mathutils import Matrix, Vector

    step = Vector([0.0 if lock else w for lock, w in zip(pb.lock_location, (0.5, 0.6, 0.62))])
    if step.length < 1e-6 or (pb.bone.use_connect and pb.parent is not None):
        return None
    return Matrix.Translation(step.normalized() * shift) @ pb.matrix_basis


def rig_height(armature_obj, names) -> float:
    """Z extent (armature units) of the heads and tails of bones ``names`` at rest (≥ 1e-6)."""
    bones = armature_obj.data.bones
    z = [p[2] for n in names for p in (bones[n].head_local, bones[n].tail_local)]
    return max(float(np.ptp(z)) if z else 1.0, 1e-6)


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
        saved = _save(pb)
        pb.matrix_basis = basis
        bpy.context.view_layer.update()
        after = pose_matrices(self.obj)
        _restore(pb, saved)
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
        return {
            "moved": np.flatnonzero(moved),
            "rigid": np.flatnonzero(rigid),
            "swing": np.flatnonzero(swing),
            "controls": np.flatnonzero(ctrl),
        }

    def finish(self) -> None:
        bpy.context.view_layer.update()


def _switch_props(armature_obj) -> list[tuple[str, str]]:
    """(bone, property) of pose-bone number properties read by drivers of constraint influences."""
    ad = armature_obj.animation_data
    found = []
    if ad is None:
        return found
    pose = armature_obj.pose.bones
    for fc in ad.drivers:
        if not (
            fc.data_path.startswith("pose.bones[") and ".constraints[" in fc.data_path and fc.data_path.endswith(".influence")
        ):
            continue
        for var in fc.driver.variables:
            for target in var.targets:
                path = target.data_path or ""
                if target.id != armature_obj or not path.startswith('pose.bones["') or '"]["' not in path:
                    continue
                bone, prop = path[len('pose.bones["') : -2].split('"]["', 1)
                if bone in pose and isinstance(pose[bone].get(prop), (int, float)) and (bone, prop) not in found:
                    found.append((bone, prop))
    return found


def _ik_targets(armature_obj) -> list[tuple]:
    """(owner pose bone, IK constraint) of every enabled IK constraint with a bone target in this rig."""
    return [
        (pb, con)
        for pb in armature_obj.pose.bones
        for con in driving_constraints(pb)
        if con.type == "IK" and con.target == armature_obj and con.subtarget in armature_obj.pose.bones
    ]


def _ik_handles(armature_obj, candidates: set[str]) -> list:
    """For every IK constraint's target: the target itself when it is a candidate, else its nearest
    candidate ancestor (the control that moves a mechanism target); pose bones, no repeats."""
    out = []
    for _, con in _ik_targets(armature_obj):
        bone = armature_obj.pose.bones[con.subtarget]
        while bone is not None and bone.name not in candidates:
            bone = bone.parent
        if bone is not None and bone not in out:
            out.append(bone)
    return out


def _find_switches(armature_obj, deform_idx: np.ndarray, height: float, candidates: set[str]) -> list[Switch]:
    """IK/FK switches and their FK values (see the module docstring); leaves them at their FK value."""
    props = _switch_props(armature_obj)
    handles = _ik_handles(armature_obj, candidates)
    if not props or not handles:
        return []
    from mathutils import Matrix, Vector

    step = Vector((0.3, -0.4, 0.5)).normalized() * PROBE_SHIFT * height
    turn = Matrix.Rotation(PROBE_ANGLE, 4, Vector((0.45, 0.62, 0.64)).normalized())

    def moved_by_handles() -> int:
        bpy.context.view_layer.update()
        base = pose_matrices(armature_obj)[deform_idx]
        saved = [_save(h) for h in handles]
        for h in handles:
            h.matrix_basis = Matrix.Translation(step) @ h.matrix_basis @ turn
        bpy.context.view_layer.update()
        after = pose_matrices(armature_obj)[deform_idx]
        for h, s in zip(handles, saved):
            _restore(h, s)
        return int((np.abs(after - base).max(axis=(1, 2)) > 1e-5 * max(height, 1.0)).sum())

    switches = []
    for bone, prop in props:
        pb = armature_obj.pose.bones[bone]
        value = pb[prop]
        ui = pb.id_properties_ui(prop).as_dict()
        low, high = ui.get("min", 0.0), ui.get("max", 1.0)
        counts = []
        for v in (low, high):
            pb[prop] = type(value)(v)
            counts.append(moved_by_handles())
        pb[prop] = value
        if counts[0] != counts[1]:
            switches.append(Switch(bone, prop, float(value), float(low if counts[0] < counts[1] else high)))
    for s in switches:
        pb = armature_obj.pose.bones[s.bone]
        pb[s.prop] = type(pb[s.prop])(s.fk_value)
    bpy.context.view_layer.update()
    return switches


def find_controls(armature_obj: bpy.types.Object, deform: tuple[str, ...]) -> ControlMap:
    """Probe ``armature_obj`` (see the module docstring) for the controls of the deform bones ``deform``.

    Leaves the IK/FK switches found at their FK value (the caller keys them); every pose channel as it was.
    """
    bpy.context.view_layer.update()
    pose = armature_obj.pose.bones
    index = {pb.name: i for i, pb in enumerate(pose)}
    deform_idx = np.array([index[n] for n in deform], dtype=np.int64)
    parents = deform_parents(armature_obj, deform)
    height = rig_height(armature_obj, deform)
    result = ControlMap(deform=tuple(deform))
    candidates = _candidates(armature_obj)
    result.switches = _find_switches(armature_obj, deform_idx, height, set(candidates))
    result.candidates = len(candidates)
    prober = _Prober(armature_obj, deform_idx, candidates, height)
    rot, shift = {}, {}
    for name in candidates:
        pb = pose[name]
        basis = _rotation_probe(pb)
        if basis is not None:
            rot[name] = prober.run(name, basis)
        basis = _shift_probe(pb, PROBE_SHIFT * height)
        if basis is not None:
            shift[name] = prober.run(name, basis)
    prober.finish()
    base = prober.base
    depth = {n: len(pose[n].parent_recursive) for n in candidates}
    children = [np.flatnonzero(parents == i) for i in range(len(deform))]

    # Each deform bone's control (see the module docstring); a control that moves a deform ancestor of
    # the bone is taken only when no other carries it.
    ancestors = []
    for i in range(len(deform)):
        up, p = set(), parents[i]
        while p >= 0:
            up.add(int(p))
            p = parents[p]
        ancestors.append(up)
    for i in range(len(deform)):
        ranked = []
        for name, probe in rot.items():
            swing = set(probe["swing"].tolist())
            if i in swing:
                moved = set(probe["moved"].tolist())
                covers = set(children[i].tolist()) <= swing
                key = (bool(moved & ancestors[i]), not covers, len(moved), i not in probe["rigid"], -depth[name])
                ranked.append((key, name))
        if not ranked:
            continue
        ranked.sort()
        free = [r for r in ranked if not r[0][0] and r[1] not in result.driven]
        name = (free or ranked)[0][1]
        result.control_of[deform[i]] = name
        offset = np.linalg.inv(base[index[name]]) @ base[deform_idx[i]]
        if name in result.driven:
            result.followers[deform[i]] = result.driven[name]
        else:
            result.driven[name] = deform[i]
            result.offset[name] = offset
        result.group.setdefault(name, []).append((deform[i], offset))

    # Fixers: a control that turns only the bones sharing a deform bone's control, that bone rigidly.
    groups: dict[str, set[int]] = {}
    for i, name in enumerate(deform):
        if name in result.control_of:
            groups.setdefault(result.control_of[name], set()).add(i)
    for i, name in enumerate(deform):
        own = result.control_of.get(name)
        if own is None:
            continue
        fits = [
            (len(probe["moved"]), c)
            for c, probe in rot.items()
            if c != own and c not in result.driven and i in probe["rigid"] and set(probe["moved"].tolist()) <= groups[own]
        ]
        if fits:
            result.fixers[name] = min(fits)[1]

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

    result.free = {n for n in candidates if pose[n].parent is None}
    result.free |= {b for _, con in _ik_targets(armature_obj) for b in (con.subtarget, con.pole_subtarget) if b in pose}

    # IK targets and poles that still move deform bones.
    deform_pos = {n: i for i, n in enumerate(deform)}
    for owner, con in _ik_targets(armature_obj):
        chain = [n for n in ik_chain(owner) if n in deform_pos]
        for kind, bone_name, anchor in (("target", con.subtarget, chain[:1]), ("pole", con.pole_subtarget, chain[-1:])):
            probe = shift.get(bone_name) or rot.get(bone_name)
            if not anchor or probe is None or not len(probe["moved"]) or bone_name in result.driven:
                continue
            if any(g.control == bone_name for g in result.goals):
                continue
            offset = np.linalg.inv(base[index[anchor[0]]]) @ base[index[bone_name]]
            result.goals.append(IKGoal(bone_name, anchor[0], offset, kind))
            for n in chain:
                result.control_of.setdefault(n, bone_name)

    # Evaluation order: a control moved by another keyed control comes after it.
    keyed = result.keyed
    edges = []
    for a in keyed:
        for probe in (rot.get(a), shift.get(a)):
            if probe is None:
                continue
            moved = {candidates[j] for j in probe["controls"]}
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
                "no animatable bone moves it"
                if not moved_by
                else f"no animatable bone carries it rigidly (moved by {', '.join(sorted(moved_by)[:3])})"
            )
    return result
