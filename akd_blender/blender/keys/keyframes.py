"""Write a MotionClip into a new Blender Action, on Blender 4.2 → 5.0.

Needs: any mode; main thread. Creates a new action (a unique name, never overwriting one), keys
every bone of the clip in its own ``rotation_mode`` (quaternion keys sign-continuous, Euler keys
unwrapped, axis-angle) plus ``location``, and makes it the armature's active action. The action
carries the clip's frame range (``use_frame_range``), so the scene's range need not change. The
previous active action keeps existing: it gets a fake user so saving the file keeps it, and NLA
tracks are left alone.

Key reduction (:class:`SparseKeys`): per bone, the fewest keys whose Bézier curves, as Blender
evaluates them (``fcurve.evaluate``), stay within an angle (degrees, the bone's whole rotation) and a
distance (a fraction of the character's height, the bone's whole location) of the clip at every
frame. A channel that does not move (within that bound) gets one key; a bone property that stays at
Blender's default (identity rotation, zero location) while the pose bone shows that default too gets
no curve. :func:`key_figures` measures keys per channel and the largest error against Blender's own
curve evaluation.

Blender API differences handled here (see shared notes): 4.2/4.3 have ``action.fcurves``; 4.4+
have slotted actions (slot → layer → keyframe strip → channelbag) and 4.5's ``action.fcurves``
proxy must not be used on a slotless action; 5.0 removed ``action.fcurves``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import bpy
import numpy as np
import torch

from ...core.character.rig import RigAsset
from ...core.character.rotations import euler_to_quat, make_quat_continuous, quat_to_euler, quat_to_rotvec, rotvec_to_quat
from ...core.errors import InputError
from ...core.motion.clip import MotionClip
from ...core.settings import KEY_MODES
from ..character.io import scene_fps
from ..character.pose_channels import character_height

__all__ = [
    "channel_errors",
    "SparseKeys",
    "sparse_keys_for",
    "read_clip",
    "channel_values",
    "new_action",
    "key_clip",
    "finish_action",
    "INTERPOLATION_CODES",
    "fcurve_factory",
    "set_fcurve_keys",
]

INTERPOLATION_CODES = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
"""Keyframe interpolation name → the number Blender stores for it in ``keyframe_points``' ``interpolation``."""


@dataclass(frozen=True)
class SparseKeys:
    """Key reduction within an error bound checked against Blender's own curve evaluation.

    rotation_deg: the largest angle (degrees) between a bone's keyed rotation, as Blender evaluates
        its curves at a frame, and the clip's rotation at that frame.
    location_fraction: the largest distance between a bone's keyed location and the clip's, as a
        fraction of ``height`` (0.002: 3.4 mm on a 1.7 m human).
    height: the character's height in Blender units; None: measured from the armature's skinned
        meshes (:func:`character_height`).
    drop_still: leave out the curves of a bone's rotation or location that stays at Blender's
        default (identity / zero) while the pose bone shows that default too.
    """

    rotation_deg: float = 0.5
    location_fraction: float = 0.002
    height: float | None = None
    drop_still: bool = True

    def location_units(self, height: float) -> float:
        """The location bound in Blender units for a character ``height`` units tall."""
        return self.location_fraction * max(float(self.height or height), 1e-9)


def sparse_keys_for(mode: str, height: float | None = None) -> SparseKeys | None:
    """The key reduction of a ``core.settings.KEY_MODES`` choice: ``"sparse"`` → :class:`SparseKeys` with
    its default bounds for a character ``height`` Blender units tall, ``"dense"`` → None (every frame keyed)."""
    if mode not in KEY_MODES:
        raise InputError(f"keys must be one of {', '.join(KEY_MODES)} (got '{mode}')")
    return SparseKeys(height=height) if mode == "sparse" else None


def channel_values(clip: MotionClip, bone: int, rotation_mode: str) -> dict[str, np.ndarray]:
    """Per-frame values of one bone's channels in its rotation mode.

    Returns ``{data property: [F,C] values}``: ``rotation_quaternion`` (w,x,y,z, sign-continuous),
    ``rotation_axis_angle`` (angle, x, y, z) or ``rotation_euler`` (x, y, z radians, unwrapped),
    and ``location`` [F,3].
    """
    quat = torch.as_tensor(clip.rotations[:, bone], dtype=torch.float64)
    quat = quat / quat.norm(dim=-1, keepdim=True)
    if rotation_mode == "QUATERNION":
        rot = {"rotation_quaternion": make_quat_continuous(quat).numpy()}
    elif rotation_mode == "AXIS_ANGLE":
        rotvec = quat_to_rotvec(quat).numpy()
        angle = np.linalg.norm(rotvec, axis=-1, keepdims=True)
        axis = np.where(angle > 1e-12, rotvec / np.maximum(angle, 1e-12), [0.0, 1.0, 0.0])
        rot = {"rotation_axis_angle": np.concatenate([angle, axis], axis=-1)}
    else:
        rot = {"rotation_euler": np.unwrap(quat_to_euler(quat, rotation_mode).numpy(), axis=0)}
    return {**rot, "location": np.asarray(clip.locations[:, bone], dtype=np.float64)}


def new_action(name: str) -> bpy.types.Action:
    """A new, empty action called ``name`` (Blender adds .001 … if taken), for an object."""
    action = bpy.data.actions.new(name)
    if hasattr(action, "id_root"):  # 4.2 / 4.3 legacy actions
        action.id_root = "OBJECT"
    return action


def key_clip(
    new_fcurve, armature_obj, clip: MotionClip, sparse: SparseKeys | None, interpolation: str, height: float | None = None
) -> None:
    """Key every bone of ``clip`` on ``armature_obj`` (its rotation mode plus location) through
    ``new_fcurve`` (from :func:`fcurve_factory`): dense, or reduced within ``sparse``'s bounds
    (``height``: the character's height in world units when ``sparse`` does not give one)."""
    pose_bones = armature_obj.pose.bones
    bounds = None
    if sparse is not None:
        if sparse.height is None and height is not None:
            sparse = SparseKeys(sparse.rotation_deg, sparse.location_fraction, height, sparse.drop_still)
        bounds = {"rotation": np.radians(sparse.rotation_deg), "location": _location_bound(armature_obj, sparse)}
    frames = clip.frame_start + np.arange(clip.num_frames, dtype=np.float64)
    for bone_index, bone in enumerate(clip.bone_names):
        pb = pose_bones[bone]
        for prop, values in channel_values(clip, bone_index, pb.rotation_mode).items():
            path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
            if bounds is None:
                for index in range(values.shape[1]):
                    set_fcurve_keys(new_fcurve(path, index, bone), frames, values[:, index], interpolation)
                continue
            bound = bounds["location" if prop == "location" else "rotation"]
            if sparse.drop_still and _stays_at_default(prop, values, pb, bound):
                continue
            curves = [new_fcurve(path, index, bone) for index in range(values.shape[1])]
            _reduce_property(curves, frames, values, prop, pb.rotation_mode, bound, interpolation)


def finish_action(armature_obj, action, clip: MotionClip) -> None:
    """Give ``action`` the clip's frame range and make it ``armature_obj``'s active action (the previous
    one kept with a fake user)."""
    action.use_frame_range = True
    action.frame_start, action.frame_end = float(clip.frame_start), float(max(clip.frame_end, clip.frame_start + 1))
    _assign(armature_obj, action)


def _location_bound(armature_obj, sparse: SparseKeys) -> float:
    """The location bound in channel units: ``sparse``'s fraction of the height, over the armature's
    largest world scale (a location channel moves the bone by at most that scale × its change)."""
    height = float(sparse.height or character_height(armature_obj))
    scale = max(max(abs(v) for v in armature_obj.matrix_world.to_scale()), 1e-12)
    return sparse.location_units(height) / scale


_DEFAULTS = {
    "rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
    "rotation_axis_angle": (0.0, 0.0, 1.0, 0.0),
    "rotation_euler": (0.0, 0.0, 0.0),
    "location": (0.0, 0.0, 0.0),
}


def channel_errors(prop: str, mode: str, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """[F] error of channel values ``got`` against ``want`` (both [F,C]): the angle (radians) between
    the rotations they mean, or the distance between the locations (channel units)."""
    if prop == "location":
        return np.linalg.norm(got - want, axis=-1)
    qa, qb = _as_quaternions(prop, mode, got), _as_quaternions(prop, mode, want)
    dot = np.abs((qa * qb).sum(-1)).clip(0.0, 1.0)
    return 2.0 * np.arccos(dot)


def _as_quaternions(prop: str, mode: str, values: np.ndarray) -> np.ndarray:
    """Unit quaternions [F,4] (w,x,y,z) of rotation channel values [F,C] as Blender reads them."""
    values = np.asarray(values, dtype=np.float64)
    if prop == "rotation_quaternion":
        q = values
    elif prop == "rotation_axis_angle":
        axis = values[:, 1:]
        norm = np.linalg.norm(axis, axis=-1, keepdims=True)
        axis = np.where(norm > 1e-12, axis / np.maximum(norm, 1e-12), [0.0, 1.0, 0.0])
        q = rotvec_to_quat(torch.as_tensor(axis * values[:, :1])).numpy()
    else:
        q = euler_to_quat(torch.as_tensor(values), mode).numpy()
    return q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)


def _stays_at_default(prop: str, values: np.ndarray, pb, bound: float) -> bool:
    """Whether the property keeps Blender's default value within ``bound`` over the clip and the pose
    bone shows that default now (so no curve is needed)."""
    default = np.tile(np.asarray(_DEFAULTS[prop], dtype=np.float64), (len(values), 1))
    if channel_errors(prop, pb.rotation_mode, values, default).max() > bound:
        return False
    current = np.asarray(tuple(getattr(pb, prop)), dtype=np.float64)[None]
    return float(channel_errors(prop, pb.rotation_mode, current, default[:1])[0]) <= bound


def _channel_share(prop: str, channels: int) -> float:
    """The fraction of a property's bound each of its channels may use, so that channel errors within
    their share keep the property's error (angle or distance) within the bound."""
    if prop == "location":
        return 1.0 / np.sqrt(channels)
    return 1.0 / 3.0 if prop == "rotation_euler" else 0.25  # quaternion: angle ≤ 2·|Δq| ≤ 4·max|Δq_i|


def _reduce_property(curves, frames, values, prop: str, mode: str, bound: float, interpolation: str) -> None:
    """Key one bone property (its curves [C], values [F,C]) with the fewest keys that keep Blender's
    evaluation within ``bound`` of ``values`` at every frame. Up to half the bound goes to smoothing
    frame-to-frame noise first (:func:`_smoothed_within`), the rest to dropping keys; the per-channel
    share halves until the whole property is within the bound (dense keys as the last resort)."""
    target = _smoothed_within(prop, mode, values, 0.5 * bound)
    room = bound - float(channel_errors(prop, mode, target, values).max())
    scale = np.ones(values.shape[1])
    if prop == "rotation_axis_angle":  # the axis moves the rotation by about the angle per unit
        scale[1:] = max(float(np.abs(values[:, 0]).max()), 1.0)
    share = _channel_share(prop, values.shape[1])
    for _ in range(6):
        for c, fcurve in enumerate(curves):
            _key_within(fcurve, frames, target[:, c], room * share / scale[c], interpolation)
        got = np.array([[fc.evaluate(f) for fc in curves] for f in frames])
        if channel_errors(prop, mode, got, values).max() <= bound:
            return
        share /= 2
    for c, fcurve in enumerate(curves):
        set_fcurve_keys(fcurve, frames, values[:, c], interpolation)


_SMOOTHING_SIGMAS = (2.0, 1.5, 1.0, 0.7, 0.5)  # frames, tried widest first


def _smoothed_within(prop: str, mode: str, values: np.ndarray, bound: float) -> np.ndarray:
    """``values`` [F,C] smoothed over frames by the widest Gaussian (σ in :data:`_SMOOTHING_SIGMAS`)
    that stays within ``bound`` of them at every frame (the property's angle or distance), or
    ``values`` unchanged when none does. The ends are padded by point reflection, so a steady trend
    (a travel) is kept to the last frame."""
    for sigma in _SMOOTHING_SIGMAS:
        smooth = _gaussian_frames(values, sigma)
        if channel_errors(prop, mode, smooth, values).max() <= bound:
            return smooth
    return values


def _gaussian_frames(values: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian smoothing of [F,C] along frames, σ in frames, ends padded by point reflection."""
    frames = len(values)
    radius = min(int(np.ceil(3 * sigma)), frames - 1)
    if radius < 1:
        return values.copy()
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    kernel /= kernel.sum()
    head = 2 * values[:1] - values[radius:0:-1]
    tail = 2 * values[-1:] - values[-2 : -radius - 2 : -1]
    padded = np.concatenate([head, values, tail])
    return np.stack([np.convolve(padded[:, c], kernel, mode="valid") for c in range(values.shape[1])], 1)


def _key_within(fcurve, frames: np.ndarray, values: np.ndarray, tolerance: float, interpolation: str) -> None:
    """Key ``values`` [F] at ``frames`` [F] with the fewest keys that Blender's evaluation of the curve
    reproduces within ``tolerance``: one key (the mid-range value) for a channel that moves less than
    that either side, else start from the end keys and add the worst frame of every out-of-tolerance
    run until none is left."""
    mid = 0.5 * (values.min() + values.max())
    if np.abs(values - mid).max() <= tolerance:
        set_fcurve_keys(fcurve, frames[:1], np.array([mid]), interpolation)
        return
    keep = np.zeros(len(frames), dtype=bool)
    keep[[0, -1]] = True
    slopes = ((values[1] - values[0]) / (frames[1] - frames[0]), (values[-1] - values[-2]) / (frames[-1] - frames[-2]))
    while True:
        set_fcurve_keys(fcurve, frames[keep], values[keep], interpolation, end_slopes=slopes)
        error = np.abs(np.array([fcurve.evaluate(f) for f in frames]) - values)
        bad = error > tolerance
        if not bad.any():
            return
        # one new key per run of consecutive bad frames, at its worst frame
        runs = np.split(np.flatnonzero(bad), np.flatnonzero(np.diff(np.flatnonzero(bad)) > 1) + 1)
        for run in runs:
            keep[run[np.argmax(error[run])]] = True


def fcurve_factory(action: bpy.types.Action, obj: bpy.types.Object) -> Callable[[str, int, str], bpy.types.FCurve]:
    """A function (data_path, index, group name) → a new F-curve in ``action`` animating ``obj``, on legacy
    actions (Blender 4.2 / 4.3) and on slotted layered actions (4.4+) alike; :func:`finish_action` assigns
    the slot it makes."""
    if not hasattr(action, "slots"):  # 4.2 / 4.3: legacy actions
        return lambda path, index, group: action.fcurves.new(path, index=index, action_group=group)
    slot = action.slots.new(id_type="OBJECT", name=obj.name)
    layer = action.layers.new("Layer")
    strip = layer.strips.new(type="KEYFRAME")
    bag = strip.channelbag(slot, ensure=True)
    action["_akd_slot"] = slot.identifier  # picked up by _assign

    def new(path: str, index: int, group: str):
        grp = bag.groups.get(group) or bag.groups.new(group)
        fcurve = bag.fcurves.new(path, index=index)
        fcurve.group = grp
        return fcurve

    return new


def _assign(obj, action) -> None:
    """Make ``action`` active on ``obj`` (with its slot on 4.4+), keeping the previous one."""
    ad = obj.animation_data or obj.animation_data_create()
    previous = ad.action
    if previous is not None:
        previous.use_fake_user = True  # unassigned but kept, and saved with the file
    ad.action = action
    if hasattr(action, "slots"):
        identifier = action.pop("_akd_slot")
        ad.action_slot = next(s for s in action.slots if s.identifier == identifier)


def set_fcurve_keys(
    fcurve: bpy.types.FCurve,
    frames: np.ndarray,
    values: np.ndarray,
    interpolation: str,
    end_slopes: tuple[float, float] | None = None,
) -> None:
    """Replace ``fcurve``'s keys by ``values`` [K] at ``frames`` [K]. Bézier handles are Blender's
    auto-clamped ones (no overshoot at a turn); with ``end_slopes`` (value per frame at the first and
    the last key) those two keys get free handles along these slopes, so a curve that leaves its end
    moving (a travel) is not eased in or out, and one that starts at rest still is."""
    points = fcurve.keyframe_points
    if len(points):
        points.clear()
    points.add(len(frames))
    points.foreach_set("co", np.column_stack([frames, values]).astype(np.float32).ravel())
    points.foreach_set("interpolation", np.full(len(frames), INTERPOLATION_CODES[interpolation], dtype=np.int32))
    fcurve.update()
    if end_slopes is not None and len(points) > 1 and interpolation == "BEZIER":
        ends = (
            (points[0], float(frames[1] - frames[0]), end_slopes[0]),
            (points[-1], float(frames[-1] - frames[-2]), end_slopes[1]),
        )
        for point, gap, slope in ends:
            point.handle_left_type = point.handle_right_type = "FREE"
            (f, v), reach = point.co, gap / 3.0
            point.handle_left, point.handle_right = (f - reach, v - slope * reach), (f + reach, v + slope * reach)
        fcurve.update()


def read_clip(
    armature_obj: bpy.types.Object,
    frame_start: int,
    frame_end: int,
    action: bpy.types.Action | None = None,
    fps: float | None = None,
    rig: RigAsset | None = None,
    keyed_on: bpy.types.Object | None = None,
) -> MotionClip:
    """Blender's evaluated pose channels over ``frame_start..frame_end`` (inclusive) as a MotionClip.

    With ``action`` given it is evaluated alone (NLA tracks ignored); otherwise the armature's
    current animation is. Rotations come from ``pose_bone.matrix_basis`` (any rotation mode), over
    every bone; with ``rig`` a control rig's mirror (``rig.deform_skeleton``), the clip is over
    ``rig.bone_names`` instead, read from the evaluated deform bones
    (:func:`~akd_blender.blender.character.deform_skeleton.evaluated_channels`: constraints, IK and drivers included).
    ``keyed_on``: the armature ``action`` is assigned to when it is not ``armature_obj`` (the control rig
    a game rig's bones copy, :func:`~.character.game_rig.followed_armature`; ``rig`` then the game rig's mirror).
    The scene's current frame and the keyed armature's action, slot and pose are restored afterwards.
    Needs: main thread, any mode.
    """
    scene = bpy.context.scene
    holder = keyed_on if keyed_on is not None else armature_obj
    ad = holder.animation_data
    saved_frame = scene.frame_current
    saved = (ad.action, getattr(ad, "action_slot", None), ad.use_nla) if ad else None
    saved_pose = [pb.matrix_basis.copy() for pb in holder.pose.bones]
    try:
        if action is not None:
            ad = ad or holder.animation_data_create()
            ad.use_nla = False
            ad.action = action
            if hasattr(ad, "action_slot") and ad.action_slot is None and len(action.slots):
                ad.action_slot = action.slots[0]
        frames = range(int(frame_start), int(frame_end) + 1)
        evaluated = rig is not None and rig.deform_skeleton
        bones = armature_obj.pose.bones
        count = rig.num_bones if evaluated else len(bones)
        rotations = np.empty((len(frames), count, 4))
        locations = np.empty((len(frames), count, 3))
        if evaluated:
            from ..character.deform_skeleton import evaluated_channels, frame_offsets

            offsets = frame_offsets(armature_obj, rig)
        for i, frame in enumerate(frames):
            scene.frame_set(frame)
            if evaluated:
                rotations[i], locations[i] = evaluated_channels(armature_obj, rig, offsets)
                continue
            for j, pb in enumerate(bones):
                rotations[i, j] = tuple(pb.matrix_basis.to_quaternion())
                locations[i, j] = tuple(pb.location)
    finally:
        if saved is not None:
            ad.action, ad.use_nla = saved[0], saved[2]
            if saved[1] is not None:
                ad.action_slot = saved[1]
        elif holder.animation_data is not None:
            holder.animation_data_clear()
        scene.frame_set(saved_frame)
        if holder.animation_data is None or holder.animation_data.action is None:
            for pb, basis in zip(holder.pose.bones, saved_pose):
                pb.matrix_basis = basis
    names = tuple(rig.bone_names) if evaluated else tuple(b.name for b in armature_obj.data.bones)
    clip = MotionClip(names, float(fps or scene_fps(scene)), int(frame_start), rotations, locations)
    return clip.continuous()
