"""Ground truth from Blender itself, and procedural rigs that stress the mirror."""

from __future__ import annotations

import bpy
import numpy as np


def evaluated_world_vertices(mesh_names) -> np.ndarray:
    """Blender's deformed vertices [V,3] in world space, meshes concatenated in the given order."""
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    out = []
    for name in mesh_names:
        obj = bpy.data.objects[name].evaluated_get(depsgraph)
        mesh = obj.to_mesh()
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        world = np.array(obj.matrix_world)
        out.append(co.reshape(-1, 3).astype(np.float64) @ world[:3, :3].T + world[:3, 3])
        obj.to_mesh_clear()
    return np.concatenate(out)


def pose_matrices(armature_obj) -> np.ndarray:
    """[J,4,4] ``pose_bone.matrix`` of every bone (armature space)."""
    return np.stack([np.array(pb.matrix) for pb in armature_obj.pose.bones])


def set_pose(armature_obj, rotations: np.ndarray, locations: np.ndarray) -> None:
    """Set every pose bone's quaternion [J,4] and location [J,3] (switching it to quaternion mode)."""
    if armature_obj.animation_data is not None:
        armature_obj.animation_data.action = None
        for track in armature_obj.animation_data.nla_tracks:
            track.mute = True
    for pb, q, loc in zip(armature_obj.pose.bones, rotations, locations):
        pb.rotation_mode = "QUATERNION"
        pb.rotation_quaternion = q
        pb.location = loc
    bpy.context.view_layer.update()


def random_pose(num_bones: int, rng: np.random.Generator, angle: float = 0.8, translation: float = 0.1):
    """Random rotations [J,4] (wxyz, up to about ``angle`` radians) and locations [J,3]."""
    axis = rng.normal(size=(num_bones, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    theta = rng.uniform(0, angle, size=(num_bones, 1))
    quat = np.concatenate([np.cos(theta / 2), np.sin(theta / 2) * axis], axis=1)
    return quat, rng.normal(size=(num_bones, 3)) * translation


def _link(obj):
    bpy.context.scene.collection.objects.link(obj)
    return obj


def build_stress_rig(name: str = "Stress") -> bpy.types.Object:
    """An armature that exercises every mirrored feature.

    - the armature object moved, rotated and non-uniformly scaled;
    - bones with non-zero rolls, connected and unconnected children, a bone that does not inherit
      rotation, a bone with non-local location, a non-deform control bone with a vertex group;
    - two meshes with their own non-uniform transforms, unnormalised weights, a vertex group that
      matches no bone and vertices with no weight at all.
    """
    data = bpy.data.armatures.new(name)
    arm = _link(bpy.data.objects.new(name, data))
    arm.location, arm.rotation_euler, arm.scale = (0.3, -0.2, 0.1), (0.1, 0.2, 0.3), (1.2, 0.8, 1.0)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    specs = [  # name, parent, head, tail, roll, connect
        ("root", None, (0, 0, 0), (0, 0.1, 0.5), 0.3, False),
        ("spine", "root", (0, 0.1, 0.5), (0, 0.15, 1.0), -0.5, True),
        ("arm.L", "spine", (0.3, 0.1, 0.9), (0.8, 0.2, 0.9), 1.0, False),
        ("forearm.L", "arm.L", (0.8, 0.2, 0.9), (1.2, 0.1, 0.7), 0.2, True),
        ("arm.R", "spine", (-0.3, 0.1, 0.9), (-0.8, 0.0, 0.95), 0.7, False),
        ("tail", "root", (0, -0.2, 0.1), (0, -0.8, 0.05), -1.2, False),
        ("ctrl", "root", (0, 0.5, 0), (0, 0.7, 0), 0.0, False),
    ]
    for bname, parent, head, tail, roll, connect in specs:
        eb = data.edit_bones.new(bname)
        eb.head, eb.tail, eb.roll = head, tail, roll
        if parent:
            eb.parent = data.edit_bones[parent]
            eb.use_connect = connect
    data.edit_bones["forearm.L"].use_inherit_rotation = False
    data.edit_bones["arm.R"].use_local_location = False
    data.edit_bones["ctrl"].use_deform = False
    bpy.ops.object.mode_set(mode="OBJECT")
    rng = np.random.default_rng(7)
    for mname, transform in (
        ("BodyA", ((0.1, 0.0, 0.0), (0.0, 0.0, 0.4), (1.0, 1.5, 0.7))),
        ("BodyB", ((-0.2, 0.1, 0.05), (0.3, -0.2, 0.0), (0.6, 1.0, 1.3))),
    ):
        _add_grid_mesh(mname, arm, transform, rng)
    return arm


def _add_grid_mesh(name, arm, transform, rng) -> bpy.types.Object:
    n = 12
    u, v = np.meshgrid(np.linspace(-1.0, 1.0, n), np.linspace(-0.1, 1.2, n))
    world_pts = np.stack([u.ravel() * 0.9, np.sin(u.ravel() * 2) * 0.3, v.ravel()], axis=1)
    faces = [(i * n + j, i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j) for i in range(n - 1) for j in range(n - 1)]
    mesh = bpy.data.meshes.new(name)
    obj = _link(bpy.data.objects.new(name, mesh))
    obj.location, obj.rotation_euler, obj.scale = transform
    bpy.context.view_layer.update()
    local = (world_pts - np.array(obj.matrix_world)[:3, 3]) @ np.linalg.inv(np.array(obj.matrix_world)[:3, :3]).T
    mesh.from_pydata(local.tolist(), [], faces)
    mesh.update()
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    bones = [b.name for b in arm.data.bones]
    heads = np.array([tuple(arm.matrix_world @ b.head_local) for b in arm.data.bones])
    groups = {b: obj.vertex_groups.new(name=b) for b in bones}
    junk = obj.vertex_groups.new(name="not_a_bone")
    for i, p in enumerate(world_pts):
        if i % 17 == 0:
            continue  # no weight: follows the object
        near = np.argsort(np.linalg.norm(heads - p, axis=1))[:3]
        for b in near:
            groups[bones[b]].add([i], float(rng.uniform(0.1, 1.5)), "REPLACE")  # unnormalised
        junk.add([i], 0.5, "REPLACE")
    return obj


def imported_action(name: str) -> bpy.types.Action:
    """An action the glTF importer made for animation ``name`` ("Walk" on 5.0, "Walk_root" on 4.2)."""
    for action in bpy.data.actions:
        if action.name == name or action.name.startswith(name + "_"):
            return action
    raise KeyError(f"no imported action for {name!r}: {[a.name for a in bpy.data.actions]}")
