"""The labelled motion library: shapes, labels, phrasings, variations, and that motions really move."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.character.procedural import CHARACTERS
from akd_blender.core.motion.library.labelled import (
    LABELS,
    MOTIONS,
    NONE_LABEL,
    Variation,
    all_phrasings,
    make_clip,
    motion_spec,
    prompt_vocabulary,
    rest_clip,
    sample_variations,
)


@pytest.fixture(scope="module")
def rigs():
    return {name: fn() for name, fn in CHARACTERS.items()}


def test_library_covers_both_characters_with_six_motions_and_phrasings():
    assert set(MOTIONS) == {"biped", "quadruped"}
    for character, specs in MOTIONS.items():
        assert len(specs) >= 6
        assert len({s.label for s in specs}) == len(specs)
        for s in specs:
            assert s.character == character
            assert len(s.phrasings) >= 3 and len(s.heldout_phrasings) >= 1
            assert not set(s.phrasings) & set(s.heldout_phrasings)
    assert LABELS[-1] == NONE_LABEL and len(set(LABELS)) == len(LABELS)
    train, held, extra = set(all_phrasings("train")), set(all_phrasings("heldout")), set(all_phrasings("extra"))
    assert train and held and not train & held
    # The prompt matcher's extra wordings: several per motion, none trained on or benchmarked.
    assert all(len(s.extra_phrasings) >= 6 for specs in MOTIONS.values() for s in specs)
    assert not extra & (train | held)
    assert len(all_phrasings("all")) == len(train) + len(held) + len(extra)
    vocabulary = prompt_vocabulary()
    assert {p for p, _, trained in vocabulary if trained} == train and {p for p, _, t in vocabulary if not t} == extra
    with pytest.raises(ValueError, match="split must be"):
        all_phrasings("validation")


@pytest.mark.parametrize("character", ["biped", "quadruped"])
def test_every_motion_is_a_valid_clip_that_moves(rigs, character):
    rig = rigs[character]
    skeleton = Skeleton(rig, torch.float64)
    rest = skeleton(rest_clip(rig, 16)).numpy()
    for spec in MOTIONS[character]:
        clip = make_clip(rig, character, spec.label, Variation(), frames=16, fps=8)
        assert clip.matches(rig) and clip.num_frames == 16
        assert clip.rotations.shape == (16, rig.num_bones, 4) and clip.locations.shape == (16, rig.num_bones, 3)
        np.testing.assert_allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0, atol=1e-9)
        verts = skeleton(clip).numpy()
        assert np.isfinite(verts).all()
        # It moves: mean vertex displacement from rest above 5 cm somewhere, and frames differ.
        assert np.linalg.norm(verts - rest, axis=-1).mean(1).max() > 0.05, spec.label
        assert np.abs(np.diff(verts, axis=0)).max() > 1e-3, spec.label
        # Stays near the ground plane (no sinking through it by more than a few cm).
        assert verts[..., 2].min() > rig.ground_height - 0.2, spec.label


def test_variations_change_the_clip_and_splits_are_disjoint(rigs):
    train, held = sample_variations(5, 0, "train"), sample_variations(5, 0, "heldout")
    assert train == sample_variations(5, 0, "train")  # deterministic
    assert not set(train) & set(held)
    rig = rigs["biped"]
    a = make_clip(rig, "biped", "walk", train[0])
    b = make_clip(rig, "biped", "walk", train[1])
    assert np.abs(a.rotations - b.rotations).max() > 1e-3
    with pytest.raises(ValueError):
        sample_variations(1, split="test")


def test_walk_moves_forward_along_facing_and_turn_turns(rigs):
    rig = rigs["biped"]
    skeleton = Skeleton(rig, torch.float64)
    for facing in (0.0, 0.7):
        clip = make_clip(rig, "biped", "walk", Variation(facing=facing))
        joints = skeleton.joint_positions(*clip.pose_channels(torch.float64)).numpy()
        travel = joints[-1, 0, :2] - joints[0, 0, :2]
        forward = np.array([np.sin(facing), -np.cos(facing)])  # facing -Y turned by `facing` about Z
        assert travel @ forward > 0.5 and abs(np.cross(forward, travel)) < 0.1 * np.linalg.norm(travel)
    turn = make_clip(rig, "biped", "turn", Variation(direction=1))
    joints = skeleton.joint_positions(*turn.pose_channels(torch.float64)).numpy()
    hips_l = rig.bone_index("thigh.L")
    side0, side1 = joints[0, hips_l, :2] - joints[0, 0, :2], joints[-1, hips_l, :2] - joints[-1, 0, :2]
    angle = np.degrees(np.arctan2(np.cross(side0, side1), side0 @ side1))
    assert 90 < angle < 180


def test_wave_raises_the_right_hand_only(rigs):
    rig = rigs["biped"]
    skeleton = Skeleton(rig, torch.float64)
    clip = make_clip(rig, "biped", "wave")
    joints = skeleton.joint_positions(*clip.pose_channels(torch.float64)).numpy()
    right, left = rig.bone_index("hand.R"), rig.bone_index("hand.L")
    assert joints[-1, right, 2] > 1.6 and joints[-1, left, 2] < 1.2


def test_unknown_motion_is_named():
    with pytest.raises(KeyError, match="moonwalk"):
        motion_spec("biped", "moonwalk")
