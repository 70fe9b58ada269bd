"""RigAsset: everything the optimiser needs to know about a rigged character, as plain numpy.

A RigAsset is a snapshot of one Blender armature and every mesh it deforms, taken on Blender's
main thread by :func:`akd_blender.blender.character.extract.rig_from_armature` (or built in code by
:mod:`akd_blender.core.character.procedural`). It never references Blender data, so it can cross to a worker
thread or another process, and it is frozen so nobody changes it under a running job.

Conventions
-----------
- ``J`` bones in Blender's order (``armature.data.bones``, which is also the pose-bone order).
- ``V`` vertices of all deformed meshes concatenated in ``mesh_names`` order; ``T`` triangles.
- Positions are in the **armature object's space** (Blender's "armature space", the space of
  ``bone.matrix_local``) in Blender units. ``armature_world`` maps armature space to world space.
- Matrices are 4×4, row-major, acting on column vectors (``p' = M @ p``), as in ``mathutils``.
- Colours are display (sRGB-encoded) values in [0, 1].
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

__all__ = ["RigAsset", "RigError", "transform_points", "save_rig", "load_rig"]


class RigError(InputError):
    """A rig the mirror cannot use; the message names the object or bone at fault."""


@dataclass(frozen=True, eq=False)
class RigAsset:
    """A rigged, skinned character as numpy arrays (see the module docstring for conventions).

    Skeleton fields (J bones):
        name: the armature object's name.
        bone_names: bone names, Blender order.
        parents: int64 [J], index of each bone's parent, -1 for a root. Parents precede children.
        rest_matrices: float64 [J,4,4], ``bone.matrix_local`` (rest pose, armature space).
        heads, tails: float64 [J,3], rest head/tail positions (armature space).
        lengths: float64 [J], rest bone lengths.
        use_deform: bool [J], whether the bone deforms meshes (only these carry weights).
        use_connect: bool [J], connected to the parent's tail (Blender ignores their location).
        inherit_rotation: bool [J], ``bone.use_inherit_rotation``.
        use_local_location: bool [J], ``bone.use_local_location`` (location channel in the bone's
            rest frame when True, in armature-aligned axes when False).
        rotation_modes: the pose bones' ``rotation_mode`` (e.g. ``"QUATERNION"``, ``"XYZ"``).
        rotation_locks: bool [J,3], ``pose_bone.lock_rotation`` (x, y, z of the local rotation).
        location_locks: bool [J,3], ``pose_bone.lock_location``.
        rotation_limits: float64 [J,3,2] radians, min/max Euler-XYZ angle per local axis from a
            Limit Rotation constraint (local space); NaN where unlimited.

    Which Blender bones are mirrored (the bone names above ARE the Blender bone names):
        deform_skeleton: False when every bone of the armature is mirrored in Blender's order and
            hierarchy (a plain rig, and rigs built in code); True when ``bone_names`` is the
            armature's deform skeleton (a control rig: only the bones whose motion reaches a mesh,
            parents first, ``parents`` their nearest kept ancestors;
            :mod:`akd_blender.blender.character.deform_skeleton` states the rule).
        driven_bones: the mirrored bones Blender moves through constraints or drivers (keys on them
            do nothing in Blender: their motion has to be written onto the rig's controls).
        blender_parents: per bone, the name of its parent in the armature ('' for none), or ``()``
            for rigs built in code; differs from ``bone_names[parents]`` where helper bones were
            skipped.
        tied_bones: the mirrored bones that the rig's controls move only together with their
            mirrored parent, as one piece (a limb split into segments that one FK control turns); the
            motion library keeps them at rest relative to that parent. ``()`` for a plain rig.

    Mesh fields:
        mesh_names: the deformed mesh objects' names, in concatenation order.
        mesh_offsets: int64 [M+1], vertex range of mesh m is ``mesh_offsets[m]:mesh_offsets[m+1]``.
        vertices: float64 [V,3], rest positions in armature space (object transforms applied).
        faces: int64 [T,3], triangles indexing ``vertices``.
        weights: float32 [V,J], skin weights; each row sums to 1, or is all zero for a vertex with
            no deform weight (such a vertex follows its object, i.e. stays put in armature space).
        vertex_colors: float32 [V,3], a per-vertex colour (texture averaged over the vertex's
            corners, else vertex colours, else the material's base colour, else grey).
        uvs: float32 [T,3,2] per-triangle-corner UVs, or None.
        texture: float32 [H,W,3] base-colour image (row 0 is the *top* of the image), or None.
        mesh_bones: per mesh in ``mesh_names``, the bone a rigidly parented mesh follows (Blender's
            parent type 'Bone': its vertices weigh 1 on that bone), '' for a skinned mesh; or ``()``.

    Placement:
        armature_world: float64 [4,4], armature object → world matrix.
        unit_scale: the scene's ``unit_settings.scale_length`` (metres per Blender unit).
        ground_height: world Z of the ground the character stands on: the lowest vertex of the pose
            Blender showed when the rig was read (the mirror), of the rest pose for built rigs.
        height: world-Z extent of the rest-pose meshes (the character's height, Blender units).
        warnings: features the mirror does not reproduce exactly, each naming its bone/object.
    """

    name: str
    bone_names: tuple[str, ...]
    parents: np.ndarray
    rest_matrices: np.ndarray
    heads: np.ndarray
    tails: np.ndarray
    lengths: np.ndarray
    use_deform: np.ndarray
    use_connect: np.ndarray
    inherit_rotation: np.ndarray
    use_local_location: np.ndarray
    rotation_modes: tuple[str, ...]
    rotation_locks: np.ndarray
    location_locks: np.ndarray
    rotation_limits: np.ndarray
    mesh_names: tuple[str, ...]
    mesh_offsets: np.ndarray
    vertices: np.ndarray
    faces: np.ndarray
    weights: np.ndarray
    vertex_colors: np.ndarray
    uvs: np.ndarray | None = None
    texture: np.ndarray | None = None
    armature_world: np.ndarray = field(default_factory=lambda: np.eye(4))
    unit_scale: float = 1.0
    ground_height: float = 0.0
    height: float = 1.0
    warnings: tuple[str, ...] = ()
    deform_skeleton: bool = False
    driven_bones: tuple[str, ...] = ()
    blender_parents: tuple[str, ...] = ()
    mesh_bones: tuple[str, ...] = ()
    tied_bones: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.validate()

    @property
    def num_bones(self) -> int:
        return len(self.bone_names)

    @property
    def num_vertices(self) -> int:
        return int(self.vertices.shape[0])

    @property
    def root_indices(self) -> np.ndarray:
        """int64 [R], the bones without a parent."""
        return np.flatnonzero(self.parents < 0)

    def bone_index(self, name: str) -> int:
        """Index of the bone called ``name``; RigError naming it when absent."""
        try:
            return self.bone_names.index(name)
        except ValueError:
            raise RigError(f"armature '{self.name}' has no bone named '{name}'") from None

    def world_vertices(self) -> np.ndarray:
        """float64 [V,3], the rest-pose vertices in world space."""
        return transform_points(self.armature_world, self.vertices)

    def validate(self) -> None:
        """Check shapes and invariants; RigError naming the first field that is wrong."""
        j, v = len(self.bone_names), self.vertices.shape[0]
        expect = {
            "parents": (j,),
            "rest_matrices": (j, 4, 4),
            "heads": (j, 3),
            "tails": (j, 3),
            "lengths": (j,),
            "use_deform": (j,),
            "use_connect": (j,),
            "inherit_rotation": (j,),
            "use_local_location": (j,),
            "rotation_locks": (j, 3),
            "location_locks": (j, 3),
            "rotation_limits": (j, 3, 2),
            "vertices": (v, 3),
            "weights": (v, j),
            "vertex_colors": (v, 3),
            "armature_world": (4, 4),
        }
        for key, shape in expect.items():
            got = tuple(np.shape(getattr(self, key)))
            if got != shape:
                raise RigError(f"RigAsset '{self.name}': field {key} has shape {got}, expected {shape}")
        if len(self.rotation_modes) != j:
            raise RigError(f"RigAsset '{self.name}': rotation_modes has {len(self.rotation_modes)} entries, expected {j}")
        if j == 0:
            raise RigError(f"armature '{self.name}' has no bones")
        for b, p in enumerate(self.parents):
            if not -1 <= p < b:
                raise RigError(
                    f"RigAsset '{self.name}': bone '{self.bone_names[b]}' has parent index {p}; parents must precede children"
                )
        if self.faces.ndim != 2 or self.faces.shape[1] != 3 or (self.faces.size and self.faces.max() >= v):
            raise RigError(f"RigAsset '{self.name}': faces must be [T,3] indices below {v}")
        if self.mesh_offsets[0] != 0 or self.mesh_offsets[-1] != v or len(self.mesh_offsets) != len(self.mesh_names) + 1:
            raise RigError(f"RigAsset '{self.name}': mesh_offsets do not partition the {v} vertices")
        if self.blender_parents and len(self.blender_parents) != j:
            raise RigError(f"RigAsset '{self.name}': blender_parents has {len(self.blender_parents)} entries, expected {j}")
        if not set(self.tied_bones) <= set(self.bone_names):
            raise RigError(f"RigAsset '{self.name}': tied_bones names bones it does not have")
        if self.mesh_bones and len(self.mesh_bones) != len(self.mesh_names):
            raise RigError(f"RigAsset '{self.name}': mesh_bones must name one bone (or '') per mesh")
        if self.uvs is not None and self.uvs.shape != (self.faces.shape[0], 3, 2):
            raise RigError(f"RigAsset '{self.name}': uvs must be [T,3,2]")


def transform_points(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 4×4 affine ``matrix`` to ``points`` [...,3]; returns [...,3]."""
    return points @ matrix[:3, :3].T + matrix[:3, 3]


def save_rig(rig: RigAsset, path: str) -> None:
    """Write ``rig`` to a ``.npz`` file (arrays as they are, names and scalars alongside) so a job can
    run where Blender is not installed (e.g. a GPU machine)."""
    from dataclasses import fields

    arrays, meta = {}, {}
    for f in fields(rig):
        value = getattr(rig, f.name)
        if isinstance(value, np.ndarray):
            arrays[f.name] = value
        elif value is not None:
            meta[f.name] = list(value) if isinstance(value, tuple) else value
    np.savez_compressed(path, __meta__=np.array(json.dumps(meta)), **arrays)


def load_rig(path: str) -> RigAsset:
    """Read a RigAsset written by :func:`save_rig` (RigError naming the file if it is not one)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["__meta__"]))
            arrays = {k: data[k] for k in data.files if k != "__meta__"}
    except (OSError, KeyError, ValueError) as exc:
        raise RigError(f"'{path}' is not a saved RigAsset ({exc})") from None
    tuples = (
        "bone_names",
        "rotation_modes",
        "mesh_names",
        "warnings",
        "driven_bones",
        "blender_parents",
        "mesh_bones",
        "tied_bones",
    )
    meta = {k: tuple(v) if k in tuples else v for k, v in meta.items()}
    return RigAsset(**meta, **arrays)
