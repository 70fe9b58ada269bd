"""How an action's keys measure up: keys per channel, the largest error against Blender's own curve evaluation, reversals, and the control-rig check of an action keyed on controls."""

from __future__ import annotations

from dataclasses import asdict

import bpy
import numpy as np

from ...core.motion.clip import MotionClip
from ..character.pose_channels import action_fcurves, character_height
from .keyframes import channel_errors, channel_values

__all__ = ["key_figures", "key_summary"]


def key_summary(figures: dict, mode: str) -> dict:
    """The report's "keys" field from :func:`key_figures`: ``mode`` ("sparse"/"dense"), ``channels``,
    ``keys``, ``keys_per_channel``, ``flat_channels``, ``rotation_error_deg`` (degrees),
    ``location_error`` (a fraction of the character's height) and ``keyed_bones`` (names); for an action keyed on a rig's
    controls also ``controls`` (:class:`.keys.on_controls.ControlResult` as a dict: ``keyed``, ``switches``,
    ``position_error`` in heights, ``rotation_error`` in radians, ``undriven``, ``checked_frames``,
    ``seconds``)."""
    names = ("channels", "keys", "keys_per_channel", "flat_channels", "rotation_error_deg", "location_error", "keyed_bones")
    extra = {"controls": figures["controls"]} if "controls" in figures else {}
    return {"mode": mode} | {k: figures[k] for k in names} | extra


def key_figures(armature_obj: bpy.types.Object, action: bpy.types.Action, clip: MotionClip, height: float | None = None) -> dict:
    """How well ``action``'s curves, as Blender evaluates them (``fcurve.evaluate`` at each of the
    clip's frames), key ``clip`` on ``armature_obj``; a channel without a curve reads the pose bone's
    current value.

    Returns a dict: ``channels`` (the clip's channels in each bone's rotation mode, plus location),
    ``curves``, ``keys``, ``keys_per_channel`` (keys / channels), ``per_channel`` ({"bone.prop[i]": keys}),
    ``flat_channels`` (channels the clip does not move: range ≤ 1e-6 rad or 1e-6 heights),
    ``flat_keys_max`` (most keys on one of them), ``moving_channels``, ``reversals_clip`` /
    ``reversals_keys`` (mean count of direction reversals per moving channel over the frames, of the clip
    and of the keyed curves; changes under 1e-5 rad or heights are not reversals),
    ``rotation_error_deg`` (largest angle between a bone's keyed and clip rotation, degrees),
    ``location_error`` (largest distance between a bone's keyed and clip location, world units over
    the height) and ``height`` (Blender units).

    An action keyed on a rig's controls (:func:`.keys.on_controls.write_to_controls`) is measured on its own
    curves (``channels``: its curves; reversals of the keys: of those curves as Blender evaluates
    them), with the errors of its check in Blender's evaluation: ``rotation_error_deg`` the deform
    bones' largest rotation error (degrees), ``location_error`` their largest position error (heights);
    ``controls`` then holds the whole check (:class:`.keys.on_controls.ControlResult` as a dict).
    ``keyed_bones``: the names of the bones the action keys (sorted as the clip's bones, or the
    controls' order).
    """
    height = float(height or character_height(armature_obj))
    from .on_controls import result_of

    checked = result_of(action)
    if checked is not None:
        return _control_figures(action, clip, checked, height)
    scale = max(max(abs(v) for v in armature_obj.matrix_world.to_scale()), 1e-12)
    curves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(action)}
    frames = clip.frame_start + np.arange(clip.num_frames, dtype=np.float64)
    per_channel, flat_keys, reversals_clip, reversals_keys = {}, [], [], []
    rotation_error = location_error = 0.0
    for b, bone in enumerate(clip.bone_names):
        pb = armature_obj.pose.bones[bone]
        for prop, values in channel_values(clip, b, pb.rotation_mode).items():
            path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
            unit = height / scale if prop == "location" else 1.0
            got = np.empty_like(values)
            for c in range(values.shape[1]):
                fc = curves.get((path, c))
                per_channel[f"{bone}.{prop}[{c}]"] = len(fc.keyframe_points) if fc is not None else 0
                got[:, c] = [fc.evaluate(f) for f in frames] if fc is not None else tuple(getattr(pb, prop))[c]
                if np.ptp(values[:, c]) <= 1e-6 * unit:
                    flat_keys.append(per_channel[f"{bone}.{prop}[{c}]"])
                else:
                    reversals_clip.append(_reversals(values[:, c], 1e-5 * unit))
                    reversals_keys.append(_reversals(got[:, c], 1e-5 * unit))
            error = float(channel_errors(prop, pb.rotation_mode, got, values).max())
            if prop == "location":
                location_error = max(location_error, error * scale / height)
            else:
                rotation_error = max(rotation_error, float(np.degrees(error)))
    figures = _figures(per_channel, flat_keys, reversals_clip, reversals_keys, rotation_error, location_error, height)
    keyed = [
        b for b in clip.bone_names if any(p.startswith(f'pose.bones["{bpy.utils.escape_identifier(b)}"].') for p, _ in curves)
    ]
    return figures | {"curves": len(curves), "moving_channels": len(reversals_clip), "keyed_bones": keyed}


def _figures(
    per_channel: dict,
    flat_keys: list,
    reversals_clip: list,
    reversals_keys: list,
    rotation_error: float,
    location_error: float,
    height: float,
) -> dict:
    """:func:`key_figures`' dict from its per-channel counts (``per_channel``: keys per channel; ``flat_keys``:
    keys of each channel that stays still; reversals of the clip's and the keys' moving channels), the
    largest errors (degrees; heights) and the height (Blender units)."""
    keys = sum(per_channel.values())
    return {
        "channels": len(per_channel),
        "curves": len(per_channel),
        "keys": keys,
        "keys_per_channel": keys / max(len(per_channel), 1),
        "per_channel": per_channel,
        "flat_channels": len(flat_keys),
        "flat_keys_max": max(flat_keys, default=0),
        "moving_channels": len(reversals_keys),
        "reversals_clip": float(np.mean(reversals_clip)) if reversals_clip else 0.0,
        "reversals_keys": float(np.mean(reversals_keys)) if reversals_keys else 0.0,
        "rotation_error_deg": rotation_error,
        "location_error": location_error,
        "height": height,
    }


def _control_figures(action, clip: MotionClip, checked, height: float) -> dict:
    """:func:`key_figures` of an action keyed on controls (``checked``: its ControlResult)."""
    frames = clip.frame_start + np.arange(clip.num_frames, dtype=np.float64)
    per_channel, flat_keys, reversals_keys = {}, [], []
    for fc in action_fcurves(action):
        name = f"{fc.data_path}[{fc.array_index}]"
        per_channel[name] = len(fc.keyframe_points)
        values = np.array([fc.evaluate(f) for f in frames])
        if np.ptp(values) <= 1e-6:
            flat_keys.append(per_channel[name])
        else:
            reversals_keys.append(_reversals(values, 1e-5))
    moving = np.ptp(clip.rotations, axis=0) > 1e-6  # [J,4] the clip's own moving channels
    reversals_clip = [_reversals(clip.rotations[:, j, c], 1e-5) for j, c in zip(*np.nonzero(moving))]
    rotation_error, position_error = float(np.degrees(checked.rotation_error)), float(checked.position_error)
    figures = _figures(per_channel, flat_keys, reversals_clip, reversals_keys, rotation_error, position_error, height)
    return figures | {"keyed_bones": list(checked.keyed), "controls": asdict(checked)}


def _reversals(values: np.ndarray, eps: float) -> int:
    """How many times ``values`` [F] change direction, steps smaller than ``eps`` ignored."""
    steps = np.diff(values)
    signs = np.sign(steps[np.abs(steps) > eps])
    return int((signs[1:] != signs[:-1]).sum())
