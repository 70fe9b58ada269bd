"""Open scenes with Blender's own readers and importers, read their frame rate, and find the armature to work on.

Needs: OBJECT mode (importers switch to it); replaces the current scene when opening a file.
"""

from __future__ import annotations

import os

import bpy

from ...core.errors import InputError

__all__ = [
    "SUPPORTED_INPUTS",
    "load_scene",
    "scene_fps",
    "find_armature",
    "character_armature",
    "moves_a_mesh",
    "skinned_meshes",
    "is_armature_modifier",
    "bone_followed",
]

SUPPORTED_INPUTS = (".blend", ".gltf", ".glb", ".fbx")


def load_scene(path: str) -> None:
    """Open a ``.blend`` or import a ``.gltf``/``.glb``/``.fbx`` into a new empty scene.

    glTF is imported without bone-shape helper objects. Raises InputError (one line) for a missing,
    unreadable or unsupported file.
    """
    ext = os.path.splitext(path)[1].lower()
    if ext not in SUPPORTED_INPUTS:
        raise InputError(f"input '{path}' is not a supported file ({', '.join(SUPPORTED_INPUTS)})")
    if not os.path.isfile(path):
        raise InputError(f"input '{path}' does not exist")
    if not os.access(path, os.R_OK):
        raise InputError(f"input '{path}' is not readable")
    try:
        if ext == ".blend":
            bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
            return
        bpy.ops.wm.read_homefile(use_empty=True)
        if ext in (".gltf", ".glb"):
            bpy.ops.import_scene.gltf(filepath=path, disable_bone_shape=True)
        else:
            bpy.ops.import_scene.fbx(filepath=path)
    except (RuntimeError, ValueError, KeyError) as exc:  # Blender reports reader failures this way
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise InputError(f"input '{path}' could not be read: {first}") from None


def scene_fps(scene: bpy.types.Scene) -> float:
    """The scene's frame rate in frames per second: ``render.fps / render.fps_base`` (29.97 for NTSC's
    30000 / 1001; ``render.fps`` alone is only the numerator)."""
    return scene.render.fps / scene.render.fps_base


def find_armature(name: str | None = None) -> bpy.types.Object:
    """The armature object called ``name``, or the only armature in the current file.

    With several armatures and no name, the only one that moves a mesh (:func:`moves_a_mesh`; e.g. a
    Rigify rig beside its metarig), an armature whose bones another one moving a mesh copies whole not
    counted (a game rig over its control rig: the game rig, :func:`.character.game_rig.followed_armature`). A named
    armature goes through :func:`character_armature`. Raises InputError naming the problem: no armature, the name not
    found (or not an armature), or several armatures that move meshes and no name given.
    """
    armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None:
            known = ", ".join(sorted(o.name for o in armatures)) or "none"
            raise InputError(f"no object named '{name}' (armatures in the file: {known})")
        if obj.type != "ARMATURE":
            raise InputError(f"object '{name}' is a {obj.type.lower()}, not an armature")
        return character_armature(obj)
    if not armatures:
        raise InputError("the file has no armature")
    if len(armatures) > 1:
        moving = [obj for obj in armatures if moves_a_mesh(obj)]  # a Rigify metarig beside its rig moves none
        copied = {_source_of(obj) for obj in moving} - {None}
        moving = [obj for obj in moving if obj not in copied]  # a game rig's source: the game rig is read
        if len(moving) == 1:
            return moving[0]
        names = ", ".join(sorted(o.name for o in (moving or armatures)))
        raise InputError(
            f"the file has {len(moving or armatures)} armatures that move meshes ({names}); choose one with --armature"
        )
    return armatures[0]


def character_armature(armature_obj: bpy.types.Object) -> bpy.types.Object:
    """The armature the character's meshes follow when ``armature_obj`` is chosen: ``armature_obj`` itself,
    or, when its bones move no mesh, the one armature whose deform bones all copy its bones whole and that
    does (a game rig whose mesh is bound to it over the control rig ``armature_obj``; the keys still go on
    ``armature_obj``'s controls, :func:`.character.game_rig.followed_armature`)."""
    if _poses_a_mesh(armature_obj):
        return armature_obj
    copying = [o for o in bpy.data.objects if o.type == "ARMATURE" and _source_of(o) == armature_obj and _poses_a_mesh(o)]
    return copying[0] if len(copying) == 1 else armature_obj


def _poses_a_mesh(armature_obj: bpy.types.Object) -> bool:
    """Whether the armature's bones move a mesh: one it deforms, or one held on a bone (not a mesh that
    only hangs from the armature object)."""
    meshes = (o for o in bpy.data.objects if o.type == "MESH")
    return bool(skinned_meshes(armature_obj)) or any(bone_followed(o, armature_obj) is not None for o in meshes)


def _source_of(armature_obj: bpy.types.Object) -> bpy.types.Object | None:
    """The armature whose bones ``armature_obj``'s deform bones all copy whole (a game rig's control rig), else None."""
    from .game_rig import deform_bone_names, followed_armature

    followed = followed_armature(armature_obj, deform_bone_names(armature_obj))
    return followed[0] if followed is not None else None


def moves_a_mesh(armature_obj: bpy.types.Object) -> bool:
    """Whether any mesh follows ``armature_obj``: through an Armature modifier, held on one of its bones
    by a constraint (:func:`bone_followed`), or parented to it (to one of its bones or to the object),
    directly or through other objects."""
    if skinned_meshes(armature_obj):
        return True
    for obj in bpy.data.objects:
        if obj.type == "MESH":
            if bone_followed(obj, armature_obj) is not None:
                return True
            parent = obj.parent
            while parent is not None and parent != armature_obj:
                parent = parent.parent
            if parent is not None:
                return True
    return False


def skinned_meshes(armature_obj: bpy.types.Object) -> list[bpy.types.Object]:
    """Mesh objects that ``armature_obj`` deforms by their vertex groups, by name: those with an enabled
    Armature modifier that points at it, and those parented to it with parent type 'Armature' (the
    older "Armature Deform" parenting without a modifier, which Blender still deforms).
    :func:`is_armature_modifier` tells which."""
    meshes = [
        obj
        for obj in bpy.data.objects
        if obj.type == "MESH"
        and (any(is_armature_modifier(m, armature_obj) for m in obj.modifiers) or _deform_parented(obj, armature_obj))
    ]
    return sorted(meshes, key=lambda o: o.name)


def is_armature_modifier(mod: bpy.types.Modifier, armature_obj: bpy.types.Object) -> bool:
    """Whether ``mod`` is an enabled Armature modifier that points at ``armature_obj`` (a mesh
    :func:`skinned_meshes` lists without one is deformed through its parent type 'Armature')."""
    return mod.type == "ARMATURE" and mod.object == armature_obj and mod.show_viewport


def _deform_parented(obj: bpy.types.Object, armature_obj: bpy.types.Object) -> bool:
    return obj.parent == armature_obj and obj.parent_type == "ARMATURE"


_FOLLOWING = {"CHILD_OF", "COPY_TRANSFORMS"}
"""Object constraints that, whole (influence 1, every channel), place an object rigidly on a bone."""


def bone_followed(obj: bpy.types.Object, armature_obj: bpy.types.Object) -> str | None:
    """The bone of ``armature_obj`` that ``obj`` follows rigidly, or None.

    Up ``obj``'s object-parent chain (``obj`` first), the first object that is held whole by a Child Of
    or Copy Transforms constraint on a bone of the armature (enabled, influence 1, every location and
    rotation channel of a Child Of) follows that bone; else the chain's last object follows the bone it
    is parented to (``parent_type 'BONE'``) when its parent is the armature."""
    bones = armature_obj.data.bones
    o = obj
    while o is not None:
        for con in o.constraints:
            if con.type not in _FOLLOWING or con.mute or not con.is_valid:
                continue
            if con.type == "CHILD_OF":
                channels = all(getattr(con, f"use_{c}_{a}") for c in ("location", "rotation") for a in "xyz")
            else:
                channels = con.mix_mode == "REPLACE" and con.target_space == con.owner_space == "WORLD"
            whole = channels and con.influence >= 1.0 - 1e-6
            if whole and con.target == armature_obj and con.subtarget in bones:
                return con.subtarget
        if o.parent == armature_obj:
            return o.parent_bone if o.parent_type == "BONE" and o.parent_bone in bones else None
        o = o.parent
    return None
