"""The motion library over bone roles: every motion on every character of its kind gives valid pose
channels and does what its label says, measured on the skinned mesh; motions do not depend on bone
rolls, armature axes or the root's parent; phrasings and variations are kept apart by split."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import biped
from akd_blender.core.character.rig import RigAsset
from akd_blender.core.character.roles import find_roles
from akd_blender.core.errors import InputError
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.library import (
    LIBRARY,
    library_phrasings,
    make_role_clip,
    motions_for,
    role_motion,
    sample_variations,
)
from akd_blender.core.motion.library import labelled as named
from akd_blender.core.motion.library.labelled import Variation
from tests.core.library_checks import CHECKS, Measured, check_gait, checks_for, travel
from tests.core.rig_variants import affine, reexpressed, rotation
from tests.core.role_fixtures import family_character, procedural_characters

FRAMES, FPS = 24, 12.0
CHARACTERS = {
    **{f"procedural_{k}": v for k, v in procedural_characters().items()},
    "family_biped_5": family_character("biped", 5),
    "family_quadruped_0": family_character("quadruped", 0),
    "family_bird_7": family_character("bird", 7),
    "family_hexapod_6": family_character("hexapod", 6),
    "family_serpent_2": family_character("serpent", 2),
    "family_serpent_5": family_character("serpent", 5),
}
HEAD_ONLY = {"look_around", "nod", "shake_head"}
CASES = [(name, spec.label) for name, (_, roles) in CHARACTERS.items() for spec in LIBRARY[roles.kind] if not spec.from_record]
"""Every generator on every character (the record motions: tests/core/test_records.py)."""


@functools.cache
def measured(name: str, label: str, which: str = "train") -> Measured:
    rig, roles = CHARACTERS[name]
    variation = sample_variations(label, which, 1, seed=0)[0]
    clip = make_role_clip(rig, roles, label, variation, FRAMES, FPS)
    return Measured(rig, roles, clip, variation.facing)


@pytest.mark.parametrize("name,label", CASES, ids=[f"{n}-{lab}" for n, lab in CASES])
def test_motion_is_valid_and_does_what_its_label_says(name, label):
    m = measured(name, label)
    clip = m.clip
    assert clip.matches(m.rig) and clip.num_frames == FRAMES and clip.fps == FPS
    assert np.isfinite(clip.rotations).all() and np.isfinite(clip.locations).all()
    np.testing.assert_allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0, atol=1e-9)
    assert np.isfinite(m.verts).all()
    assert m.height().min() > -0.03 * m.H  # nothing sinks through the ground
    moved = 0.001 if label in HEAD_ONLY else 0.01  # a head alone moves few of the body's vertices
    assert np.linalg.norm(m.verts - m.verts[:1], axis=-1).mean(1).max() > moved * m.H  # it moves
    for check in checks_for(m.roles.kind, label):
        check(m)


def test_every_kind_has_the_shared_motions_and_its_own():
    shared = {"walk", "run", "jump", "turn", "sit"}
    heads = {"look_around", "nod", "shake_head"}
    own = {
        "biped": {"wave", "raise_arms", "kick", "bow", "crouch", "clap", "punch"}
        | heads
        | {"stretch", "point"}
        | {"fall", "get_up", "crawl", "dance"},
        "quadruped": {"wag_tail", "lie_down", "head_down", "rear_up", "gallop"} | heads | {"stretch", "shake"},
        "bird": {"flap_wings", "peck", "hop", "take_off", "land", "glide"} | heads,
        "hexapod": {"hop", "raise_front_legs", "look_around"},
    }
    generators = lambda kind: {s.label for s in motions_for(kind) if not s.from_record}  # noqa: E731
    for kind, labels in own.items():
        assert generators(kind) == shared | labels, kind
    assert generators("serpent") == {"walk", "run", "turn", "rear_up"} | heads
    assert len({s.label for specs in LIBRARY.values() for s in specs}) >= 16
    assert set(CHECKS) == {s.label for specs in LIBRARY.values() for s in specs if not s.from_record}
    # labels kept from the named-bone library where the motion is the same
    assert {"walk", "run", "jump", "wave", "raise_arms", "turn", "wag_tail", "sit"} <= set(named.LABELS)


def test_phrasings_five_train_two_heldout_and_disjoint():
    for specs in LIBRARY.values():
        for spec in specs:
            assert len(spec.phrasings) == 5 and len(spec.heldout_phrasings) == 2, spec.label
    train = [p for p, _, _ in library_phrasings("train")]
    held = [p for p, _, _ in library_phrasings("heldout")]
    assert len(set(train)) == len(train) and len(set(held)) == len(held)
    assert not set(train) & set(held)
    with pytest.raises(ValueError, match="split must be"):
        library_phrasings("extra")


def test_time_symmetric_flags():
    assert role_motion("biped", "wave").time_symmetric and not role_motion("biped", "walk").time_symmetric
    assert not role_motion("quadruped", "sit").time_symmetric and role_motion("quadruped", "wag_tail").time_symmetric


def test_variations_are_deterministic_per_label_and_split():
    train = sample_variations("walk", "train", 6, seed=0)
    assert train == sample_variations("walk", "train", 6, seed=0)
    held = sample_variations("walk", "heldout", 6, seed=0)
    assert not set(train) & set(held)
    assert sample_variations("run", "train", 6, seed=0) != train
    for v in train + held:
        assert 0.8 <= v.speed <= 1.25 and 0.8 <= v.amplitude <= 1.2 and abs(v.facing) <= np.pi / 3
    with pytest.raises(ValueError, match="split must be"):
        sample_variations("walk", "test")


def test_variations_change_speed_amplitude_and_facing():
    rig, roles = CHARACTERS["procedural_biped"]
    base = Measured(rig, roles, make_role_clip(rig, roles, "walk", Variation(), FRAMES, FPS), 0.0)
    fast = Measured(rig, roles, make_role_clip(rig, roles, "walk", Variation(speed=1.25), FRAMES, FPS), 0.0)
    assert travel(fast)[0] > 1.15 * travel(base)[0]
    big = Measured(rig, roles, make_role_clip(rig, roles, "wave", Variation(amplitude=1.2), FRAMES, FPS), 0.0)
    small = Measured(rig, roles, make_role_clip(rig, roles, "wave", Variation(amplitude=0.8), FRAMES, FPS), 0.0)
    assert np.abs(big.verts - small.verts).max() > 0.02 * big.H
    turned = Measured(rig, roles, make_role_clip(rig, roles, "walk", Variation(facing=0.7), FRAMES, FPS), 0.7)
    ahead, aside = travel(turned)
    assert ahead > 0.9 * travel(base)[0] and aside < 0.1 * ahead
    phased = make_role_clip(rig, roles, "walk", Variation(phase=0.5), FRAMES, FPS)
    assert np.abs(phased.rotations - base.clip.rotations).max() > 0.05


def test_unknown_kind_or_label_is_named():
    with pytest.raises(InputError, match="moonwalk"):
        role_motion("biped", "moonwalk")
    with pytest.raises(InputError, match="'other'"):
        motions_for("other")


# --------------------------------------------------------------------------- invariances


def _rolled(rig: RigAsset, seed: int) -> RigAsset:
    """Every bone's rest frame turned about its own Y axis by a random roll (same geometry)."""
    rng = np.random.default_rng(seed)
    rest = rig.rest_matrices.copy()
    for b, roll in enumerate(rng.uniform(-np.pi, np.pi, rig.num_bones)):
        rest[b, :3, :3] = rest[b, :3, :3] @ rotation([0.0, 1.0, 0.0], roll)
    return dataclasses.replace(rig, rest_matrices=rest)


def _world(rig: RigAsset, clip: MotionClip) -> np.ndarray:
    return Skeleton(rig, torch.float64)(clip).numpy()


@pytest.mark.parametrize("label", ["walk", "wave", "bow", "crouch"])
def test_motions_do_not_depend_on_bone_rolls(label):
    rig, roles = CHARACTERS["procedural_biped"]
    rolled = _rolled(rig, 3)
    v = Variation(facing=0.4)
    a = _world(rig, make_role_clip(rig, roles, label, v, FRAMES, FPS))
    b = _world(rolled, make_role_clip(rolled, roles, label, v, FRAMES, FPS))
    np.testing.assert_allclose(a, b, atol=1e-6 * rig.height)


@pytest.mark.parametrize("label", ["walk", "sit", "wag_tail"])
def test_motions_do_not_depend_on_the_armature_axes(label):
    """A Y-up, turned, shifted armature space (same world character) plays the same motion."""
    rig, roles = CHARACTERS["procedural_quadruped"]
    turned = reexpressed(rig, affine(rotation([1.0, 0.0, 0.0], np.pi / 2) @ rotation([0, 0, 1.0], 0.8), (0.2, 0.5, -0.3)))
    turned_roles = find_roles(turned)
    v = Variation(facing=-0.5)
    a = _world(rig, make_role_clip(rig, roles, label, v, FRAMES, FPS))
    b = _world(turned, make_role_clip(turned, turned_roles, label, v, FRAMES, FPS))
    np.testing.assert_allclose(a, b, atol=1e-5 * rig.height)


def _under_a_parent(rig: RigAsset, local_location: bool) -> RigAsset:
    """The rig with a new non-deforming bone 0 above every root, its rest frame turned (a glTF
    ``_rootJoint``); the old root's location channel in its own axes or in the parent's."""
    rest0 = np.eye(4)
    rest0[:3, :3] = rotation([1.0, 0.3, -0.2], 1.1)
    rest0[:3, 3] = (0.1, -0.2, 0.05)
    parents = np.concatenate([[-1], np.where(rig.parents < 0, 0, rig.parents + 1)])
    flag = lambda arr, value: np.concatenate([[value], arr])  # noqa: E731
    use_local = rig.use_local_location.copy()
    use_local[rig.root_indices] = local_location
    return dataclasses.replace(
        rig,
        bone_names=("_rootJoint",) + rig.bone_names,
        parents=parents,
        rest_matrices=np.concatenate([rest0[None], rig.rest_matrices]),
        heads=np.concatenate([rest0[None, :3, 3], rig.heads]),
        tails=np.concatenate([rest0[None, :3, 3] + rest0[None, :3, 1], rig.tails]),
        lengths=flag(rig.lengths, 1.0),
        use_deform=flag(rig.use_deform, False),
        use_connect=flag(rig.use_connect, False),
        inherit_rotation=flag(rig.inherit_rotation, True),
        use_local_location=flag(use_local, True),
        rotation_modes=("QUATERNION",) + rig.rotation_modes,
        rotation_locks=np.concatenate([np.zeros((1, 3), bool), rig.rotation_locks]),
        location_locks=np.concatenate([np.zeros((1, 3), bool), rig.location_locks]),
        rotation_limits=np.concatenate([np.full((1, 3, 2), np.nan), rig.rotation_limits]),
        weights=np.concatenate([np.zeros((rig.num_vertices, 1), np.float32), rig.weights], axis=1),
    )


@pytest.mark.parametrize("local_location", [True, False])
def test_root_travel_goes_through_the_root_channel_whatever_its_parent(local_location):
    rig, roles = CHARACTERS["procedural_biped"]
    wrapped = _under_a_parent(rig, local_location)
    wrapped_roles = find_roles(wrapped)
    assert wrapped_roles.root == roles.root + 1
    v = Variation(facing=0.3)
    for label in ("walk", "turn", "jump"):
        a = _world(rig, make_role_clip(rig, roles, label, v, FRAMES, FPS))
        b = _world(wrapped, make_role_clip(wrapped, wrapped_roles, label, v, FRAMES, FPS))
        np.testing.assert_allclose(a, b, atol=1e-6 * rig.height, err_msg=label)


def test_arms_hang_down_from_any_rest_pose():
    """T-pose (procedural biped) and each family biped's own rest arms: at the walk's first frame the
    hands hang below the shoulders, near the hips."""
    for name in ("procedural_biped", "family_biped_5"):
        m = measured(name, "walk")
        for limb in m.roles.arms:
            shoulder = m.rig.heads[limb.bones[0]] @ m.up - m.ground
            hand = m.height(m.of(limb.bones[-1:]))[0].mean()
            assert hand < shoulder - 0.2 * m.H, (name, limb.side)


def test_role_walk_differs_from_the_named_walk_but_bothtravel():
    rig = biped()
    roles = find_roles(rig)
    old = named.make_clip(rig, "biped", "walk", Variation(), frames=16, fps=8.0)
    new = make_role_clip(rig, roles, "walk", Variation(), frames=16, fps=8.0)
    assert np.abs(old.rotations - new.rotations).max() > 0.05
    for clip in (old, new):
        m = Measured(rig, roles, clip, 0.0)
        assert travel(m)[0] > 0.5


@pytest.mark.parametrize("kind", ["biped", "quadruped", "bird", "hexapod", "serpent"])
def test_motions_play_on_a_bare_body_and_on_one_frame(kind):
    """Roles with no spine, neck, head, tail, arms or wings still give valid clips, at any length."""
    rig, roles = CHARACTERS["family_serpent_2" if kind == "serpent" else f"procedural_{kind}"]
    bare = dataclasses.replace(roles, spine=(), neck=(), head=None, tail=(), arms=(), wings=())
    for spec in LIBRARY[kind]:
        for frames, r in ((6, bare), (1, roles)):
            clip = make_role_clip(rig, r, spec.label, Variation(), frames, FPS)
            assert clip.num_frames == frames and np.isfinite(clip.rotations).all() and np.isfinite(clip.locations).all()
            np.testing.assert_allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0, atol=1e-9)


@pytest.mark.parametrize("name,label", [("family_quadruped_0", "run"), ("family_biped_5", "walk"), ("family_hexapod_6", "walk")])
def test_gait_body_dips_and_rocks_with_its_feet_planted(name, label):
    """A variation's ``bob`` dips the body with each step and its ``rock`` pitches it once per stride;
    the gait still travels with planted feet, and a level variation is the library's own gait."""
    from akd_blender.core.motion.judge import body_tracks

    rig, roles = CHARACTERS[name]
    level = Variation(speed=0.8)
    moving = dataclasses.replace(level, bob=0.15, rock=8.0, body_phase=0.3)
    plain, dipped = (make_role_clip(rig, roles, label, v, FRAMES, FPS) for v in (level, moving))
    a, b = body_tracks(rig, roles, plain), body_tracks(rig, roles, dipped)
    assert np.ptp(b[:, 3]) > np.ptp(a[:, 3]) + 0.02  # the root's height above the ground, in heights
    assert np.ptp(b[:, 7]) > np.ptp(a[:, 7]) + 0.08  # the body's forward tilt (sin of the pitch)
    check_gait(Measured(rig, roles, dipped, level.facing))
    again = make_role_clip(rig, roles, label, Variation(speed=0.8, bob=0.0, rock=0.0, body_phase=0.7), FRAMES, FPS)
    np.testing.assert_allclose(again.rotations, plain.rotations)


def _feet_ahead_and_up(rig: RigAsset, roles, clip: MotionClip) -> dict[str, np.ndarray]:
    """Leg slot → [F,2]: its foot's distance ahead of the root and height above the ground (heights)."""
    from akd_blender.core.motion.judge import slot_points

    pose = Skeleton(rig).pose_matrices(*clip.pose_channels(torch.float64)).numpy()
    frame = roles.frame
    out = {}
    for name, (bone, point) in slot_points(rig, roles).items():
        if name.startswith("leg"):
            skin = pose[:, bone] @ np.linalg.inv(rig.rest_matrices[bone])
            tip = skin[:, :3, :3] @ point + skin[:, :3, 3]
            ahead = (tip - pose[:, roles.root, :3, 3]) @ frame.forward
            out[name] = np.stack([ahead, tip @ frame.up - frame.ground], 1) / frame.height
    return out


def test_gait_reach_shift_overreach_and_lift_peak():
    """``reach_shift`` moves the front feet's sweep forward and the hind feet's back; ``overreach``
    widens the sweep in the air; ``lift_peak`` puts a foot's highest point early (behind) or late
    (ahead) in its swing; the defaults are the library's gait."""
    from akd_blender.core.motion.library.limbs import gait

    rig, roles = CHARACTERS["family_quadruped_0"]
    v = Variation(speed=0.8)

    def feet(**kw):
        return _feet_ahead_and_up(
            rig, roles, gait(rig, roles, FRAMES, FPS, v, cycles=2.0, swing=30, duty=0.4, clearance=0.3, **kw)
        )

    base, shifted, wide = feet(), feet(reach_shift=0.2, max_reach=0.8), feet(overreach=0.3, max_reach=0.8)
    for name, track in base.items():
        sign = 1.0 if ".front." in name else -1.0
        assert sign * (shifted[name][:, 0].mean() - track[:, 0].mean()) > 0.05, name
        assert np.ptp(wide[name][:, 0]) > np.ptp(track[:, 0]) + 0.05, name
    early, late = feet(lift_peak=0.2, front_lift_peak=0.2), feet(lift_peak=0.8, front_lift_peak=0.8)

    def ahead_when_highest(track: np.ndarray) -> float:
        return float(track[np.argmax(track[:, 1]), 0] - track[:, 0].mean())

    for name in base:
        assert ahead_when_highest(early[name]) < ahead_when_highest(late[name]), name
    same = feet(lift_peak=0.5, front_lift_peak=None, overreach=0.0, reach_shift=0.0)
    for name in base:
        np.testing.assert_allclose(same[name], base[name], atol=1e-12)


@pytest.mark.parametrize("name", ["procedural_biped", "procedural_quadruped", "procedural_bird"])
def test_tied_segments_stay_at_rest_on_their_parent_in_every_motion(name):
    """A rig whose controls turn some bones only with their parent (``RigAsset.tied_bones``): every
    motion of its kind leaves those bones' channels at rest."""
    rig, roles = CHARACTERS[name]
    chains = [limb.bones for limb in (*roles.legs, *roles.arms, *roles.wings) if len(limb.bones) >= 3]
    tied = {rig.bone_names[chain[-1]] for chain in chains} | {rig.bone_names[b] for b in (*roles.tail[1:2], *roles.neck[1:2])}
    tied_rig = dataclasses.replace(rig, tied_bones=tuple(n for n in rig.bone_names if n in tied))
    index = [rig.bone_names.index(n) for n in tied_rig.tied_bones]
    assert index
    for spec in LIBRARY[roles.kind]:
        clip = make_role_clip(tied_rig, roles, spec.label, Variation(), FRAMES, FPS)
        rest = np.abs(np.abs(clip.rotations[:, index, 0]) - 1.0).max()
        assert rest < 1e-9, (spec.label, rest)
