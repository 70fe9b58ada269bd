"""The deform skeleton: which bones of an armature the mirror takes as the character's motion.

Needs: any mode (reads data only); call on Blender's main thread. The scene is not changed.

The rule, read from the rig itself (never from bone names):

1. **Meshes reached.** A mesh is reached by the armature when it has an enabled Armature modifier
   using it (skinned), or when it follows a bone rigidly (a rigid part, weight 1 on that bone): its
   object-parent chain ends at the armature with ``parent_type 'BONE'``, or it (or an object it hangs
   from) is held whole by a Child Of or Copy Transforms constraint on the bone (:func:`bone_followed`).
2. **Bones that reach a mesh.** A deform bone (``use_deform``) whose vertex group in a skinned mesh
   holds at least one non-zero weight, and every bone a rigid part is parented to.
3. **Plain rigs.** When no bone of the armature is moved by a constraint (any enabled one other
   than a local-space Limit Rotation, which the mirror reads) or by a driver on its location,
   rotation or scale, every bone is posed directly by the animator: the deform skeleton is then
   every bone of the armature, in Blender's order and hierarchy (glTF/FBX skeletons, the procedural
   family: the mirror is what it always was, non-deforming roots and leaves included).
4. **Control rigs** (some bone moved by a constraint or driver: Rigify, IK limbs): the deform
   skeleton is the bones of (2) and the deform bones that link two of them in Blender's hierarchy
   (:func:`_links`). Controls, mechanism and helper bones (IK targets and
   poles, Rigify's ``MCH-``/``ORG-``/controls) reach no mesh and are left out. Deform bones that reach
   no mesh but hang from kept ones in a chain down to the floor are kept too (a limb's last bones that
   automatic weights left bare, :func:`_bare_legs`). Each kept bone's
   parent is found by walking up its Blender ancestors: the first ancestor that is kept, or whose
   rest head and tail coincide with those of a kept bone (a helper a deform bone is a copy of, as
   Rigify's ``ORG-spine.003`` is of ``DEF-spine.003``), gives the parent; none gives a root.
5. **One tree.** A kept bone whose head lies farther from its parent than the parent is long, with a
   bone below it touching the parent's head or tail (a tail built tip first whose deform bones a game
   rig parents in that order), is cut from its parent. When rule 4 and that cut leave several trees
   (Rigify parents a tail's deform chain under its controls, tip first), each smaller tree hangs from
   the bone of the largest tree that comes nearest to it at rest (the least distance between the two trees' bone heads and tails), by its own bone
   nearest to that one: the tree is re-rooted there (its root when as near), so a tail built tip
   first hangs from its base.
   Bones are ordered parents first (Blender's order where the hierarchy allows).

In a control rig the kept bones are often moved by constraints (Rigify's ``DEF-`` bones copy
``ORG-``/tweak bones); the mirror poses them directly over the deform skeleton's own hierarchy, so
the motion it distils is the deform bones' evaluated motion, which :func:`evaluated_channels` reads
back from Blender's evaluation.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass

import bpy
import numpy as np
import torch

from ...core.character.rig import RigAsset
from ...core.character.rotations import matrix_to_quat, nearest_rotation
from ...core.motion.clip import MotionClip
from .io import bone_followed, scene_fps, skinned_meshes

__all__ = [
    "DeformSkeleton",
    "find_deform_skeleton",
    "moving_constraints",
    "evaluated_channels",
    "evaluated_pose",
    "evaluated_clip",
    "frame_offsets",
    "mirror_frame",
]

_COINCIDE = 1e-5  # × the armature's rest extent: heads and tails this close are the same bone
_TRANSFORM_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(location|rotation_\w+|scale)$')


@dataclass(frozen=True)
class DeformSkeleton:
    """The bones the mirror takes from one armature (see the module docstring for the rule).

    bones: Blender bone names of the deform skeleton, parents first.
    parents: index into ``bones`` of each bone's parent in the deform skeleton, -1 for a root.
    reaching: the bones whose motion reaches a mesh directly (weights or a rigid part).
    skinned: mesh objects with an Armature modifier using the armature, by name.
    parented: ``(mesh object, bone name)`` of meshes rigidly following a bone, by object name.
    control_rig: True when some bone is moved by a constraint or driver (rule 4), False for a plain
        rig whose every bone is mirrored (rule 3).
    driven: the kept bones that Blender moves through constraints or drivers (keys on them do
        nothing in Blender), Blender order.
    flipped: bones of a re-rooted tree (rule 5) that point back towards the bone they now hang from: the
        mirror's frame of each runs from its Blender tail towards its head (:func:`mirror_frame`).
    """

    bones: tuple[str, ...]
    parents: tuple[int, ...]
    reaching: frozenset[str]
    skinned: tuple[bpy.types.Object, ...]
    parented: tuple[tuple[bpy.types.Object, str], ...]
    control_rig: bool
    driven: tuple[str, ...]
    flipped: frozenset[str] = frozenset()


def moving_constraints(pose_bone: bpy.types.PoseBone) -> list[bpy.types.Constraint]:
    """The enabled constraints of ``pose_bone`` that move it, i.e. all but a local-space Limit
    Rotation (which the mirror reads as joint limits) and muted or zero-influence ones."""
    return [
        con
        for con in pose_bone.constraints
        if not (con.mute or con.influence == 0.0 or (con.type == "LIMIT_ROTATION" and con.owner_space == "LOCAL"))
    ]


def _driven_by_drivers(armature_obj: bpy.types.Object) -> set[str]:
    """Bones whose location, rotation or scale channels carry a driver."""
    ad = armature_obj.animation_data
    names = set()
    for fc in ad.drivers if ad is not None else ():
        match = _TRANSFORM_PATH.match(fc.data_path)
        if match and not fc.mute:
            names.add(match.group(1).replace('\\"', '"').replace("\\\\", "\\"))
    return names


def _parented_parts(armature_obj: bpy.types.Object, skinned) -> list[tuple[bpy.types.Object, str]]:
    """Meshes in the view layer (not skinned) that follow a bone of ``armature_obj`` (:func:`bone_followed`)."""
    parts = []
    for obj in bpy.context.view_layer.objects:
        if obj.type != "MESH" or obj in skinned:
            continue
        bone = bone_followed(obj, armature_obj)
        if bone is not None:
            parts.append((obj, bone))
    return sorted(parts, key=lambda part: part[0].name)


def _weighted_bones(mesh_obj: bpy.types.Object, deform_names: set[str]) -> set[str]:
    """Deform bones whose vertex group in ``mesh_obj`` holds a non-zero weight."""
    group_names = {g.index: g.name for g in mesh_obj.vertex_groups if g.name in deform_names}
    used = set()
    if not group_names:
        return used
    for v in mesh_obj.data.vertices:
        for g in v.groups:
            if g.weight > 0.0 and g.group in group_names:
                used.add(g.group)
    return {group_names[i] for i in used}


def find_deform_skeleton(armature_obj: bpy.types.Object) -> DeformSkeleton:
    """The deform skeleton of ``armature_obj`` (the module docstring states the rule)."""
    bones = armature_obj.data.bones
    order = {b.name: i for i, b in enumerate(bones)}
    skinned = tuple(skinned_meshes(armature_obj))
    parented = tuple(_parented_parts(armature_obj, set(skinned)))
    deform_names = {b.name for b in bones if b.use_deform}
    reaching = {name for obj in skinned for name in _weighted_bones(obj, deform_names)}
    reaching |= {bone for _, bone in parented}
    moved = _driven_by_drivers(armature_obj) | {pb.name for pb in armature_obj.pose.bones if moving_constraints(pb)}
    if not moved:
        names = tuple(b.name for b in bones)
        parents = tuple(order[b.parent.name] if b.parent else -1 for b in bones)
        return DeformSkeleton(names, parents, frozenset(reaching), skinned, parented, False, ())
    linked = reaching | _links(armature_obj, reaching)
    kept = sorted(linked | _bare_legs(armature_obj, linked, skinned), key=order.__getitem__)
    parent_of = _deform_parents(armature_obj, kept)
    _cut_far_hung_chains(armature_obj, parent_of)
    turned = _join_trees(armature_obj, parent_of, order)
    names, parents = _parents_first(kept, parent_of, order)
    driven = tuple(n for n in names if n in moved)
    flipped = frozenset(n for n in turned if _points_back(bones[n], bones[parent_of[n]]))
    return DeformSkeleton(names, parents, frozenset(reaching), skinned, parented, True, driven, flipped)


def _points_back(bone, parent) -> bool:
    """Whether ``bone``'s rest tail lies nearer its mirror parent's segment than its head does."""
    ends = np.array([tuple(parent.head_local), tuple(parent.tail_local)])
    return _segment_gap(np.array(bone.tail_local), ends) < _segment_gap(np.array(bone.head_local), ends)


def mirror_frame(length: float) -> np.ndarray:
    """[4,4] a flipped bone's mirror frame in its Blender frame: origin at the Blender tail (``length`` along
    its Y axis), turned half round its Z axis so that its Y axis points back along the bone."""
    out = np.diag([-1.0, -1.0, 1.0, 1.0])
    out[1, 3] = length
    return out


def frame_offsets(armature_obj: bpy.types.Object, rig: RigAsset) -> np.ndarray:
    """[J,4,4] each of ``rig``'s bones' mirror rest frame in its Blender rest frame (identity but for flipped
    bones): a mirror pose ``M`` is Blender's ``M · offset⁻¹``."""
    bones = armature_obj.data.bones
    blender = np.stack([np.array(bones[n].matrix_local, dtype=np.float64) for n in rig.bone_names])
    return np.linalg.solve(blender, rig.rest_matrices)


def _links(armature_obj: bpy.types.Object, reaching: set[str]) -> set[str]:
    """Deform bones that reach no mesh but link two that do: each lies on the Blender parent chain from a
    bone of ``reaching`` up to the next one (a finger's middle segment left without weights by Blender's
    automatic weights still turns the segment beyond it)."""
    links: set[str] = set()
    for name in reaching:
        path, a = [], armature_obj.data.bones[name].parent
        while a is not None and a.name not in reaching:
            if a.use_deform:
                path.append(a.name)
            a = a.parent
        if a is not None:
            links.update(path)
    return links


def _bare_legs(armature_obj: bpy.types.Object, kept: set[str], skinned) -> set[str]:
    """Deform bones that reach no mesh but hang from a kept bone in a chain of deform bones (each's
    Blender parent kept or one of them) down to the floor: the chain's lowest rest joint lies within
    5 % of the skinned meshes' height of their lowest vertex, or below it. A limb whose last bones
    automatic weights left bare (a horse's cannon, pastern and hoof) is read to its end."""
    world = np.asarray(armature_obj.matrix_world)
    heights = []
    for obj in skinned:
        co = np.empty(3 * len(obj.data.vertices))
        obj.data.vertices.foreach_get("co", co)
        heights.append(co.reshape(-1, 3) @ np.asarray(obj.matrix_world)[2, :3] + obj.matrix_world[2][3])
    z = np.concatenate(heights) if heights else np.zeros(0)
    if not len(z):
        return set()
    floor, band = float(z.min()), 0.05 * float(np.ptp(z))
    bare: dict[str, list[str]] = {}  # each hanging bone's chain down to its lowest end
    for bone in armature_obj.data.bones:  # parents before children
        parent = bone.parent
        if not bone.use_deform or bone.name in kept or parent is None or not (parent.name in kept or parent.name in bare):
            continue
        bare[bone.name] = [*bare.get(parent.name, []), bone.name]

    def low(name: str) -> float:
        b = armature_obj.data.bones[name]
        return min(float((world @ np.array([*b.head_local, 1.0]))[2]), float((world @ np.array([*b.tail_local, 1.0]))[2]))

    return {n for chain in bare.values() if low(chain[-1]) <= floor + band for n in chain}


def _deform_parents(armature_obj: bpy.types.Object, kept: list[str]) -> dict[str, str | None]:
    """Each kept bone's parent in the deform skeleton (rule 4), cycles broken by walking on."""
    bones = armature_obj.data.bones
    kept_set = set(kept)
    heads = np.array([tuple(b.head_local) for b in bones]).reshape(-1, 3)
    extent = max(float(np.ptp(heads, axis=0).max()) if len(heads) else 0.0, 1e-9)
    key = {}  # rounded (head, tail) → kept bones sharing that rest placement
    for name in kept:
        b = bones[name]
        key.setdefault(_placement(b, extent), []).append(name)

    def candidates(name: str):
        a = bones[name].parent
        while a is not None:
            if a.name in kept_set:
                yield a.name
            else:
                yield from (c for c in key.get(_placement(a, extent), ()) if c != name)
            a = a.parent

    walks = {name: candidates(name) for name in kept}
    parent_of = {name: next(walks[name], None) for name in kept}
    for _ in range(len(kept)):  # a cycle: move its first bone's parent further up its walk
        cycle = _find_cycle(parent_of)
        if cycle is None:
            break
        parent_of[cycle] = next(walks[cycle], None)
    return parent_of


_TOUCH = 1e-3  # × the armature's rest extent: a bone end this close to another's touches it


def _cut_far_hung_chains(armature_obj: bpy.types.Object, parent_of: dict[str, str | None]) -> None:
    """Rule 5's premise inside one tree (in place): a kept bone whose rest head lies farther from its
    parent's segment than the parent is long, while another bone below it touches the parent's head or
    tail (within :data:`_TOUCH` of the rest extent), is cut from its parent, so that :func:`_join_trees`
    hangs that chain by the end that meets the body: a tail built from its tip whose deform bones a game
    rig parents tip first."""
    bones = armature_obj.data.bones
    heads = np.array([tuple(b.head_local) for b in bones]).reshape(-1, 3)
    touch = _TOUCH * max(float(np.ptp(heads, axis=0).max()) if len(heads) else 0.0, 1e-9)
    children: dict[str, list[str]] = {}
    for name, parent in parent_of.items():
        if parent is not None:
            children.setdefault(parent, []).append(name)

    def below(name: str) -> list[str]:
        out, stack = [], list(children.get(name, ()))
        while stack:
            n = stack.pop()
            out.append(n)
            stack += children.get(n, ())
        return out

    for name, parent in list(parent_of.items()):
        if parent is None:
            continue
        p = bones[parent]
        ends = np.array([tuple(p.head_local), tuple(p.tail_local)])
        if _segment_gap(np.array(bones[name].head_local), ends) <= p.length:
            continue
        touching = any(
            np.linalg.norm(ends - np.array(end), axis=-1).min() <= touch
            for n in below(name)
            for end in (bones[n].head_local, bones[n].tail_local)
        )
        if touching:
            parent_of[name] = None


def _segment_gap(point: np.ndarray, ends: np.ndarray) -> float:
    """Distance from ``point`` [3] to the segment between ``ends`` [2,3]."""
    a, b = ends
    t = np.clip((point - a) @ (b - a) / max(float((b - a) @ (b - a)), 1e-12), 0.0, 1.0)
    return float(np.linalg.norm(point - (a + t * (b - a))))


def _join_trees(armature_obj: bpy.types.Object, parent_of: dict[str, str | None], order: dict[str, int]) -> list[str]:
    """Rule 5: hang each smaller tree, re-rooted at its bone nearest the largest tree, from the nearest bone of
    the largest tree (in place). Returns the bones whose parent link turned round."""
    bones = armature_obj.data.bones

    def root_of(name: str) -> str:
        while parent_of[name] is not None:
            name = parent_of[name]
        return name

    trees: dict[str, list[str]] = {}
    for name in sorted(parent_of, key=order.__getitem__):
        trees.setdefault(root_of(name), []).append(name)
    if len(trees) < 2:
        return []
    main = max(trees, key=lambda r: (len(trees[r]), -order[r]))

    def ends(names: list[str]) -> np.ndarray:
        return np.array([tuple(bones[n].head_local) + tuple(bones[n].tail_local) for n in names]).reshape(-1, 3)

    joined, turned = list(trees.pop(main)), []
    for root, members in sorted(trees.items(), key=lambda item: -len(item[1])):
        theirs = ends(members).reshape(len(members), 2, 3)
        ours = ends(joined).reshape(len(joined), 2, 3)
        gap = np.linalg.norm(ours[:, None, :, None, :] - theirs[None, :, None], axis=-1).min(axis=(2, 3))  # [ours, theirs]
        near = gap.min(axis=0)
        nearest = root if near[members.index(root)] <= near.min() + 1e-9 else members[int(np.argmin(near))]
        # a chain built from its free end (a Rigify tail) hangs from the end that meets the body
        turned += _reroot(parent_of, nearest)
        parent_of[nearest] = joined[int(np.argmin(gap[:, members.index(nearest)]))]
        joined += members
    return turned


def _reroot(parent_of: dict[str, str | None], new_root: str) -> list[str]:
    """Make ``new_root`` the root of its tree (in place): the parent links on its path to the old root turn
    round. Returns the path's bones whose link turned (``new_root`` first), empty when it was the root."""
    previous, node, path = None, new_root, []
    while node is not None:
        parent = parent_of[node]
        parent_of[node] = previous
        previous, node = node, parent
        path.append(previous)
    return path if len(path) > 1 else []


def _placement(bone, extent: float) -> tuple:
    q = _COINCIDE * extent
    return tuple(np.round(np.concatenate([bone.head_local, bone.tail_local]) / q).astype(np.int64).tolist())


def _find_cycle(parent_of: dict[str, str | None]) -> str | None:
    state: dict[str, int] = {}
    for start in parent_of:
        path, node = [], start
        while node is not None and state.get(node, 0) == 0:
            state[node] = 1
            path.append(node)
            node = parent_of.get(node)
        if node is not None and state.get(node) == 1:
            return node
        for n in path:
            state[n] = 2
    return None


def _parents_first(kept: list[str], parent_of: dict[str, str | None], order: dict[str, int]):
    """Topological order (parents first, Blender order among the ready) and parent indices."""
    children: dict[str | None, list[str]] = {}
    for name in kept:
        children.setdefault(parent_of[name], []).append(name)
    ready = [(order[n], n) for n in children.get(None, [])]
    heapq.heapify(ready)
    names = []
    while ready:
        _, name = heapq.heappop(ready)
        names.append(name)
        for child in children.get(name, []):
            heapq.heappush(ready, (order[child], child))
    index = {n: i for i, n in enumerate(names)}
    return tuple(names), tuple(index[parent_of[n]] if parent_of[n] is not None else -1 for n in names)


def evaluated_channels(
    armature_obj: bpy.types.Object, rig: RigAsset, offsets: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The mirror's pose channels reproducing Blender's evaluated pose of ``rig``'s bones now.

    Reads ``pose_bone.matrix`` (armature space, constraints, IK and drivers evaluated) of every bone
    in ``rig.bone_names`` and inverts the mirror's forward kinematics over ``rig.parents`` and its
    flags: float64 rotations [J,4] (wxyz) and locations [J,3], so that ``Skeleton(rig)`` poses
    the bones where Blender shows them (a bone's stretch or scale is dropped: the mirror's bones
    are rigid). ``offsets``: :func:`frame_offsets` of the rig (read here when None; pass them when
    reading many frames). Call ``bpy.context.view_layer.update()`` after changing the pose or frame.
    """
    pose = np.stack([np.array(armature_obj.pose.bones[name].matrix, dtype=np.float64) for name in rig.bone_names])
    pose = pose @ (frame_offsets(armature_obj, rig) if offsets is None else offsets)  # flipped bones in the mirror's frames
    rigid = pose.copy()
    for j in range(len(pose)):
        rigid[j, :3, :3] = nearest_rotation(pose[j, :3, :3])
    rest = rig.rest_matrices
    basis_rot = np.empty((len(pose), 3, 3))
    locations = np.zeros((len(pose), 3))
    for j, p in enumerate(rig.parents):
        if p < 0:
            offset, parent_pose, parent_rot = rest[j], np.eye(4), np.eye(3)
        else:
            offset = np.linalg.solve(rest[p], rest[j])
            parent_pose = rigid[p]
            parent_rot = parent_pose[:3, :3] if rig.inherit_rotation[j] else rest[p, :3, :3]
        basis_rot[j] = (parent_rot @ offset[:3, :3]).T @ rigid[j, :3, :3]
        if not rig.use_connect[j]:
            head = parent_pose[:3, :3] @ offset[:3, 3] + parent_pose[:3, 3]
            axes = parent_pose[:3, :3] @ offset[:3, :3] if rig.use_local_location[j] else parent_pose[:3, :3]
            locations[j] = np.linalg.solve(axes, rigid[j, :3, 3] - head)
    rotations = matrix_to_quat(torch.as_tensor(basis_rot)).numpy()
    return rotations, locations


def evaluated_pose(armature_obj: bpy.types.Object, rig: RigAsset) -> MotionClip:
    """The pose Blender shows now as a one-frame MotionClip over ``rig.bone_names`` (the mirror's
    channels, :func:`evaluated_channels`): the start pose of a job on any rig, control rigs
    included, whose deform bones carry no keys of their own. Changes nothing."""
    bpy.context.view_layer.update()
    rotations, locations = evaluated_channels(armature_obj, rig)
    return MotionClip(
        rig.bone_names, scene_fps(bpy.context.scene), int(bpy.context.scene.frame_current), rotations[None], locations[None]
    )


def evaluated_clip(
    armature_obj: bpy.types.Object, rig: RigAsset, frame_start: int, frame_end: int, fps: float | None = None
) -> MotionClip:
    """Blender's evaluated motion of ``rig``'s bones over ``frame_start..frame_end`` (inclusive), as the
    mirror's channels (the armature's animation, constraints, IK and drivers as Blender evaluates
    them). The scene's current frame is restored afterwards. Needs: main thread, any mode."""
    scene = bpy.context.scene
    saved = scene.frame_current
    frames = range(int(frame_start), int(frame_end) + 1)
    rotations = np.empty((len(frames), rig.num_bones, 4))
    locations = np.empty((len(frames), rig.num_bones, 3))
    offsets = frame_offsets(armature_obj, rig)
    try:
        for i, frame in enumerate(frames):
            scene.frame_set(frame)
            rotations[i], locations[i] = evaluated_channels(armature_obj, rig, offsets)
    finally:
        scene.frame_set(saved)
    return MotionClip(rig.bone_names, float(fps or scene_fps(bpy.context.scene)), int(frame_start), rotations, locations)


def start_pose(armature_obj: bpy.types.Object, rig: RigAsset) -> MotionClip:
    """The pose a job on ``rig`` starts from: the pose Blender shows now, over ``rig.bone_names``. A plain
    rig's pose bones' own channels (:func:`~akd_blender.blender.character.pose_channels.current_pose`); a control rig's
    deform bones as Blender evaluates them (:func:`evaluated_pose`), since their channels carry no pose."""
    if not rig.deform_skeleton:
        from .pose_channels import current_pose

        return current_pose(armature_obj)
    return evaluated_pose(armature_obj, rig)
