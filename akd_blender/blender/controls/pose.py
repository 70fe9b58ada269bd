"""Pose a rig's controls frame by frame so that its deform bones meet their targets, through Blender itself.

Needs: main thread, Object or Pose mode. :func:`pose_frames` takes the controls found by
:func:`~.controls.probe.find_controls` and the deform bones' armature-space targets [F,J,4,4]
(:func:`~.keys.on_controls.deform_targets`) and, per frame, level by level (``pose_bone.matrix`` set, the view layer
updated before the next level, so constraints between controls are Blender's own):

- a control is turned (about its head; IK targets, poles and parentless controls moved too) to the
  least-squares fit of the deform bones it carries (:func:`_group_fit`); one that its own constraints turn
  off that rotation is set again to meet it (:func:`_meet_own_constraints`);
- the bones of IK chains without a pole target get the motion's rotations (the solver's starting bend,
  :func:`_hint_bends`);
- the carrier (travel) is shifted until the deform root it translates is on target;
- an IK target / pole that still moves deform bones is placed from the chain's tip / first bone (a pole
  whose chain bends at rest: from the chain's bend, :meth:`~.controls.map.IKGoal.pole_position`);
- handles move deform heads onto target, fixers turn out the roll (a limb's distributed twist), a fixer's
  turn kept only where it brings the bones it moves closer;
- while bones are off target and getting closer, passes repeat with each control fitted through
  its bones' evaluated response.
"""

from __future__ import annotations

import bpy
import numpy as np

from .check import rotation_angles, unit_rows
from .map import ControlMap
from .rig import pose_matrices, restore_pose_bone, save_pose_bone

__all__ = ["pose_frames"]


def _set_pose(pb, matrix: np.ndarray, keep_location: bool) -> None:
    """Set ``pb.matrix`` (armature space) keeping its scale, and its location where locked or ``keep_location``."""
    from mathutils import Matrix

    location, scale = tuple(pb.location), tuple(pb.scale)
    pb.matrix = Matrix(matrix.tolist())
    pb.scale = scale
    if keep_location:
        pb.location = location
    else:
        pb.location = [old if lock else new for old, new, lock in zip(location, pb.location, pb.lock_location)]


def pose_frames(armature_obj, cmap: ControlMap, targets: np.ndarray, height: float) -> tuple[np.ndarray, np.ndarray]:
    """Pose the keyed controls at every frame; their ``matrix_basis`` quaternions [F,C,4] and locations [F,C,3].

    Per frame: level by level, each control fitted to its deform bones through its probed offsets, the
    carrier shifted, handles and fixers applied; then, while some deform bone (not one the rig aims,
    ``cmap.aimed``) is more than
    :data:`_REFINE_POSITION` heights or :data:`_REFINE_ROTATION` rad off (up to :data:`_REFINE_PASSES`
    times, and while the worst tenth of the bones keeps getting closer by 20 % a pass), the same again
    with each control fitted through its deform bones' evaluated response. A pass that leaves the
    worst tenth farther off than the best pass so far is undone (the best pose is kept)."""
    pose = armature_obj.pose.bones
    keyed = cmap.keyed
    index = {pb.name: i for i, pb in enumerate(pose)}
    deform_idx = np.array([index[n] for n in cmap.deform])
    held = np.array([n not in cmap.aimed for n in cmap.deform], dtype=bool)  # the rig aims the others itself
    quats = np.empty((len(targets), len(keyed), 4))
    locs = np.empty((len(targets), len(keyed), 3))
    for f, frame_targets in enumerate(targets):
        best, best_pose = np.inf, {}
        for refine in range(_REFINE_PASSES + 1):
            _pose_pass(armature_obj, cmap, frame_targets, deform_idx, height, refine > 0)
            off = _offness(armature_obj, deform_idx[held], frame_targets[held], height)
            worst = float(np.sort(off)[-max(1, len(off) // 10) :].sum())  # the worst tenth of the bones
            if worst >= best:  # this pass moved the bones away: back to the best pose so far
                for name, saved in best_pose.items():
                    restore_pose_bone(pose[name], saved)
                bpy.context.view_layer.update()
                break
            closing_in = worst <= 0.8 * best
            best, best_pose = worst, {name: save_pose_bone(pose[name]) for name in keyed}
            if off.max() <= 1.0 or not closing_in:  # on target, or no longer getting closer
                break
        for c, name in enumerate(keyed):
            quats[f, c] = tuple(pose[name].matrix_basis.to_quaternion())
            locs[f, c] = tuple(pose[name].location)
    return quats, locs


_REFINE_PASSES = 5
_REFINE_POSITION = 1e-4  # heights (armature units over the height)
_REFINE_ROTATION = 1e-3  # radians


def _offness(armature_obj, deform_idx: np.ndarray, frame_targets: np.ndarray, height: float) -> np.ndarray:
    """[J] how far each deform bone (pose-bone indices ``deform_idx``) is from its target as Blender
    evaluates it now: the larger of its head's distance in :data:`_REFINE_POSITION` heights and its
    rotation's angle in :data:`_REFINE_ROTATION` radians."""
    got = pose_matrices(armature_obj)[deform_idx]
    far = np.linalg.norm(got[:, :3, 3] - frame_targets[:, :3, 3], axis=-1) / height / _REFINE_POSITION
    return np.maximum(far, rotation_angles(got[:, :3, :3], frame_targets[:, :3, :3]) / _REFINE_ROTATION)


def _pose_pass(
    armature_obj, cmap: ControlMap, frame_targets: np.ndarray, deform_idx: np.ndarray, height: float, refine: bool
) -> None:
    """One pass over the keyed controls for one frame (see :func:`_pose_frames`); ``refine``: fit each
    control through its deform bones' evaluated response instead of its probed offsets."""
    pose = armature_obj.pose.bones
    keyed = cmap.keyed
    goals = {g.control: g for g in cmap.goals}
    deform_pos = {n: i for i, n in enumerate(cmap.deform)}
    if cmap.carrier not in cmap.driven:  # a carrier that turns nothing itself: the bones fit about heads on target
        _shift_carrier(armature_obj, cmap, frame_targets, deform_pos, height)
    for level in sorted({cmap.order.get(c, 0) for c in keyed}):
        wanted: dict[str, tuple[np.ndarray, bool]] = {}
        for name in (c for c in keyed if cmap.order.get(c, 0) == level):
            if name == cmap.carrier and name in cmap.driven and not refine:
                wanted[name] = (frame_targets[deform_pos[cmap.driven[name]]] @ np.linalg.inv(cmap.offset[name]), False)
            elif name in cmap.driven:
                free = name in cmap.free or name == cmap.carrier
                current = np.array(pose[name].matrix)
                group = cmap.group[name]
                if refine:  # the response as Blender evaluates it now
                    inverse = np.linalg.inv(current)
                    group = [(bone, inverse @ _rigid(np.array(pose[bone].matrix))) for bone, _ in group]
                wanted[name] = (_group_fit(current, group, frame_targets, deform_pos, armature_obj, free), not free)
            elif name in goals and not refine:
                goal = goals[name]
                matrix = frame_targets[deform_pos[goal.deform]] @ goal.offset
                pole = goal.pole_position({n: frame_targets[deform_pos[n]] for n in goal.chain})
                if pole is not None:
                    matrix[:3, 3] = pole
                wanted[name] = (matrix, False)
        for name, (matrix, keep_location) in wanted.items():
            _set_pose(pose[name], matrix, keep_location)
        bpy.context.view_layer.update()
        _meet_own_constraints(armature_obj, wanted)
    if cmap.bend_hints:
        _hint_bends(armature_obj, cmap, frame_targets, deform_pos)
    _shift_carrier(armature_obj, cmap, frame_targets, deform_pos, height)
    _place_heads(armature_obj, cmap, frame_targets, deform_pos, height)
    _fix(armature_obj, cmap, frame_targets, deform_idx, height)


def _hint_bends(armature_obj, cmap: ControlMap, frame_targets: np.ndarray, deform_pos: dict) -> None:
    """Turn the bend hints (bones of IK chains without a pole, parents first) so that their own pose, before
    the IK, is the motion's: rotation channels only (the basis from the target rotation, the parent's
    target where the parent is a hint too, else its evaluated rotation); then one view-layer update."""
    from mathutils import Matrix

    pose = armature_obj.pose.bones
    hints = set(cmap.bend_hints)
    for name in cmap.bend_hints:
        pb = pose[name]
        want = _unit_columns(frame_targets[deform_pos[name], :3, :3])
        rest = np.array(pb.bone.matrix_local)[:3, :3]
        parent = pb.parent
        if parent is None or not pb.bone.use_inherit_rotation:
            basis = rest.T @ want
        else:
            above = frame_targets[deform_pos[parent.name], :3, :3] if parent.name in hints else np.array(parent.matrix)[:3, :3]
            rest_in_parent = np.array(parent.bone.matrix_local)[:3, :3].T @ rest
            basis = rest_in_parent.T @ _unit_columns(above).T @ want
        matrix = np.array(pb.matrix_basis)
        matrix[:3, :3] = basis
        location, scale = tuple(pb.location), tuple(pb.scale)
        pb.matrix_basis = Matrix(matrix.tolist())
        pb.location, pb.scale = location, scale
    bpy.context.view_layer.update()


def _turn_error(armature_obj, wanted: dict) -> dict[str, float]:
    """Control → the angle (radians) between its evaluated rotation and the one it was set to (``wanted``)."""
    pose = armature_obj.pose.bones
    return {
        name: float(rotation_angles(np.array(pose[name].matrix)[None, :3, :3], matrix[None, :3, :3])[0])
        for name, (matrix, _) in wanted.items()
    }


def _meet_own_constraints(armature_obj, wanted: dict, rounds: int = 2) -> None:
    """Set again the controls that Blender evaluates more than 1e-4 rad off the rotation they were set to
    (``wanted``: control → (armature-space [4,4], keep_location)) because of their own constraints (a
    Rigify tail control copies the previous control's local rotation before its own): the rotation is
    set to ``set · got⁻¹ · wanted`` (exact when the constraint turns the control by a fixed rotation
    before its own), kept only where Blender's evaluation then comes closer; up to ``rounds`` times."""
    pose = armature_obj.pose.bones
    error = _turn_error(armature_obj, wanted)
    set_to = {name: matrix for name, (matrix, _) in wanted.items()}
    for _ in range(rounds):
        off = {name for name, e in error.items() if e > 1e-4}
        if not off:
            return
        saved = {name: (save_pose_bone(pose[name]), set_to[name]) for name in off}
        for name in off:
            matrix, keep_location = wanted[name]
            got = _unit_columns(np.array(pose[name].matrix)[:3, :3])
            again = matrix.copy()
            again[:3, :3] = set_to[name][:3, :3] @ got.T @ matrix[:3, :3]
            set_to[name] = again
            _set_pose(pose[name], again, keep_location)
        bpy.context.view_layer.update()
        now = _turn_error(armature_obj, {name: wanted[name] for name in off})
        worse = [name for name in off if now[name] >= error[name]]
        for name in worse:
            restore_pose_bone(pose[name], saved[name][0])
            set_to[name] = saved[name][1]
        if worse:
            bpy.context.view_layer.update()
        error.update({name: now[name] for name in off if name not in worse})
        if len(worse) == len(off):
            return


def _shift_carrier(armature_obj, cmap: ControlMap, frame_targets: np.ndarray, deform_pos: dict, height: float) -> None:
    """Shift the carrier until the deform root it translates has its head on target (up to three rounds)."""
    if cmap.carrier_root is None:
        return
    pose = armature_obj.pose.bones
    root = deform_pos[cmap.carrier_root]
    for _ in range(3):
        error = frame_targets[root, :3, 3] - np.array(pose[cmap.carrier_root].matrix.translation)
        if np.linalg.norm(error) <= 1e-6 * height:
            break
        carrier = pose[cmap.carrier]
        matrix = np.array(carrier.matrix)
        matrix[:3, 3] += error
        _set_pose(carrier, matrix, keep_location=False)
        bpy.context.view_layer.update()


def _fit_points(length: float) -> np.ndarray:
    """[4,4] a bone's head, tail and half-length points along its X and Z axes (bone space, homogeneous rows)."""
    return np.array([[0, 0, 0, 1], [0, length, 0, 1], [0.5 * length, 0, 0, 1], [0, 0, 0.5 * length, 1]], dtype=np.float64)


def _unit_columns(rotation: np.ndarray) -> np.ndarray:
    """``rotation`` [3,3] with each column scaled to length 1 (a bone's stretch or scale dropped)."""
    return unit_rows(np.swapaxes(rotation, 0, 1)).T


def _rigid(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` [4,4] with its rotation columns normalised (:func:`_unit_columns`)."""
    out = matrix.copy()
    out[:3, :3] = _unit_columns(matrix[:3, :3])
    return out


def _group_fit(
    current: np.ndarray, group: list, frame_targets: np.ndarray, deform_pos: dict, armature_obj, free: bool
) -> np.ndarray:
    """The control's armature-space matrix that best puts the deform bones it carries (``group``:
    (bone, control⁻¹ · bone)) on their targets: least squares (Kabsch) over each bone's head, tail and
    half-length points along its X and Z axes; turned about its head where it is now (``current``
    [4,4]), or moved as well when ``free``. For one bone whose target is reachable this is that
    bone's exact target."""
    bones = armature_obj.data.bones
    ours, theirs = [], []
    for bone, offset in group:
        local = _fit_points(bones[bone].length)
        ours.append((offset @ local.T).T[:, :3])
        theirs.append((frame_targets[deform_pos[bone]] @ local.T).T[:, :3] - current[:3, 3])
    a, b = np.concatenate(ours), np.concatenate(theirs)
    a_mean, b_mean = (a.mean(axis=0), b.mean(axis=0)) if free else (np.zeros(3), np.zeros(3))
    u, _, vt = np.linalg.svd((a - a_mean).T @ (b - b_mean))
    d = np.sign(np.linalg.det(vt.T @ u.T))
    matrix = current.copy()
    matrix[:3, :3] = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    matrix[:3, 3] = current[:3, 3] + b_mean - matrix[:3, :3] @ a_mean
    return matrix


def _place_heads(armature_obj, cmap: ControlMap, frame_targets: np.ndarray, deform_pos: dict, height: float) -> None:
    """Move each handle by its deform bone's head error (locked location axes kept); all handles more
    than 1e-6 heights off move together, then one view-layer update; up to four rounds."""
    pose = armature_obj.pose.bones
    for _ in range(4):
        acted = False
        for bone, control in cmap.handles.items():
            error = frame_targets[deform_pos[bone], :3, 3] - np.array(pose[bone].matrix.translation)
            if np.linalg.norm(error) <= 1e-6 * height:
                continue
            matrix = np.array(pose[control].matrix)
            matrix[:3, 3] += error
            _set_pose(pose[control], matrix, keep_location=False)
            acted = True
        if not acted:
            break
        bpy.context.view_layer.update()


def _fix(
    armature_obj, cmap: ControlMap, frame_targets: np.ndarray, deform_idx: np.ndarray, height: float, rounds: int = 6
) -> None:
    """Turn each fixer so that its deform bone's evaluated rotation meets the target (about the
    fixer's own head: its location channel is kept), locked Euler axes kept. All fixers more than
    1e-5 rad off turn together, then one view-layer update; a fixer whose turn leaves the deform bones
    it moves (``cmap.fixer_reach``) farther off in all (:func:`_offness`, summed) than before is turned
    back. Repeated while any turn is kept (fixers of one limb move each other's bones a little)."""
    pose = armature_obj.pose.bones
    deform_pos = {n: i for i, n in enumerate(cmap.deform)}
    for _ in range(rounds):
        before = _offness(armature_obj, deform_idx, frame_targets, height)
        turned: dict[str, tuple] = {}
        for bone, control in cmap.fixers.items():
            target = frame_targets[deform_pos[bone]]
            now = _rigid(np.array(pose[bone].matrix))
            turn = target[:3, :3] @ now[:3, :3].T
            if rotation_angles(turn[None], np.eye(3)[None])[0] < 1e-5:
                continue
            about = np.eye(4)
            about[:3, :3], about[:3, 3] = turn, now[:3, 3] - turn @ now[:3, 3]
            pb = pose[control]
            turned.setdefault(control, save_pose_bone(pb))
            euler = tuple(pb.rotation_euler)
            # turned in place: a fixer's own location stays (it may place other bones: a spine tweak)
            _set_pose(pb, about @ np.array(pb.matrix), keep_location=True)
            if pb.rotation_mode not in ("QUATERNION", "AXIS_ANGLE"):
                pb.rotation_euler = [old if lock else new for old, new, lock in zip(euler, pb.rotation_euler, pb.lock_rotation)]
        if not turned:
            break
        bpy.context.view_layer.update()
        after = _offness(armature_obj, deform_idx, frame_targets, height)
        worse = [c for c in turned if after[cmap.fixer_reach[c]].sum() > before[cmap.fixer_reach[c]].sum()]
        for control in worse:
            restore_pose_bone(pose[control], turned[control])
        if worse:
            bpy.context.view_layer.update()
        if len(worse) == len(turned):
            break
