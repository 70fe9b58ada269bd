"""The armature as Blender shows it now: its pose channels, its character's height, an action's F-curves (any Blender version)."""

from __future__ import annotations

import bpy
import numpy as np

from ...core.motion.clip import MotionClip
from .io import scene_fps

__all__ = ["character_height", "current_pose"]


def character_height(armature_obj: bpy.types.Object) -> float:
    """World-Z extent (Blender units) of the meshes ``armature_obj`` deforms, as Blender shows them now
    (evaluated); 1.0 when it deforms none."""
    from .io import skinned_meshes

    depsgraph = bpy.context.evaluated_depsgraph_get()
    low, high = np.inf, -np.inf
    for obj in skinned_meshes(armature_obj):
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        try:
            co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
            mesh.vertices.foreach_get("co", co)
        finally:
            evaluated.to_mesh_clear()
        world = np.array(evaluated.matrix_world, dtype=np.float64)
        z = co.reshape(-1, 3).astype(np.float64) @ world[2, :3] + world[2, 3]
        if len(z):
            low, high = min(low, float(z.min())), max(high, float(z.max()))
    return high - low if high > low else 1.0


def action_fcurves(action) -> list:
    """Every F-curve of ``action``: its layers' channelbags (4.4+) or ``action.fcurves`` (4.2 / 4.3)."""
    if hasattr(action, "layers"):
        return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]
    return list(action.fcurves)


def current_pose(armature_obj: bpy.types.Object) -> MotionClip:
    """The armature's pose as it is now (one frame, Blender order): rotations from each pose bone's
    ``matrix_basis`` (any rotation mode), locations from ``location``. Changes nothing."""
    bones = armature_obj.pose.bones
    rotations = np.array([tuple(pb.matrix_basis.to_quaternion()) for pb in bones], dtype=np.float64)
    locations = np.array([tuple(pb.location) for pb in bones], dtype=np.float64)
    names = tuple(b.name for b in armature_obj.data.bones)
    return MotionClip(names, scene_fps(bpy.context.scene), int(bpy.context.scene.frame_current), rotations[None], locations[None])
