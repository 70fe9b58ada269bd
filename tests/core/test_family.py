"""The procedural character family: seeded, varied, labelled members; and the original two characters unchanged."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from akd_blender.core.character.procedural import biped, quadruped


def _checksum(rig) -> str:
    h = hashlib.sha256()
    for a in (rig.vertices, rig.rest_matrices, rig.weights, rig.vertex_colors, rig.faces, rig.parents):
        h.update(np.round(np.asarray(a, dtype=np.float64), 7).tobytes())
    h.update("|".join(rig.bone_names).encode())
    return h.hexdigest()


@pytest.mark.parametrize(
    ("make", "digest"),
    [
        (biped, "00c33ec19aeb47e00204aae7ab38d659420b841960cc743384caf6f6ae0f97f0"),
        (quadruped, "c8134aa18b23d97e30f38a2d023e6064777be324db2c4dbb31242fd7ec3b714a"),
    ],
)
def test_shipped_characters_unchanged(make, digest):
    """The embedded teacher was trained on these two rigs: vertices, rests, weights, colours, names pinned."""
    assert _checksum(make()) == digest


# --------------------------------------------------------------------------- the family

from akd_blender.core.errors import InputError  # noqa: E402
from tools.family import HELDOUT_SEEDS, KINDS, SIZE_RANGES, TRAIN_SEEDS, make_member, members  # noqa: E402
from tools.family.naming import SCHEMES  # noqa: E402
from tools.family.sheet import contact_sheet  # noqa: E402

SEEDS = range(24)
EXPECTED = {
    "biped": {"root", "spine", "head", "leg.left", "leg.right", "arm.left", "arm.right"},
    "quadruped": {
        "root",
        "spine",
        "neck",
        "head",
        "tail",
        "leg.front.left",
        "leg.front.right",
        "leg.hind.left",
        "leg.hind.right",
    },
    "bird": {"root", "spine", "neck", "head", "tail", "leg.left", "leg.right", "wing.left", "wing.right"},
    "hexapod": {"root", "head", "tail"} | {f"leg.{p}.{s}" for p in ("front", "middle", "hind") for s in ("left", "right")},
    "serpent": {"root", "spine", "neck", "head", "tail"},
}


@pytest.fixture(scope="module")
def family():
    return {kind: [make_member(kind, s) for s in SEEDS] for kind in KINDS}


def _all(family):
    return [m for ms in family.values() for m in ms]


def test_kinds():
    assert KINDS[:2] == ("biped", "quadruped") and len(KINDS) >= 3
    assert set(EXPECTED) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_member(kind):
    a, b = make_member(kind, 123), make_member(kind, 123)
    assert a.rig.bone_names == b.rig.bone_names and a.truth == b.truth and a.style == b.style
    for field in ("vertices", "faces", "weights", "rest_matrices", "vertex_colors", "armature_world", "parents"):
        assert np.array_equal(getattr(a.rig, field), getattr(b.rig, field)), field
    assert a.seed == 123 and a.kind == kind


def test_members_are_distinct(family):
    for kind, ms in family.items():
        shapes = {(m.rig.num_bones, m.rig.num_vertices, round(m.rig.height, 6)) for m in ms}
        assert len(shapes) == len(ms), kind
        assert len({_checksum(m.rig) for m in ms}) == len(ms), kind


def test_splits_are_fixed_and_disjoint():
    assert not set(TRAIN_SEEDS) & set(HELDOUT_SEEDS)
    assert HELDOUT_SEEDS == range(10000, 11000)
    held = members("quadruped", "heldout", 2)
    assert [m.seed for m in held] == [10000, 10001]
    assert [m.seed for m in members("bird", "train", 2, start=5)] == [5, 6]
    with pytest.raises(InputError, match="split"):
        members("biped", "test", 1)
    with pytest.raises(InputError, match="outside"):
        members("biped", "heldout", 2, start=999)


def test_bad_kind_or_seed():
    with pytest.raises(InputError, match="dragon"):
        make_member("dragon", 0)
    with pytest.raises(InputError, match="seed"):
        make_member("biped", -1)


def _world(rig, points):
    return points @ rig.armature_world[:3, :3].T + rig.armature_world[:3, 3]


def test_truth_covers_the_expected_roles(family):
    for kind, ms in family.items():
        for m in ms:
            rig, roles = m.rig, set(m.truth.values())
            assert EXPECTED[kind] <= roles, (kind, m.seed, EXPECTED[kind] - roles)
            assert ("neck" in roles) == (m.style.counts["neck"] > 0) or kind not in ("biped", "hexapod")
            assert ("tail" in roles) == (m.style.counts["tail"] > 0)
            assert list(m.truth.values()).count("root") == 1
            root = next(b for b, r in m.truth.items() if r == "root")
            for b in m.truth:
                assert rig.use_deform[b], (kind, m.seed, rig.bone_names[b])
                a = b  # every labelled bone hangs under the root
                while a >= 0 and a != root:
                    a = rig.parents[a]
                assert a == root


def test_sides_and_facing_match_the_geometry(family):
    """Left limbs are on the character's left (cross(up, facing)); the head is ahead of the root for animals."""
    for m in _all(family):
        rig, facing = m.rig, np.array(m.style.facing)
        left = np.cross([0.0, 0.0, 1.0], facing)
        world = rig.world_vertices()
        for role in set(m.truth.values()):
            if role.endswith(".left"):
                cols = [b for b, r in m.truth.items() if r == role]
                other = [b for b, r in m.truth.items() if r == role.replace(".left", ".right")]
                side = (world * rig.weights[:, cols].sum(1, keepdims=True)).sum(0) / rig.weights[:, cols].sum()
                opposite = (world * rig.weights[:, other].sum(1, keepdims=True)).sum(0) / rig.weights[:, other].sum()
                assert (side - opposite) @ left > 0.05 * rig.height / 10, (m.kind, m.seed, role)
        if m.kind != "biped":
            head = next(b for b, r in m.truth.items() if r == "head")
            root = next(b for b, r in m.truth.items() if r == "root")
            assert (_world(rig, rig.heads[head]) - _world(rig, rig.heads[root])) @ facing > 0, (m.kind, m.seed)


def test_weights_normalised_and_only_on_deform_bones(family):
    for m in _all(family):
        w = m.rig.weights
        assert np.allclose(w.sum(1), 1.0, atol=1e-5) and (w >= 0).all()
        assert not w[:, ~m.rig.use_deform].any()


def test_members_stand_on_the_ground_at_their_size(family):
    for m in _all(family):
        rig, st = m.rig, m.style
        z = rig.world_vertices()[:, 2]
        assert abs(z.min()) <= 1e-9 * rig.height and abs(rig.ground_height) <= 1e-9 * rig.height
        lo, hi = SIZE_RANGES[m.kind]
        assert lo <= st.height_m <= hi
        assert rig.height == pytest.approx(st.height_m * st.units_per_metre, rel=1e-9) == pytest.approx(np.ptp(z), rel=1e-9)
    large = [m for m in _all(family) if m.style.units_per_metre > 1]
    assert large and all(40 <= m.style.units_per_metre <= 60 for m in large)


def test_rest_matrices_are_rigid_and_follow_the_bones(family):
    for m in _all(family):
        rig = m.rig
        r = rig.rest_matrices[:, :3, :3]
        assert np.allclose(r @ r.transpose(0, 2, 1), np.eye(3), atol=1e-9) and np.allclose(np.linalg.det(r), 1.0)
        axis = (rig.tails - rig.heads) / rig.lengths[:, None]
        assert np.allclose(r[:, :, 1], axis, atol=1e-9) and np.allclose(rig.rest_matrices[:, :3, 3], rig.heads)
        connected = np.flatnonzero(rig.use_connect)
        assert np.allclose(rig.heads[connected], rig.tails[rig.parents[connected]], atol=1e-9 * rig.height)


def test_variety(family):
    ms = _all(family)
    st = [m.style for m in ms]
    assert {s.naming for s in st} == set(SCHEMES)
    assert {s.mesh_style for s in st} == {"capsules", "boxes", "blended"}
    assert {s.skinning for s in st} == {"smooth", "rigid"}
    assert {s.roll for s in st} == {"zero", "quarter", "random"}
    assert {s.up_axis for s in st} == {"Y", "Z"} and {s.placement for s in st} == {"origin", "moved"}
    assert {s.shuffled for s in st} == {True, False}
    assert {"armature_root", "ik_targets"} <= {h for s in st for h in s.helpers}
    assert {"sided", "per_part", "uniform", "random_bones", "gradient", "texture"} <= {s.colors for s in st}
    assert any(s.facing != (0.0, -1.0, 0.0) for s in st)
    bipeds = [m.style for m in family["biped"]]
    assert {s.rest_pose for s in bipeds} == {"T", "A", "down"}
    assert {"human", "robot", "stocky", "long_limbed", "big_headed"} == {s.build for s in bipeds}
    assert {0} < {s.counts["tail"] for s in bipeds} and len({s.counts["spine"] for s in bipeds}) >= 3
    quads = [m.style for m in family["quadruped"]]
    assert {"dog", "deer", "low_long"} == {s.build for s in quads}
    assert min(s.counts["tail"] for s in quads) >= 1 and len({s.counts["tail"] for s in quads}) >= 4
    assert any(s.counts.get("ears") for s in quads)


def test_y_up_members_stand_along_armature_y(family):
    ups = [m for m in _all(family) if m.style.up_axis == "Y"]
    assert ups
    for m in ups:
        rig = m.rig
        up_in_armature = np.linalg.inv(rig.armature_world[:3, :3]) @ [0.0, 0.0, 1.0]
        assert np.allclose(up_in_armature, [0, 1, 0], atol=1e-9) or m.style.placement == "moved"
        assert np.ptp(rig.vertices @ up_in_armature) == pytest.approx(rig.height, rel=1e-9)
    assert any(m.style.placement == "origin" for m in ups)


def test_textured_members(family):
    textured = [m for m in _all(family) if m.style.colors == "texture"]
    assert textured
    for m in textured:
        rig = m.rig
        assert rig.texture.shape == (64, 64, 3) and rig.uvs.shape == (len(rig.faces), 3, 2)
        assert rig.uvs.min() >= 0 and rig.uvs.max() <= 1
        assert np.allclose(np.round(rig.texture * 255), rig.texture * 255, atol=1e-4)  # 8-bit exact
        assert len(np.unique(rig.texture.reshape(-1, 3), axis=0)) >= 2


def test_left_right_not_always_distinct(family):
    """Only the "sided" scheme colours left and right limbs differently by construction."""
    same = 0
    for m in family["biped"]:
        left = [b for b, r in m.truth.items() if r == "leg.left"]
        right = [b for b, r in m.truth.items() if r == "leg.right"]
        owner = m.rig.weights.argmax(1)
        lc = m.rig.vertex_colors[np.isin(owner, left)].mean(0)
        rc = m.rig.vertex_colors[np.isin(owner, right)].mean(0)
        same += bool(np.abs(lc - rc).max() < 0.05)
    assert 0 < same < len(family["biped"])


def test_contact_sheet_shows_each_member():
    ms = [make_member("biped", 0), make_member("hexapod", 1)]
    sheet = contact_sheet(ms, cell=48, columns=2)
    assert sheet.shape == (48, 96, 3) and sheet.dtype == np.uint8
    empty = contact_sheet([], cell=48, columns=2)
    assert empty.shape == (0, 96, 3)
    for c in range(2):  # the character differs from the plain scene: some pixels far from the sky/ground greys
        cell = sheet[:, c * 48 : (c + 1) * 48].astype(float)
        assert (np.abs(cell - cell.mean((0, 1))).max(-1) > 60).any()


def test_naming_schemes():
    from tools.family.naming import bone_names

    labels = [(("thigh",), "L", 0), (("spine",), "", 2), (("upper", "arm"), "R", 0)]
    rng = np.random.default_rng(0)
    assert bone_names(labels, "blender", rng) == ["thigh.L", "spine.001", "upper_arm.R"]
    assert bone_names(labels, "mixamo", rng) == ["mixamorig:LeftUpLeg", "mixamorig:Spine1", "mixamorig:RightArm"]
    assert bone_names(labels, "prefix", rng) == ["L_Thigh", "Spine_02", "R_UpperArm"]
    assert bone_names(labels, "suffix", rng) == ["thigh_l", "spine_02", "upperarm_r"]
    assert bone_names(labels, "bip01", rng) == ["Bip01 L Thigh", "Bip01 Spine2", "Bip01 R UpperArm"]
    assert bone_names(labels, "numbered", rng) == ["Bone", "Bone.001", "Bone.002"]
    assert len(set(bone_names(labels * 3, "blender", rng))) == 9  # clashes get suffixes
    words = bone_names(labels * 10, "random", rng)
    assert len(set(words)) == 30 and not any("thigh" in w.lower() for w in words)


def test_role_chains_and_helpers(family):
    """Each limb, the spine, neck and tail are parent chains (in bone order); helpers are non-deforming and unlabelled."""
    for m in _all(family):
        rig = m.rig
        for role in set(m.truth.values()) - {"root", "head"}:
            bones = sorted(b for b, r in m.truth.items() if r == role)
            assert rig.parents[bones[0]] not in bones, (m.kind, m.seed, role)
            for prev, b in zip(bones, bones[1:]):
                assert rig.parents[b] == prev, (m.kind, m.seed, role)
        root = next(b for b, r in m.truth.items() if r == "root")
        if "armature_root" in m.style.helpers:
            assert rig.parents[root] >= 0 and not rig.use_deform[rig.parents[root]] and rig.parents[root] not in m.truth
        else:
            assert rig.parents[root] == -1
        helpers = np.flatnonzero(~rig.use_deform)
        assert all(b not in m.truth for b in helpers)
        assert len(helpers) > 0 or not m.style.helpers


def test_bird_wings_have_feathers(family):
    """Wing bones carry a flat surface trailing behind them (well beyond a limb's radius)."""
    for m in family["bird"]:
        rig, back = m.rig, -np.array(m.style.facing)
        world = rig.world_vertices()
        for side in ("left", "right"):
            bones = [b for b, r in m.truth.items() if r == f"wing.{side}"]
            near = rig.weights[:, bones].sum(1) > 0.5
            behind = (world[near] - _world(rig, rig.heads[bones]).mean(0)) @ back
            assert behind.max() > 0.5 * rig.lengths[bones].mean(), (m.seed, side)


def test_biped_rest_poses_hold_the_arms_as_named(family):
    """T: upper arms about horizontal; A: 25–55° below; arms down: more than 60° below (world space)."""
    ranges = {"T": (-10.0, 10.0), "A": (25.0, 55.0), "down": (60.0, 90.0)}
    for m in family["biped"]:
        rig = m.rig
        for side in ("left", "right"):
            arm = sorted(b for b, r in m.truth.items() if r == f"arm.{side}")
            upper = arm[1] if m.style.counts["clavicles"] else arm[0]
            direction = rig.armature_world[:3, :3] @ (rig.tails[upper] - rig.heads[upper])
            below = np.degrees(np.arcsin(-direction[2] / np.linalg.norm(direction)))
            lo, hi = ranges[m.style.rest_pose]
            assert lo <= below <= hi, (m.seed, side, m.style.rest_pose, below)
