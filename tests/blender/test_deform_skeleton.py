"""The mirror reads a control rig as Blender deforms it: the deform skeleton of Rigify's generated rigs,
a hand-made IK biped and a robot of meshes parented to bones; the torch mirror equals Blender's own
evaluated meshes in a posed frame, and the roles read the body's kind."""

from __future__ import annotations

import re

import bpy
import numpy as np
import pytest
import torch

from akd_blender.blender.character.deform_skeleton import (
    evaluated_channels,
    evaluated_clip,
    evaluated_pose,
    find_deform_skeleton,
    frame_offsets,
)
from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.rig import load_rig, save_rig
from akd_blender.core.character.roles import find_roles

from .helpers import evaluated_world_vertices
from .rig_zoo import game_rig, ik_biped, parented_robot, rigify_rig

TOLERANCE = 1e-4  # × character height

KINDS = {
    "human": "biped",
    "basic_human": "biped",
    "basic_quadruped": "quadruped",
    "horse": "quadruped",
    "cat": "quadruped",
    "wolf": "quadruped",
    "bird": "bird",
}


def mirror_error(arm, rig) -> float:
    """Max distance (× height) between Blender's evaluated meshes now and the torch mirror posed by the
    channels read back from Blender's evaluation of the mirrored bones."""
    bpy.context.view_layer.update()
    rotations, locations = evaluated_channels(arm, rig)
    got = Skeleton(rig, torch.float64)((torch.as_tensor(rotations)[None], torch.as_tensor(locations)[None]))[0].numpy()
    expected = evaluated_world_vertices(rig.mesh_names)
    assert got.shape == expected.shape
    return float(np.abs(got - expected).max() / rig.height)


def moved(rig) -> float:
    return float(np.abs(evaluated_world_vertices(rig.mesh_names) - rig.world_vertices()).max() / rig.height)


def rotate(pose_bones, rng, angle: float = 0.3) -> None:
    for pb in pose_bones:
        pb.rotation_mode = "XYZ"
        pb.rotation_euler = rng.normal(size=3) * angle


def named_in_warnings(rig) -> set[str]:
    return {name for line in rig.warnings for name in re.findall(r"'([^']+)'", line)}


@pytest.mark.parametrize("metarig", list(KINDS))
def test_rigify_rig_mirrors_its_deform_bones(metarig):
    arm, body = rigify_rig(metarig)
    rig = rig_from_armature(arm)
    weighted = {g.name for g in body.vertex_groups}  # nearest-bone binding: every group holds weight
    assert set(rig.bone_names) == weighted == {b.name for b in arm.data.bones if b.use_deform}
    assert all(name.startswith("DEF-") for name in rig.bone_names)  # no control, MCH- or ORG- bone
    assert rig.deform_skeleton and len(rig.root_indices) == 1
    assert set(rig.driven_bones) <= set(rig.bone_names) and rig.driven_bones
    bones_named = named_in_warnings(rig) & {b.name for b in arm.data.bones}
    assert bones_named <= set(rig.bone_names)  # nothing said about bones the mirror does not take

    for bone in arm.data.bones:
        bone.bbone_segments = 1  # the mirror deforms B-Bones as straight bones (warned about)
    # Every free helper and control bone rotated (constraints, drivers, IK and stretch evaluated by
    # Blender): skinning the deform bones' evaluated matrices gives Blender's mesh.
    kept = set(rig.bone_names)
    free = [pb for pb in arm.pose.bones if pb.name not in kept and not pb.constraints and not pb.bone.use_deform]
    rotate(free, np.random.default_rng(0))
    bpy.context.view_layer.update()
    pose = np.stack([np.array(arm.pose.bones[name].matrix, dtype=np.float64) for name in rig.bone_names])
    pose = pose @ frame_offsets(arm, rig)  # a tail built tip first is mirrored from its base: its frames turned
    skinned = Skeleton(rig, torch.float64).skin(torch.as_tensor(pose)[None])[0].numpy()
    assert moved(rig) > 0.05
    assert np.abs(skinned - evaluated_world_vertices(rig.mesh_names)).max() <= TOLERANCE * rig.height

    # Posed by Rigify's FK controls (limbs switched to FK, no IK stretch): the deform bones stay rigid
    # and the mirror, posed by the channels read back from Blender, gives Blender's mesh.
    for pb in free:
        pb.rotation_euler = (0.0, 0.0, 0.0)
    for pb in arm.pose.bones:
        if "IK_FK" in pb.keys():
            pb["IK_FK"] = 1.0
        if "IK_Stretch" in pb.keys():
            pb["IK_Stretch"] = 0.0
    controls = [pb for pb in free if "_fk" in pb.name or pb.name in ("root", "torso", "hips", "chest", "neck", "head")]
    rotate(controls, np.random.default_rng(1))
    assert moved(rig) > 0.05
    assert mirror_error(arm, rig) <= TOLERANCE

    roles = find_roles(rig)
    assert roles.kind == KINDS[metarig]
    limbs = {"biped": (2, 2, 0), "quadruped": (4, 0, 0), "bird": (2, 0, 2)}[roles.kind]
    assert (len(roles.legs), len(roles.arms), len(roles.wings)) == limbs
    assert roles.head is not None and len(roles.spine) >= 2


def test_rigify_shark_is_a_serpent_whose_fins_are_not_legs():
    """The side fins reach out from the body farther than down to the ground: not legs. Legless, long and
    low, the shark is a serpent facing its head."""
    arm, _ = rigify_rig("shark")
    rig = rig_from_armature(arm)
    roles = find_roles(rig)
    assert roles.kind == "serpent" and roles.legs == () and roles.head is not None
    fins = {rig.bone_names[b] for limb in (*roles.arms, *roles.wings) for b in limb.bones}
    assert {"DEF-side_fin.L", "DEF-side_fin.R"} <= fins
    assert rig.heads[roles.head] @ roles.frame.forward > rig.heads[roles.root] @ roles.frame.forward + 0.3 * roles.frame.length


def test_a_game_rig_whose_tail_hangs_from_its_tip_is_mirrored_as_the_rig_it_copies():
    """A game rig over Rigify's basic quadruped parents the tail's deform bones as Rigify built them, tip
    first (the tip hangs from the hips, the base at the end of the chain): the mirror hangs the tail from
    its base, as it reads the Rigify rig itself, and poses it as Blender does."""
    src, _ = rigify_rig("basic_quadruped")
    own = rig_from_armature(src)
    game = game_rig(src)
    assert game.data.bones["DEF-spine"].parent.name == "DEF-spine.004"  # the tip under the hips
    rig = rig_from_armature(game)
    parent = {n: (rig.bone_names[p] if p >= 0 else None) for n, p in zip(rig.bone_names, rig.parents)}
    assert parent == {n: (own.bone_names[p] if p >= 0 else None) for n, p in zip(own.bone_names, own.parents)}
    assert parent["DEF-spine.003"] == "DEF-spine.004" and parent["DEF-spine"] == "DEF-spine.001"
    kept = set(own.bone_names)
    free = [pb for pb in src.pose.bones if pb.name not in kept and not pb.constraints and not pb.bone.use_deform]
    rotate(free, np.random.default_rng(3))  # the tail's controls among them (Blender stretches its bones)
    bpy.context.view_layer.update()
    pose = np.stack([np.array(game.pose.bones[name].matrix, dtype=np.float64) for name in rig.bone_names])
    skinned = Skeleton(rig, torch.float64).skin(torch.as_tensor(pose @ frame_offsets(game, rig))[None])[0].numpy()
    assert moved(rig) > 0.05
    assert np.abs(skinned - evaluated_world_vertices(rig.mesh_names)).max() <= TOLERANCE * rig.height


def test_rigify_tail_built_tip_first_hangs_from_its_base():
    """Rigify's cat tail is a deform chain parented tip first under its controls: the mirror hangs it from
    the hips by its base bone and runs it out to the tip, which the roles then read as the tail."""
    arm, _ = rigify_rig("cat")
    rig = rig_from_armature(arm)
    parent = {n: (rig.bone_names[p] if p >= 0 else None) for n, p in zip(rig.bone_names, rig.parents)}
    assert arm.data.bones["DEF-tail.001"].parent.name == "DEF-tail.002"  # Blender's own order: tip first
    assert parent["DEF-tail.001"] == "DEF-spine"
    assert [parent[f"DEF-tail.00{k}"] for k in (2, 3, 4)] == ["DEF-tail.001", "DEF-tail.002", "DEF-tail.003"]
    roles = find_roles(rig)
    assert [rig.bone_names[b] for b in roles.tail] == ["DEF-tail.001", "DEF-tail.002", "DEF-tail.003", "DEF-tail.004"]


@pytest.mark.parametrize(("metarig", "weights"), [("human", "nearest"), ("human", "automatic"), ("basic_human", "automatic")])
def test_rigify_human_roles_skip_the_face(metarig, weights):
    """The roles of Rigify's humans, bound by nearest-bone weights or by Blender's automatic weights (which
    on the box body weight each leg's vertices to the other leg's bones too: weights far from their bone
    own no mesh)."""
    arm, body = rigify_rig(metarig, weights=weights)
    if weights == "automatic":  # the bleed: right-hand vertices (−X) weighted to the left leg's bones
        left_leg = {g.index for g in body.vertex_groups if g.name.startswith(("DEF-thigh.L", "DEF-shin.L"))}
        world = body.matrix_world
        assert any(
            (world @ v.co).x < -0.05 and any(g.group in left_leg and g.weight > 0.2 for g in v.groups) for v in body.data.vertices
        )
    rig = rig_from_armature(arm)
    roles = find_roles(rig)
    names = rig.bone_names
    assert names[roles.head] == "DEF-spine.006"
    assert [names[b] for b in roles.spine] == ["DEF-spine.001", "DEF-spine.002", "DEF-spine.003"]
    assert {(limb.side, names[limb.bones[0]], names[limb.bones[-1]]) for limb in roles.arms} == {
        ("left", "DEF-shoulder.L", "DEF-hand.L"),
        ("right", "DEF-shoulder.R", "DEF-hand.R"),
    }
    assert {(limb.side, names[limb.bones[0]], names[limb.bones[-1]]) for limb in roles.legs} == {
        ("left", "DEF-thigh.L", "DEF-toe.L"),
        ("right", "DEF-thigh.R", "DEF-toe.R"),
    }


@pytest.mark.parametrize(
    ("metarig", "kind", "head"),
    [
        ("wolf", "quadruped", "DEF-spine.011"),
        ("cat", "quadruped", "DEF-spine.006"),
        ("horse", "quadruped", "DEF-head"),
        ("shark", "serpent", "DEF-spine.007"),
    ],
)
def test_rigify_animal_bound_by_automatic_weights_keeps_its_head(metarig, kind, head):
    """Automatic weights give the face bones inside the box head much of its mesh (the wolf's nose takes more
    skin weight than its head), or the neck's base much of the chest (the horse's is fatter than its head);
    the head is still the bone the face fans out from (eyes, ears, jaw), as with nearest weights."""
    arm, _ = rigify_rig(metarig, weights="automatic")
    rig = rig_from_armature(arm)
    roles = find_roles(rig)
    assert roles.kind == kind and len(roles.legs) == (4 if kind == "quadruped" else 0)
    assert rig.bone_names[roles.head] == head
    nearest = rig_from_armature(rigify_rig(metarig)[0])
    assert nearest.bone_names[find_roles(nearest).head] == head


def test_rigify_bird_bound_by_automatic_weights_has_its_wings():
    """Automatic weights give the bird's right hip bone more mesh than its left, reaching as far as a limb;
    its partner does not, so it is no wing, and the wings are the shoulder chains."""
    arm, _ = rigify_rig("bird", weights="automatic")
    rig = rig_from_armature(arm)
    roles = find_roles(rig)
    assert roles.kind == "bird" and len(roles.legs) == 2
    assert {rig.bone_names[w.bones[0]] for w in roles.wings} == {"DEF-shoulder.L", "DEF-shoulder.R"}


def test_a_deform_bone_without_weights_that_links_two_with_weights_is_kept():
    """A finger's middle segment holding no weight (Blender's automatic weights leave small bones so) is kept
    between the segments that hold weight, so the tip still hangs from it and bends with it."""
    arm, body = rigify_rig("human")
    body.vertex_groups.remove(body.vertex_groups["DEF-f_index.02.L"])
    rig = rig_from_armature(arm)
    names = list(rig.bone_names)
    middle = names.index("DEF-f_index.02.L")
    assert not (rig.weights[:, middle] > 0).any()
    assert names[rig.parents[middle]] == "DEF-f_index.01.L"
    assert names[rig.parents[names.index("DEF-f_index.03.L")]] == "DEF-f_index.02.L"
    assert "DEF-lid.T.L" in names  # leaves keep their weights here; only links are added
    for bone in arm.data.bones:
        bone.bbone_segments = 1  # the mirror deforms B-Bones as straight bones
    controls = [pb for pb in arm.pose.bones if pb.name.startswith("f_index") and not pb.bone.use_deform]
    rotate(controls, np.random.default_rng(4))
    assert moved(rig) > 0.01
    assert mirror_error(arm, rig) <= TOLERANCE


def test_ik_biped_mirrors_its_deform_bones_and_follows_its_ik():
    arm, _ = ik_biped()
    rig = rig_from_armature(arm)
    deform = [b.name for b in arm.data.bones if b.use_deform]
    assert list(rig.bone_names) == deform  # no root, IK targets or poles
    assert rig.deform_skeleton and rig.driven_bones == ("shin.L", "shin.R")
    assert rig.bone_names[rig.parents[rig.bone_index("thigh.L")]] == "hips"
    assert rig.blender_parents[rig.bone_index("hips")] == "root"
    assert named_in_warnings(rig) == set()  # keyed on its controls and checked in Blender, not warned about
    rng = np.random.default_rng(1)
    rotate([arm.pose.bones[n] for n in ("hips", "spine", "upper_arm.L", "forearm.R", "head")], rng)
    arm.pose.bones["root"].location = (0.1, -0.2, 0.05)
    arm.pose.bones["foot_ik.L"].location = (0.05, 0.1, 0.25)  # knee bends: Blender's IK solves the leg
    arm.pose.bones["knee_pole.R"].location = (0.3, 0.0, 0.0)
    bpy.context.view_layer.update()
    assert moved(rig) > 0.05
    assert mirror_error(arm, rig) <= TOLERANCE
    roles = find_roles(rig)
    assert roles.kind == "biped" and rig.bone_names[roles.head] == "head"
    assert {tuple(rig.bone_names[b] for b in limb.bones) for limb in roles.legs} == {
        ("thigh.L", "shin.L", "foot.L"),
        ("thigh.R", "shin.R", "foot.R"),
    }


def test_a_mesh_parented_with_armature_deform_and_no_modifier_is_skinned():
    """Parent type 'Armature' without an Armature modifier (older files): Blender deforms the mesh by its
    vertex groups all the same, and so does the mirror."""
    arm, body = ik_biped()
    body.modifiers.remove(next(m for m in body.modifiers if m.type == "ARMATURE"))
    world = body.matrix_world.copy()
    body.parent, body.parent_type = arm, "ARMATURE"
    body.matrix_world = world
    rig = rig_from_armature(arm)
    assert rig.mesh_names == (body.name,) and not rig.warnings
    rotate([arm.pose.bones[n] for n in ("hips", "spine", "upper_arm.L", "forearm.R", "head")], np.random.default_rng(2))
    arm.pose.bones["foot_ik.L"].location = (0.05, 0.1, 0.25)
    bpy.context.view_layer.update()
    assert moved(rig) > 0.05
    assert mirror_error(arm, rig) <= TOLERANCE


def test_robot_parts_parented_to_bones_are_mirrored_rigidly(tmp_path):
    arm, parts = parented_robot()
    rig = rig_from_armature(arm)
    assert set(rig.mesh_names) == {p.name for p in parts}
    assert set(rig.bone_names) == {p.parent_bone for p in parts}  # no root, no foot targets
    bones = dict(zip(rig.mesh_names, rig.mesh_bones))
    for part in parts:
        m = rig.mesh_names.index(part.name)
        rows = rig.weights[rig.mesh_offsets[m] : rig.mesh_offsets[m + 1]]
        assert np.all(rows[:, rig.bone_index(bones[part.name])] == 1.0) and np.all(rows.sum(1) == 1.0)
    assert np.abs(rig.world_vertices() - evaluated_world_vertices(rig.mesh_names)).max() <= TOLERANCE * rig.height
    save_rig(rig, str(tmp_path / "robot.npz"))
    back = load_rig(str(tmp_path / "robot.npz"))
    assert back.deform_skeleton is True and back.mesh_bones == rig.mesh_bones
    assert back.driven_bones == rig.driven_bones == ("leg_lower.L", "foot.L", "leg_lower.R", "foot.R")
    assert back.blender_parents == rig.blender_parents and rig.blender_parents[rig.bone_index("body")] == "root"
    rotate([arm.pose.bones[n] for n in ("body", "torso", "head", "arm_upper.L", "arm_lower.R")], np.random.default_rng(2))
    arm.pose.bones["foot_target.R"].location = (0.0, 0.1, 0.2)
    arm.pose.bones["foot_target.L"].rotation_mode = "XYZ"
    arm.pose.bones["foot_target.L"].rotation_euler = (0.4, 0.0, 0.2)
    assert moved(rig) > 0.05
    assert mirror_error(arm, rig) <= TOLERANCE
    roles = find_roles(rig)
    assert roles.kind == "biped"
    assert {tuple(rig.bone_names[b] for b in limb.bones) for limb in roles.arms} == {
        ("arm_upper.L", "arm_lower.L"),
        ("arm_upper.R", "arm_lower.R"),
    }


@pytest.mark.parametrize("follow", ["child_of", "copy_transforms"])
def test_robot_parts_held_on_bones_by_constraints_are_mirrored_rigidly(follow):
    """Parts held on their bones by a Child Of or Copy Transforms constraint (no parent) are rigid parts
    of those bones, as parented ones are; a constraint at half influence does not make a part."""
    arm, parts = parented_robot(follow=follow)
    held = {p.name: p.constraints[0].subtarget for p in parts}
    assert all(p.parent is None for p in parts)
    rig = rig_from_armature(arm)
    assert set(rig.mesh_names) == set(held) and dict(zip(rig.mesh_names, rig.mesh_bones)) == held
    assert set(rig.bone_names) == set(held.values())
    assert np.abs(rig.world_vertices() - evaluated_world_vertices(rig.mesh_names)).max() <= TOLERANCE * rig.height
    rotate([arm.pose.bones[n] for n in ("body", "torso", "head", "arm_upper.L", "arm_lower.R")], np.random.default_rng(3))
    arm.pose.bones["foot_target.R"].location = (0.0, 0.1, 0.2)
    assert moved(rig) > 0.05
    assert mirror_error(arm, rig) <= TOLERANCE
    assert find_roles(rig).kind == "biped"
    parts[0].constraints[0].influence = 0.5
    assert parts[0].name not in rig_from_armature(arm).mesh_names


def test_a_plain_rig_with_parts_keeps_every_bone_in_blender_order():
    """Without constraints the robot is a plain FK rig: every bone is mirrored, as Blender orders them."""
    arm, parts = parented_robot()
    for pb in arm.pose.bones:
        for con in list(pb.constraints):
            pb.constraints.remove(con)
    skeleton = find_deform_skeleton(arm)
    assert not skeleton.control_rig and skeleton.bones == tuple(b.name for b in arm.data.bones)
    rig = rig_from_armature(arm)
    assert not rig.deform_skeleton and rig.bone_names == skeleton.bones and len(rig.mesh_names) == len(parts)
    rotate(arm.pose.bones, np.random.default_rng(3))
    assert mirror_error(arm, rig) <= TOLERANCE


def test_evaluated_clip_replays_keyed_controls_on_the_deform_skeleton():
    """Keys on the controls (an IK target, the root) move the deform bones; the clip read back from
    Blender's evaluation, played on the mirror, gives Blender's mesh at every frame."""
    arm, _ = ik_biped()
    rig = rig_from_armature(arm)
    scene = bpy.context.scene
    target, root = arm.pose.bones["foot_ik.L"], arm.pose.bones["root"]
    for frame, lift, travel in ((1, 0.0, 0.0), (9, 0.3, -0.4)):
        target.location = (0.0, 0.15, lift)
        root.location = (0.0, travel, 0.0)
        target.keyframe_insert("location", frame=frame)
        root.keyframe_insert("location", frame=frame)
    scene.frame_set(3)
    clip = evaluated_clip(arm, rig, 1, 9)
    assert scene.frame_current == 3 and clip.matches(rig) and clip.num_frames == 9
    assert evaluated_pose(arm, rig).matches(rig)
    skeleton = Skeleton(rig, torch.float64)
    for i in (0, 4, 8):
        scene.frame_set(1 + i)
        got = skeleton((torch.as_tensor(clip.rotations[i]), torch.as_tensor(clip.locations[i]))).numpy()
        expected = evaluated_world_vertices(rig.mesh_names)
        assert np.abs(got - expected).max() <= TOLERANCE * rig.height
    assert moved(rig) > 0.1
