"""Body tracks and the motion judge: what they read from a clip of any rig, and what they ignore."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.roles import find_roles
from akd_blender.core.motion.clip import MotionClip
from akd_blender.core.motion.judge import ASSET_DIR as ASSET  # noqa: E402
from akd_blender.core.motion.judge import (
    SLOTS,
    TRACK_CHANNELS,
    MotionJudge,
    MotionJudgeConfig,
    MotionJudgeNet,
    body_tracks,
    mirror_tracks,
    slot_points,
)
from akd_blender.core.motion.library import make_role_clip, motions_for
from akd_blender.core.motion.library.labelled import Variation
from tests.core.rig_variants import affine, placed, renamed, rotation
from tools.family import make_member
from tools.family.truth import truth_roles


@pytest.fixture(scope="module")
def dog():
    member = make_member("quadruped", 10003)
    return member.rig, truth_roles(member)


def _walk(rig, roles, facing: float = 0.0) -> MotionClip:
    return make_role_clip(rig, roles, "walk", Variation(facing=facing), 16, 8.0)


def test_tracks_shape_and_start(dog):
    rig, roles = dog
    tracks = body_tracks(rig, roles, _walk(rig, roles))
    assert tracks.shape == (16, TRACK_CHANNELS) and np.isfinite(tracks).all()
    np.testing.assert_allclose(tracks[0, :3], 0.0, atol=1e-9)  # no displacement at the start
    points = slot_points(rig, roles)
    assert {"leg.front.left", "leg.front.right", "leg.hind.left", "leg.hind.right", "head", "tail"} <= set(points)
    for i, name in enumerate(SLOTS):
        present = tracks[:, 8 + 4 * i + 3]
        assert (present == 1.0).all() if name in points else (present == 0.0).all()


def test_walk_travels_forward_whatever_the_facing(dog):
    rig, roles = dog
    a = body_tracks(rig, roles, _walk(rig, roles, 0.0))
    b = body_tracks(rig, roles, _walk(rig, roles, 2.0))
    assert a[-1, 1] > 0.3  # forward, in heights
    assert abs(a[-1, 0]) < 0.05 * a[-1, 1]
    np.testing.assert_allclose(a, b, atol=1e-6)  # the same walk turned is the same tracks


def test_tracks_ignore_names_placement_and_units(dog):
    rig, roles = dog
    clip = _walk(rig, roles)
    base = body_tracks(rig, roles, clip)
    np.testing.assert_allclose(
        body_tracks(renamed(rig, 1), find_roles(renamed(rig, 1)), clip), body_tracks(rig, find_roles(rig), clip), atol=1e-9
    )
    moved = placed(rig, affine(rotation([0, 0, 1], 1.1), (3.0, -2.0, 0.0)))
    np.testing.assert_allclose(body_tracks(moved, roles, clip), base, atol=1e-6)
    big = make_member("quadruped", 10003)  # the same seed is the same body: scale it in the world by 50
    world = affine(np.eye(3) * 50.0) @ big.rig.armature_world
    import dataclasses

    scaled = dataclasses.replace(big.rig, armature_world=world, height=big.rig.height * 50, ground_height=0.0)
    np.testing.assert_allclose(body_tracks(scaled, roles, clip), base, atol=1e-6)


def test_mirror_swaps_sides(dog):
    rig, roles = dog
    tracks = torch.from_numpy(body_tracks(rig, roles, make_role_clip(rig, roles, "turn", Variation(direction=1), 16, 8.0)))
    other = torch.from_numpy(body_tracks(rig, roles, make_role_clip(rig, roles, "turn", Variation(direction=-1), 16, 8.0)))
    assert torch.allclose(mirror_tracks(mirror_tracks(tracks)), tracks)
    assert tracks[-1, 4] * other[-1, 4] < 0  # turned the other way
    assert (mirror_tracks(tracks)[-1, 4] - other[-1, 4]).abs() < 0.1


def test_judge_round_trip(tmp_path, dog):
    rig, roles = dog
    torch.manual_seed(0)
    cfg = MotionJudgeConfig(labels=("walk", "sit", "none"), width=16)
    judge = MotionJudge(MotionJudgeNet(cfg), cfg)
    judge.save(tmp_path)
    again = MotionJudge.load(tmp_path)
    a, b = judge.judge(rig, roles, _walk(rig, roles)), again.judge(rig, roles, _walk(rig, roles))
    assert a["label"] == b["label"] and a["probability"] == pytest.approx(b["probability"], abs=2e-3)  # fp16 weights
    assert sum(p for _, p in a["top"]) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("kind", ["biped", "quadruped", "bird", "hexapod"])
def test_shipped_judge_reads_unseen_members(kind):
    """Ground truth of every motion on held-out members no training clip came from; the rest pose and
    shuffled motion read as none."""
    judge = MotionJudge.load(ASSET)
    right, total = 0, 0
    for seed in (10900, 10901):
        member = make_member(kind, seed)
        roles = truth_roles(member)
        for spec in motions_for(kind):
            if spec.label not in judge.cfg.labels:  # a library motion the shipped judge was not trained on
                continue
            clip = make_role_clip(member.rig, roles, spec.label, Variation(), 48, 24.0)
            right += judge.judge(member.rig, roles, clip)["label"] == spec.label
            total += 1
        rest = MotionClip.rest(member.rig, 48, 24.0)
        assert judge.judge(member.rig, roles, rest)["label"] == "none"
    assert right / total >= 0.85
