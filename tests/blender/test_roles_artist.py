"""Bone roles of the artist glTF rigs, imported with Blender's own importer. Bone names are read here
only to state the truth; find_roles never sees them as meaning anything (renamed copies agree)."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from akd_blender.blender.build import armature_from_rig
from akd_blender.blender.character.extract import rig_from_armature
from akd_blender.blender.character.io import find_armature, load_scene
from akd_blender.core.character.roles import describe_roles, find_roles
from tests.conftest import ASSET_FILES
from tests.core.rig_variants import affine, placed, reexpressed, renamed, rotation, scaled, world_forward
from tests.core.roles_zoo import ZOO

FOX = {
    "b_Hip_01": "root",
    "b_Spine01_02": "spine",
    "b_Spine02_03": "spine",
    "b_Neck_04": "neck",
    "b_Head_05": "head",
    "b_Tail01_012": "tail",
    "b_Tail02_013": "tail",
    "b_Tail03_014": "tail",
    **{f"b_{s}{b}": f"leg.front.{s.lower()}" for s in ("Left", "Right") for b in ("UpperArm", "ForeArm", "Hand")},
    **{f"b_{s}{b}": f"leg.hind.{s.lower()}" for s in ("Left", "Right") for b in ("Leg01", "Leg02", "Foot01", "Foot02")},
}
HUMANOID_SPINE = {"torso_joint_2": "spine", "torso_joint_3": "spine", "neck_joint_1": "neck", "neck_joint_2": "head"}


def _strip(name: str) -> str:
    """Bone names without the Fox's index suffix and CesiumMan's "Skeleton_" prefix."""
    name = name.removeprefix("Skeleton_")
    return name.rsplit("_", 1)[0] if name.startswith("b_") else name


def humanoid_truth(rig) -> dict[str, str]:
    truth = {}
    for name in rig.bone_names:
        short = _strip(name)
        if short == "torso_joint_1":
            truth[name] = "root"
        elif short in HUMANOID_SPINE:
            truth[name] = HUMANOID_SPINE[short]
        elif short.startswith(("arm_joint", "leg_joint")):
            side = "left" if "_L" in short else "right"
            truth[name] = f"{short[:3]}.{side}"
    return truth


@pytest.fixture(scope="module")
def artist_rigs():
    rigs = {}
    for name, path in ASSET_FILES.items():
        if not path.is_file():
            pytest.fail(f"shared asset missing: {path} (set AKD_SHARED)")
        load_scene(str(path))
        rigs[name] = rig_from_armature(find_armature())
    return rigs


def named_roles(rig, roles) -> dict[str, str]:
    return {rig.bone_names[b]: role for b, role in roles.role_of().items()}


def test_fox_is_a_quadruped_with_tail_head_and_four_placed_legs(artist_rigs):
    rig = artist_rigs["Fox"]
    roles = find_roles(rig)
    assert roles.kind == "quadruped"
    assert named_roles(rig, roles) == {_full(rig, k): v for k, v in FOX.items()}
    assert [rig.bone_names[b] for b in roles.tail] == ["b_Tail01_012", "b_Tail02_013", "b_Tail03_014"]
    assert [_strip(rig.bone_names[b]) for b in roles.limb("legs", "left", "front").bones] == [
        "b_LeftUpperArm",
        "b_LeftForeArm",
        "b_LeftHand",
    ]
    assert roles.arms == () and roles.wings == ()
    # the helper joints above the hips have no role
    assert rig.bone_index("_rootJoint") not in roles.role_of() and rig.bone_index("b_Root_00") not in roles.role_of()
    # facing: the head's mesh lies at the forward end of the body, the tail's at the back
    verts = rig.vertices
    along = verts @ roles.frame.forward
    head_mesh = verts[rig.weights[:, roles.head] > 0.5] @ roles.frame.forward
    tail_mesh = verts[rig.weights[:, roles.tail[-1]] > 0.5] @ roles.frame.forward
    assert head_mesh.mean() > along.max() - 0.25 * np.ptp(along)
    assert tail_mesh.mean() < along.min() + 0.25 * np.ptp(along)
    np.testing.assert_allclose(world_forward(rig, roles.frame.forward), [0, -1, 0], atol=1e-3)


def _full(rig, short: str) -> str:
    return next(n for n in rig.bone_names if _strip(n) == short or n == short)


@pytest.mark.parametrize("name", ["CesiumMan", "RiggedFigure"])
def test_humanoids_are_bipeds_with_placed_arms_legs_spine_and_head(artist_rigs, name):
    rig = artist_rigs[name]
    roles = find_roles(rig)
    assert roles.kind == "biped"
    assert named_roles(rig, roles) == humanoid_truth(rig)
    assert len(roles.legs) == 2 and len(roles.arms) == 2 and roles.tail == ()
    # facing: the toes (the mesh of each leg's last bone) point forward of the ankle
    for leg in roles.legs:
        toe = rig.vertices[rig.weights[:, leg.bones[-1]] > 0.5].mean(0)
        ankle = rig.heads[leg.bones[-2]]
        assert (toe - ankle) @ roles.frame.forward > 0.02 * roles.frame.height
    np.testing.assert_allclose(world_forward(rig, roles.frame.forward), [0, -1, 0], atol=1e-3)
    np.testing.assert_allclose(rig.armature_world[:3, :3] @ roles.frame.up, [0, 0, 1], atol=1e-6)


def test_rigged_simple_is_other_with_a_root_and_no_limbs(artist_rigs):
    rig = artist_rigs["RiggedSimple"]
    roles = find_roles(rig)
    assert roles.kind == "other"
    assert roles.legs == roles.arms == roles.wings == () and roles.head is None
    assert rig.bone_names[roles.root] == "Bone"
    assert describe_roles(roles, rig) == "other: spine of 1; root 'Bone'; facing -Y"


@pytest.mark.parametrize("name", ["Fox", "CesiumMan", "RiggedFigure"])
def test_artist_roles_ignore_names_scale_placement_and_axes(artist_rigs, name):
    rig = artist_rigs[name]
    base = find_roles(rig)
    forward = world_forward(rig, base.frame.forward)
    variants = {
        "renamed": renamed(rig, 3),
        "x0.01": scaled(rig, 0.01),
        "x79": scaled(rig, 79.0),
        "turned axes": reexpressed(rig, affine(rotation([0.4, 0.9, -0.2], 2.0), (1.0, 2.0, 3.0))),
    }
    for label, variant in variants.items():
        roles = find_roles(variant)
        assert roles.role_of() == base.role_of(), label
        np.testing.assert_allclose(world_forward(variant, roles.frame.forward), forward, atol=1e-3, err_msg=label)
    world = affine(rotation([0, 0, 1], -0.7), (10.0, 0.0, -2.0))
    moved = placed(rig, world)
    roles = find_roles(moved)
    assert roles.role_of() == base.role_of()
    np.testing.assert_allclose(world_forward(moved, roles.frame.forward), world[:3, :3] @ forward, atol=1e-3)


@pytest.mark.parametrize("name", ["humanoid", "dog", "bird", "tarantula", "crab", "eagle", "great_dragon"])
def test_rigs_through_blenders_fbx_exporter_and_importer_keep_their_roles(tmp_path, name):
    """Artist-like rigs built in Blender, written with its FBX exporter and read back with its importer
    (which re-derives bone tails and rolls): every bone keeps its true role (eight legs, an eagle's short
    legs under its wide wings, a dragon's wings folded to the ground included)."""
    rig, truth = ZOO[name]()
    armature_from_rig(rig)
    path = tmp_path / f"{name}.fbx"
    bpy.ops.export_scene.fbx(filepath=str(path), add_leaf_bones=False)
    load_scene(str(path))
    imported = rig_from_armature(find_armature())
    roles = find_roles(imported)
    assert named_roles(imported, roles) == truth
    np.testing.assert_allclose(world_forward(imported, roles.frame.forward), [0, -1, 0], atol=1e-3)
