"""A digest of everything a probe of a rig's controls reads, to tell whether the rig changed since.

:func:`rig_fingerprint` hashes (SHA-1): the armature object and its data (pointers), the deform bones
asked about, every pose bone's evaluated matrix, channels, rotation mode, locks and simple custom
properties, each bone's hide flag and bone collections, every constraint's settings (all of its
editable RNA properties, target objects by pointer), the bone collections' visibility and the
armature's drivers (path, index, expression, mute, variables and their targets). Main thread.
"""

from __future__ import annotations

import hashlib

import bpy
import numpy as np

from .rig import pose_matrices

__all__ = ["rig_fingerprint"]

_SIMPLE = {"BOOLEAN", "INT", "FLOAT", "STRING", "ENUM"}


def _value(value) -> object:
    """A hashable, repr-stable form of an RNA property value (ID pointers as their address)."""
    if isinstance(value, bpy.types.ID):
        return value.as_pointer()
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(value))
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    try:
        return tuple(np.asarray(value, dtype=np.float64).ravel().tolist())
    except (TypeError, ValueError):
        return repr(value)


def _settings(struct) -> tuple:
    """``struct``'s editable simple and ID-pointer RNA properties as (identifier, value) pairs."""
    out = []
    for prop in struct.bl_rna.properties:
        if prop.is_readonly or prop.identifier == "rna_type":
            continue
        if prop.type in _SIMPLE or (prop.type == "POINTER" and isinstance(getattr(struct, prop.identifier), bpy.types.ID)):
            out.append((prop.identifier, _value(getattr(struct, prop.identifier))))
    return tuple(out)


def rig_fingerprint(armature_obj: bpy.types.Object, deform: tuple[str, ...]) -> bytes:
    """The SHA-1 digest (20 bytes) of what a probe of ``armature_obj``'s controls for the deform bones
    ``deform`` reads (see the module docstring); equal digests: the probe would find the same."""
    digest = hashlib.sha1()
    digest.update(repr((armature_obj.as_pointer(), armature_obj.data.as_pointer(), tuple(deform))).encode())
    digest.update(np.ascontiguousarray(pose_matrices(armature_obj)).tobytes())
    for pb in armature_obj.pose.bones:
        props = tuple((k, _value(pb[k])) for k in sorted(pb.keys()) if isinstance(pb[k], (int, float, str)))
        bone = pb.bone
        digest.update(
            repr(
                (
                    pb.name,
                    _value(pb.matrix_basis),
                    pb.rotation_mode,
                    tuple(pb.lock_location),
                    tuple(pb.lock_rotation),
                    pb.lock_rotation_w,
                    tuple(pb.lock_scale),
                    props,
                    bone.hide,
                    tuple(c.name for c in bone.collections),
                    tuple((c.type, _settings(c)) for c in pb.constraints),
                )
            ).encode()
        )
    collections = getattr(armature_obj.data, "collections_all", ())
    digest.update(repr(tuple((c.name, c.is_visible) for c in collections)).encode())
    drivers = armature_obj.animation_data.drivers if armature_obj.animation_data else ()
    for fc in drivers:
        variables = tuple(
            (
                v.name,
                v.type,
                tuple((_value(t.id), t.data_path, t.bone_target, t.transform_type, t.transform_space) for t in v.targets),
            )
            for v in fc.driver.variables
        )
        digest.update(repr((fc.data_path, fc.array_index, fc.mute, fc.driver.expression, fc.driver.type, variables)).encode())
    return digest.digest()
