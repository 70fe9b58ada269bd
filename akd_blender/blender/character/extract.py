"""Snapshot a Blender armature and the meshes it deforms into a bpy-free RigAsset.

Needs: any mode (reads data only); call on Blender's main thread. The scene is not changed.

Which bones are mirrored: the armature's deform skeleton (:mod:`.character.deform_skeleton` states the rule):
every bone of a plain rig, as Blender orders and parents them; in a control rig (bones moved by
constraints or drivers: Rigify, IK limbs) only the bones whose motion reaches a mesh, each parented
to its nearest kept ancestor. Which meshes: those with an Armature modifier using the armature or
parented to it with parent type 'Armature' (skinned: :func:`.character.io.skinned_meshes`), and those parented
to one of its bones (Blender's parent type 'Bone': a rigid part, its vertices weigh 1 on that bone and
sit where Blender places them).

What the mirror reproduces exactly (and tests check against Blender's own evaluation): bone rest
matrices and hierarchy, rotation inheritance, local/non-local location, linear blend skinning by
the vertex groups of deform bones, rigid parts parented to bones, object transforms of the armature
and each mesh (scale and rotation need not be applied). Scale channels are not animated by this
project, so inherit-scale modes make no difference.

What it does not reproduce, reported in ``RigAsset.warnings`` (naming the bone or object) and
otherwise ignored: constraints other than Limit Rotation on mirrored bones of a rig whose keys stay on
its own bones (Limit Location, world-space Limit Rotation, …; the mirror poses such a bone directly
over the deform skeleton's hierarchy). A rig with bones Blender drives (IK, Copy Transforms, drivers:
:func:`.character.constraints.constraint_driven`) is keyed on its controls and checked in Blender's evaluation
instead (:mod:`.keys.on_controls`), so its constraints are not warned about here. Bones outside the deform
skeleton are not mirrored and not warned about. B-Bone segments (mirrored as straight
bones), shape keys, modifiers before the Armature modifier (or any modifier of a rigid part),
envelope or preserve-volume deformation, several Armature modifiers on one mesh, a skinned mesh
that is also parented to a bone. Errors (RigError): an object that is not an armature, no mesh
deformed by it, a mesh whose vertex groups match no deform bone, a mesh whose deform weights are
all zero. Vertices of a deformed mesh with no deform weight follow their object (they stay put
relative to the armature), as Blender does.

The ground (``RigAsset.ground_height``) is the floor the character stands on in its rest pose: world
z = 0 where the rest pose's lowest vertex is within :data:`FLOOR_SNAP` of the height of it, else that
lowest vertex (:func:`rest_floor`). It never comes from the pose shown at the current frame, so a
character that is sunk or lifted there (an action being fixed) does not define its own floor.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...core.character.rig import RigAsset, RigError, transform_points
from ...core.character.vertex_colors import GREY, corner_mean, sample_nearest
from .constraints import constraint_driven
from .deform_skeleton import DeformSkeleton, find_deform_skeleton, mirror_frame, moving_constraints
from .io import is_armature_modifier

__all__ = ["rig_from_armature"]

_MIN_WEIGHT_SUM = 1e-4  # Blender's Armature modifier ignores vertices whose weight sum is ≤ this
_LISTED = 3  # a constraint type on more mirrored bones than this is warned about in one line


def rig_from_armature(armature_obj: bpy.types.Object) -> RigAsset:
    """Read ``armature_obj`` and every mesh it deforms into a RigAsset (see the module docstring)."""
    if armature_obj is None or armature_obj.type != "ARMATURE":
        kind = "nothing" if armature_obj is None else f"a {armature_obj.type.lower()}"
        name = "" if armature_obj is None else f" '{armature_obj.name}'"
        raise RigError(f"object{name} is {kind}, not an armature")
    if armature_obj.pose is None:
        bpy.context.view_layer.update()
    skeleton = find_deform_skeleton(armature_obj)
    if not skeleton.skinned and not skeleton.parented:
        raise RigError(
            f"armature '{armature_obj.name}' has no skinned mesh"
            " (no mesh has an Armature modifier using it or is parented to one of its bones)"
        )
    bones = _read_bones(armature_obj, skeleton)
    arm_world = _matrix(armature_obj.matrix_world)
    world_to_arm = np.linalg.inv(arm_world)
    bone_index = {name: i for i, name in enumerate(bones["bone_names"])}
    deform = bones["use_deform"].copy()
    parts = [_read_skinned(obj, world_to_arm, bone_index, deform, armature_obj) for obj in skeleton.skinned]
    if skeleton.parented:
        bpy.context.view_layer.update()  # parts' matrix_world and the pose bones from one evaluation
    parts += [
        _read_part(obj, bone, world_to_arm, bone_index, bones["rest_matrices"], armature_obj) for obj, bone in skeleton.parented
    ]
    for _, bone in skeleton.parented:
        bones["use_deform"][bone_index[bone]] = True  # a rigid part's bone deforms it, whatever its flag
    warnings = bones.pop("warnings") + [w for part in parts for w in part["warnings"]]
    meshes = list(skeleton.skinned) + [obj for obj, _ in skeleton.parented]

    offsets = np.cumsum([0] + [len(p["vertices"]) for p in parts])
    faces = np.concatenate([p["faces"] + off for p, off in zip(parts, offsets[:-1])])
    uvs, texture = _shared_texture(parts)
    vertices = np.concatenate([p["vertices"] for p in parts])
    world = transform_points(arm_world, vertices)
    return RigAsset(
        name=armature_obj.name,
        **bones,
        mesh_names=tuple(obj.name for obj in meshes),
        mesh_offsets=offsets.astype(np.int64),
        vertices=vertices,
        faces=faces.astype(np.int64),
        weights=np.concatenate([p["weights"] for p in parts]),
        vertex_colors=np.concatenate([p["colors"] for p in parts]).astype(np.float32),
        uvs=uvs,
        texture=texture,
        armature_world=arm_world,
        unit_scale=float(bpy.context.scene.unit_settings.scale_length),
        ground_height=rest_floor(float(world[:, 2].min()), float(np.ptp(world[:, 2]))),
        height=float(np.ptp(world[:, 2])),
        warnings=tuple(warnings),
        deform_skeleton=skeleton.control_rig,
        driven_bones=skeleton.driven,
        mesh_bones=tuple([""] * len(skeleton.skinned) + [bone for _, bone in skeleton.parented]),
    )


FLOOR_SNAP: float = 0.02
"""How far from world z = 0 the rest pose's lowest vertex may be, as a share of the character's height,
for the ground to be z = 0."""


def rest_floor(lowest: float, height: float) -> float:
    """The ground's world Z for a character whose rest pose's lowest vertex is at ``lowest`` (world Z)
    and whose rest height is ``height`` (same units): 0.0 when ``|lowest|`` is at most
    :data:`FLOOR_SNAP` × ``height``, else ``lowest``."""
    return 0.0 if abs(lowest) <= FLOOR_SNAP * height else float(lowest)


def _matrix(m) -> np.ndarray:
    return np.array([list(row) for row in m], dtype=np.float64)


def _read_bones(obj: bpy.types.Object, skeleton: DeformSkeleton) -> dict:
    """Skeleton fields of RigAsset for the bones of ``skeleton``, plus a ``warnings`` list.

    A bone whose deform-skeleton parent is its Blender parent keeps Blender's inheritance flags; a
    bone re-parented past skipped helper bones (or a new root) inherits fully from its new parent."""
    bones = [obj.data.bones[name] for name in skeleton.bones]
    pose_bones = [obj.pose.bones[name] for name in skeleton.bones]
    j = len(bones)
    names = skeleton.bones
    parents = np.array(skeleton.parents, dtype=np.int64)
    same_parent = np.array(
        [(b.parent.name if b.parent else None) == (names[p] if p >= 0 else None) for b, p in zip(bones, parents)], dtype=bool
    )
    rest = np.stack([_matrix(b.matrix_local) for b in bones]) if j else np.zeros((0, 4, 4))  # double precision
    flipped = np.array([name in skeleton.flipped for name in names], dtype=bool)
    for i in np.flatnonzero(flipped):  # its frame from its Blender tail, pointing back along it
        rest[i] = rest[i] @ mirror_frame(bones[i].length)
    heads = np.array([tuple(b.head_local) for b in bones], dtype=np.float64).reshape(j, 3)
    tails = np.array([tuple(b.tail_local) for b in bones], dtype=np.float64).reshape(j, 3)
    heads[flipped], tails[flipped] = tails[flipped], heads[flipped].copy()

    def flags(attr: str, source=bones) -> np.ndarray:
        return np.array([bool(getattr(b, attr)) for b in source], dtype=bool)

    limits = np.full((j, 3, 2), np.nan)
    moved: dict[str, list[tuple[str, str]]] = {}  # constraint type → (bone, constraint name)
    on_controls = bool(constraint_driven(obj, names))  # keys go on the controls, checked in Blender
    for i, pb in enumerate(pose_bones):
        for con in pb.constraints:
            if con.mute or con.influence == 0.0:
                continue
            if con.type == "LIMIT_ROTATION" and con.owner_space == "LOCAL":
                for axis, a in enumerate("xyz"):
                    if getattr(con, f"use_limit_{a}"):
                        limits[i, axis] = (getattr(con, f"min_{a}"), getattr(con, f"max_{a}"))
        for con in moving_constraints(pb) if not on_controls else ():
            moved.setdefault(con.type, []).append((pb.name, con.name))
    # a bone Blender moves through constraints or drivers is not limited by its own locks (Rigify locks
    # its DEF- bones): the controls that move it decide how it turns
    posed = np.array([name not in skeleton.driven for name in names], dtype=bool)
    return {
        "bone_names": names,
        "parents": parents,
        "rest_matrices": rest,
        "heads": heads,
        "tails": tails,
        "lengths": np.array([b.length for b in bones], dtype=np.float64),
        "use_deform": flags("use_deform"),
        "use_connect": flags("use_connect") & same_parent,
        "inherit_rotation": flags("use_inherit_rotation") | ~same_parent,
        "use_local_location": flags("use_local_location") | ~same_parent,
        "rotation_modes": tuple(pb.rotation_mode for pb in pose_bones),
        "rotation_locks": np.array([tuple(pb.lock_rotation) for pb in pose_bones], dtype=bool).reshape(j, 3) & posed[:, None],
        "location_locks": np.array([tuple(pb.lock_location) for pb in pose_bones], dtype=bool).reshape(j, 3) & posed[:, None],
        "rotation_limits": limits,
        "blender_parents": tuple(b.parent.name if b.parent else "" for b in bones),
        "warnings": _constraint_warnings(moved) + _bbone_warnings(bones, skeleton.reaching),
    }


def _constraint_warnings(moved: dict[str, list[tuple[str, str]]]) -> list[str]:
    """One line per constrained bone, or one line per constraint type found on many bones."""
    lines = []
    for kind, hits in moved.items():
        if len(hits) <= _LISTED:
            lines += [f"bone '{bone}': {kind} constraint '{name}' is not reproduced by the mirror" for bone, name in hits]
        else:
            named = ", ".join(f"'{bone}'" for bone, _ in hits[:_LISTED])
            lines.append(
                f"{len(hits)} mirrored bones ({named}, …): {kind} constraints are not reproduced by the mirror,"
                " which poses these bones directly over the deform skeleton"
            )
    return lines


def _bbone_warnings(bones, reaching: frozenset[str]) -> list[str]:
    bendy = [b.name for b in bones if b.bbone_segments > 1 and b.name in reaching]
    if not bendy:
        return []
    named = ", ".join(f"'{n}'" for n in bendy[:_LISTED]) + (", …" if len(bendy) > _LISTED else "")
    return [f"{len(bendy)} bones are B-Bones ({named}); the mirror deforms them as straight bones"]


def _read_skinned(obj, world_to_arm: np.ndarray, bone_index: dict, deform: np.ndarray, armature_obj) -> dict:
    """A skinned mesh: rest vertices (armature space), triangles, weights [V,J], colours and UVs."""
    to_arm = world_to_arm @ _matrix(obj.matrix_world)
    return _read_mesh(obj, to_arm, _read_weights(obj, bone_index, deform), _mesh_warnings(obj, armature_obj))


def _read_part(obj, bone: str, world_to_arm: np.ndarray, bone_index: dict, rest: np.ndarray, armature_obj) -> dict:
    """A mesh rigidly following ``bone``: its vertices as Blender places them now, carried back to
    the bone's rest placement (``rest_b · pose_b⁻¹``), weight 1 on the bone."""
    b = bone_index[bone]
    pose = _matrix(armature_obj.pose.bones[bone].matrix) @ np.linalg.solve(
        _matrix(armature_obj.data.bones[bone].matrix_local), rest[b]
    )
    to_arm = rest[b] @ np.linalg.inv(pose) @ world_to_arm @ _matrix(obj.matrix_world)
    weights = np.zeros((len(obj.data.vertices), len(bone_index)), dtype=np.float32)
    weights[:, b] = 1.0
    warnings = []
    mods = [m.name for m in obj.modifiers if m.show_viewport]
    if mods:
        warnings.append(f"mesh '{obj.name}': its modifiers are ignored by the mirror ({', '.join(mods)})")
    return _read_mesh(obj, to_arm, weights, warnings + _shape_key_warnings(obj))


def _shape_key_warnings(obj) -> list[str]:
    if obj.data.shape_keys is not None and len(obj.data.shape_keys.key_blocks) > 1:
        return [f"mesh '{obj.name}': shape keys are ignored by the mirror (it uses the base shape)"]
    return []


def _read_mesh(obj, to_arm: np.ndarray, weights: np.ndarray, warnings: list[str]) -> dict:
    """Rest vertices (armature space, via ``to_arm``), triangles, ``weights``, colours and UVs."""
    mesh = obj.data
    n = len(mesh.vertices)
    co = np.empty(n * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    vertices = transform_points(to_arm, co.reshape(n, 3).astype(np.float64))
    mesh.calc_loop_triangles()
    t = len(mesh.loop_triangles)
    tri_verts = np.empty(t * 3, dtype=np.int32)
    tri_loops = np.empty(t * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tri_verts)
    mesh.loop_triangles.foreach_get("loops", tri_loops)
    tri_verts, tri_loops = tri_verts.reshape(t, 3), tri_loops.reshape(t, 3)
    uvs, texture, colors = _read_colors(mesh, tri_verts, tri_loops)
    return {
        "vertices": vertices,
        "faces": tri_verts.astype(np.int64),
        "weights": weights,
        "uvs": uvs,
        "texture": texture,
        "colors": colors,
        "warnings": warnings,
    }


def _mesh_warnings(obj, armature_obj) -> list[str]:
    warnings = []
    mods = list(obj.modifiers)
    arm_mods = [i for i, m in enumerate(mods) if is_armature_modifier(m, armature_obj)]
    if not arm_mods:  # deformed through its parent type 'Armature', before any modifier
        return _shape_key_warnings(obj)
    first = arm_mods[0]
    before = [m.name for m in mods[:first] if m.show_viewport]
    if before:
        warnings.append(
            f"mesh '{obj.name}': modifiers before the Armature modifier are ignored by the mirror ({', '.join(before)})"
        )
    if len(arm_mods) > 1:
        warnings.append(f"mesh '{obj.name}': {len(arm_mods)} Armature modifiers; only the first is mirrored")
    mod = mods[first]
    if mod.use_deform_preserve_volume:
        warnings.append(f"mesh '{obj.name}': Preserve Volume (dual quaternion) skinning is mirrored as linear blend skinning")
    if mod.use_bone_envelopes:
        warnings.append(f"mesh '{obj.name}': bone envelopes are ignored by the mirror (vertex groups only)")
    warnings += _shape_key_warnings(obj)
    if obj.parent_type == "BONE":
        warnings.append(
            f"mesh '{obj.name}': parented to bone '{obj.parent_bone}'; the mirror treats it as parented to the armature"
        )
    return warnings


def _read_weights(obj, bone_index: dict, deform: np.ndarray) -> np.ndarray:
    """float32 [V,J] weights of deform bones' vertex groups, rows normalised (or all zero)."""
    group_to_bone = np.full(len(obj.vertex_groups), -1, dtype=np.int64)
    for g in obj.vertex_groups:
        b = bone_index.get(g.name, -1)
        if b >= 0 and deform[b]:
            group_to_bone[g.index] = b
    if (group_to_bone < 0).all():
        raise RigError(f"mesh '{obj.name}': none of its vertex groups is named after a deform bone of the armature")
    weights = np.zeros((len(obj.data.vertices), len(bone_index)), dtype=np.float64)
    for v in obj.data.vertices:
        for g in v.groups:
            b = group_to_bone[g.group] if g.group < len(group_to_bone) else -1
            if b >= 0:
                weights[v.index, b] += g.weight
    total = weights.sum(1, keepdims=True)
    if (total <= _MIN_WEIGHT_SUM).all():
        raise RigError(f"mesh '{obj.name}': all of its deform-bone weights are zero")
    weights = np.where(total > _MIN_WEIGHT_SUM, weights / np.maximum(total, 1e-12), 0.0)
    return weights.astype(np.float32)


def _read_colors(mesh, tri_verts: np.ndarray, tri_loops: np.ndarray):
    """(uvs [T,3,2] or None, texture [H,W,3] or None, per-vertex colours [V,3])."""
    n = len(mesh.vertices)
    texture = _base_color_image(mesh)
    uv_layer = mesh.uv_layers.active
    if texture is not None and uv_layer is not None:
        loop_uv = np.empty(len(mesh.loops) * 2, dtype=np.float32)
        uv_layer.data.foreach_get("uv", loop_uv)
        uvs = loop_uv.reshape(-1, 2)[tri_loops]
        return uvs, texture, corner_mean(n, tri_verts, sample_nearest(texture, uvs))
    attr = mesh.color_attributes.active_color if hasattr(mesh.color_attributes, "active_color") else None
    if attr is not None:
        data = np.empty(len(attr.data) * 4, dtype=np.float32)
        attr.data.foreach_get("color_srgb", data)
        data = data.reshape(-1, 4)[:, :3]
        if attr.domain == "POINT":
            return None, None, data
        return None, None, corner_mean(n, tri_verts, data[tri_loops])
    tri_mat = np.empty(len(mesh.loop_triangles), dtype=np.int32)
    mesh.loop_triangles.foreach_get("material_index", tri_mat)
    palette = np.array([_material_color(m) for m in mesh.materials] or [GREY], dtype=np.float32)
    corner = np.repeat(palette[np.clip(tri_mat, 0, len(palette) - 1)][:, None], 3, axis=1)
    return None, None, corner_mean(n, tri_verts, corner)


def _principled(material):
    if material is None or material.node_tree is None:
        return None
    return next((n for n in material.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)


def _base_color_image(mesh) -> np.ndarray | None:
    """The image feeding Base Color of the mesh's first textured material, [H,W,3] top row first."""
    for material in mesh.materials:
        bsdf = _principled(material)
        if bsdf is None or not bsdf.inputs["Base Color"].links:
            continue
        node = bsdf.inputs["Base Color"].links[0].from_node
        if node.type == "TEX_IMAGE" and node.image is not None and node.image.size[0] > 0:
            w, h = node.image.size
            px = np.empty(w * h * node.image.channels, dtype=np.float32)
            node.image.pixels.foreach_get(px)
            img = px.reshape(h, w, node.image.channels)[::-1, :, :3]
            if node.image.is_float:  # float images hold linear values; show them as sRGB
                img = _linear_to_srgb(img)
            return np.ascontiguousarray(np.clip(img, 0, 1))
    return None


def _material_color(material) -> tuple[float, float, float]:
    bsdf = _principled(material)
    if bsdf is not None:
        rgb = np.array(bsdf.inputs["Base Color"].default_value[:3])
    elif material is not None:
        rgb = np.array(material.diffuse_color[:3])
    else:
        return GREY
    return tuple(_linear_to_srgb(rgb))


def _linear_to_srgb(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0, 1)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def _shared_texture(parts: list[dict]):
    """UVs for all triangles and the one texture, when every mesh uses the same texture."""
    textured = [p for p in parts if p["texture"] is not None]
    if len(textured) != len(parts) or any(
        p["texture"].shape != parts[0]["texture"].shape or not np.array_equal(p["texture"], parts[0]["texture"])
        for p in parts[1:]
    ):
        return None, None
    return np.concatenate([p["uvs"] for p in parts]).astype(np.float32), parts[0]["texture"].astype(np.float32)
