"""Rigs the mirror cannot use give one clear error naming the object; unsupported features warn."""

from __future__ import annotations

import bpy
import pytest

from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.core.character.rig import RigError
from akd_blender.core.errors import InputError

from .helpers import build_stress_rig


def test_no_armature():
    with pytest.raises(InputError, match="the file has no armature"):
        find_armature()
    mesh_obj = bpy.data.objects.new("Plane", bpy.data.meshes.new("Plane"))
    with pytest.raises(RigError, match="object 'Plane' is a mesh, not an armature"):
        rig_from_armature(mesh_obj)


def test_armature_named_wrongly_or_ambiguous():
    build_stress_rig("A")
    build_stress_rig("B")
    with pytest.raises(InputError, match=r"2 armatures that move meshes \(A, B\); choose one with --armature"):
        find_armature()
    with pytest.raises(InputError, match="no object named 'C'"):
        find_armature("C")
    with pytest.raises(InputError, match="object 'BodyA' is a mesh, not an armature"):
        find_armature("BodyA")
    assert find_armature("B").name == "B"


def test_the_only_armature_that_moves_a_mesh_is_chosen():
    build_stress_rig("Rig")
    meta = bpy.data.objects.new("Metarig", bpy.data.armatures.new("Metarig"))  # moves no mesh, like Rigify's metarig
    bpy.context.scene.collection.objects.link(meta)
    assert find_armature().name == "Rig"


def test_armature_without_skinned_mesh():
    data = bpy.data.armatures.new("Lonely")
    arm = bpy.data.objects.new("Lonely", data)
    bpy.context.scene.collection.objects.link(arm)
    with pytest.raises(RigError, match="armature 'Lonely' has no skinned mesh"):
        rig_from_armature(arm)


def test_vertex_groups_matching_no_deform_bone():
    arm = build_stress_rig()
    body = bpy.data.objects["BodyA"]
    for group in list(body.vertex_groups):
        if group.name != "ctrl":  # keep only the non-deform bone's group and rename nothing else
            body.vertex_groups.remove(group)
    with pytest.raises(RigError, match="mesh 'BodyA': none of its vertex groups is named after a deform bone"):
        rig_from_armature(arm)


def test_all_zero_weights():
    arm = build_stress_rig()
    body = bpy.data.objects["BodyB"]
    indices = list(range(len(body.data.vertices)))
    for group in body.vertex_groups:
        group.add(indices, 0.0, "REPLACE")
    with pytest.raises(RigError, match="mesh 'BodyB': all of its deform-bone weights are zero"):
        rig_from_armature(arm)


def test_features_not_mirrored_are_named_in_warnings():
    arm = build_stress_rig()
    arm.pose.bones["arm.R"].constraints.new("LIMIT_LOCATION").use_max_x = True  # keys stay on the bones: named
    limit = arm.pose.bones["tail"].constraints.new("LIMIT_ROTATION")
    limit.owner_space = "LOCAL"
    limit.use_limit_x, limit.min_x, limit.max_x = True, -0.5, 0.25
    body = bpy.data.objects["BodyA"]
    body.shape_key_add(name="Basis")
    body.shape_key_add(name="Smile")
    body.modifiers.new("Displace", "DISPLACE")
    bpy.ops.object.select_all(action="DESELECT")
    body.modifiers.move(len(body.modifiers) - 1, 0)
    rig = rig_from_armature(arm)
    text = "\n".join(rig.warnings)
    assert "bone 'arm.R': LIMIT_LOCATION constraint" in text
    assert "mesh 'BodyA': shape keys" in text
    assert "mesh 'BodyA': modifiers before the Armature modifier are ignored by the mirror (Displace)" in text
    assert "tail" not in text  # Limit Rotation is read, not warned about
    tail = rig.bone_index("tail")
    assert rig.rotation_limits[tail, 0].tolist() == pytest.approx([-0.5, 0.25])


def test_constraints_of_a_rig_keyed_on_its_controls_are_left_to_the_check():
    """Once Blender drives a bone (an IK chain here), the job keys the rig's controls and checks the result
    in Blender's evaluation (which names any bone it could not drive), so the mirror does not warn about
    the constraints it poses over."""
    arm = build_stress_rig()
    ik = arm.pose.bones["forearm.L"].constraints.new("IK")
    ik.chain_count = 2
    arm.pose.bones["arm.R"].constraints.new("COPY_ROTATION")
    arm.pose.bones["arm.R"].constraints.new("LIMIT_LOCATION").use_max_x = True
    text = "\n".join(rig_from_armature(arm).warnings)
    assert "constraint" not in text


def test_unreadable_and_unsupported_inputs(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_scene(str(tmp_path / "missing.blend"))
    with pytest.raises(InputError, match="not a supported file"):
        load_scene(str(tmp_path / "x.obj"))
    broken = tmp_path / "broken.gltf"
    broken.write_text("{ not json")
    with pytest.raises(InputError, match="could not be read"):
        load_scene(str(broken))
