"""The motion judge's clips, augmentations and training (tiny sizes on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from akd_blender.core.character.kinematics import Skeleton
from akd_blender.core.motion.judge import SLOTS, TRACK_CHANNELS, MotionJudge, MotionJudgeConfig
from akd_blender.core.motion.library.labelled import NONE_LABEL
from tools.family import make_member
from tools.family.truth import truth_roles
from tools.motion_judge.__main__ import train
from tools.motion_judge.augment import corrupt, limb_jitter, secondary_motion
from tools.motion_judge.clips import LOCOMOTION, JudgeItem, judge_labels, member_clips, member_items, remove_travel
from tools.motion_judge.data import build_tracks


def test_labels_cover_every_kind_and_end_with_none():
    labels = judge_labels()
    assert labels[-1] == NONE_LABEL and len(set(labels)) == len(labels)
    assert {"walk", "wave", "wag_tail", "flap_wings", "gallop"} <= set(labels)


def test_member_items_hold_every_motion_and_negatives():
    items = member_items("quadruped", 3, "train", per_motion=2, negatives=3)
    motions = [i for i in items if i.label != NONE_LABEL]
    assert len(items) - len(motions) == 3
    assert {i.source for i in items if i.label == NONE_LABEL} >= {"rest", "wiggle"}
    assert all(sum(i.label == m.label for i in motions) == 2 for m in motions)
    assert member_items("quadruped", 3, "train", 2, 3) == items
    assert member_items("quadruped", 3, "heldout", 2, 3) != items


def test_in_place_removes_horizontal_travel_only():
    member = make_member("biped", 5)
    rig, roles = member.rig, truth_roles(member)
    item = JudgeItem("biped", 5, "walk", "walk", 500)
    (clip,) = member_clips("biped", 5, [item])
    still = remove_travel(rig, roles, clip)
    skeleton = Skeleton(rig)  # world-space vertices
    path, held = skeleton(clip).mean(1).numpy(), skeleton(still).mean(1).numpy()
    travel = np.linalg.norm((path[-1] - path[0])[:2])
    assert travel > 0.3 * member.style.height
    assert np.linalg.norm((held[-1] - held[0])[:2]) < 0.15 * travel
    np.testing.assert_allclose(held[:, 2] - held[0, 2], path[:, 2] - path[0, 2], atol=1e-6 * member.style.height)
    assert "walk" in LOCOMOTION


def test_build_tracks_labelled():
    data = build_tracks({"biped": [1], "bird": [2]}, "train", per_motion=1, negatives=2)
    n = len(data["items"])
    assert data["tracks"].shape == (n, 16, TRACK_CHANNELS) and torch.isfinite(data["tracks"]).all()
    labels = judge_labels()
    assert [labels[i] for i in data["label"].tolist()] == [i.label for i in data["items"]]
    assert data["reversible"][[i.label == NONE_LABEL for i in data["items"]]].all()


def test_a_hop_on_the_spot_is_reversible_a_travelling_one_not():
    data = build_tracks({"bird": [2, 3, 4]}, "train", per_motion=2, negatives=0)
    hops = {(i.in_place, bool(r)) for i, r in zip(data["items"], data["reversible"]) if i.source == "hop"}
    assert hops == {(True, True), (False, False)}
    walks = {bool(r) for i, r in zip(data["items"], data["reversible"]) if i.source == "walk"}
    assert walks == {False}  # a walk on the spot still has a time direction


def test_corrupt_shuffles_freezes_or_reverses():
    x = torch.arange(40, dtype=torch.float32).view(4, 10, 1)
    gen = torch.Generator().manual_seed(0)
    y = corrupt(x.repeat(8, 1, 1), torch.zeros(32, dtype=torch.bool), gen)
    kinds = set()
    for clip in y[..., 0]:
        base = clip.min() - clip.min() % 10
        frames = clip - base
        if (frames == frames[0]).all():
            kinds.add("frozen")
        elif torch.equal(frames, torch.arange(9.0, -1, -1)):
            kinds.add("reversed")
        else:
            assert sorted(frames.tolist()) == list(range(10))
            kinds.add("shuffled")
    assert kinds == {"frozen", "reversed", "shuffled"}
    never_reversed = corrupt(x.repeat(8, 1, 1), torch.ones(32, dtype=torch.bool), torch.Generator().manual_seed(0))
    assert not any(torch.equal(c[:, 0] % 10, torch.arange(9.0, -1, -1)) for c in never_reversed)


def test_secondary_motion_sways_present_slots_only():
    x = torch.zeros(4, 16, TRACK_CHANNELS)
    tail = 8 + 4 * SLOTS.index("tail")
    x[..., tail + 3] = 1.0  # only the tail is present
    a = secondary_motion(x.clone(), torch.Generator().manual_seed(3))
    b = secondary_motion(x.clone(), torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    assert a[..., tail : tail + 3].abs().amax() > 0.01  # the tail swings
    head = 8 + 4 * SLOTS.index("head")
    assert a[..., head : head + 4].abs().amax() == 0  # an absent head stays absent
    assert a[..., tail + 3].eq(1.0).all()


def test_limb_jitter_changes_present_slots_only():
    """Each present slot gets its own scale, phase and smooth noise and still starts at zero; root
    channels, flags and absent slots are left as they are."""
    data = build_tracks({"quadruped": [4]}, "train", per_motion=1, negatives=0)
    x = data["tracks"]
    a = limb_jitter(x, torch.Generator().manual_seed(2))
    assert torch.equal(a, limb_jitter(x, torch.Generator().manual_seed(2)))
    assert torch.equal(a[..., :8], x[..., :8])
    for i, name in enumerate(SLOTS):
        c = 8 + 4 * i
        assert torch.equal(a[..., c + 3], x[..., c + 3])
        if x[0, 0, c + 3] == 0:
            assert a[..., c : c + 3].abs().amax() == 0, name
        else:
            assert a[:, 0, c : c + 3].abs().amax() < 1e-6, name
            assert (a[..., c : c + 3] - x[..., c : c + 3]).abs().amax() > 0.01, name
    ratio = a[..., 8 + 4 * SLOTS.index("leg.front.left") + 1].std(1) / x[..., 8 + 4 * SLOTS.index("leg.front.left") + 1].std(1)
    assert ratio.min() < 0.95 or ratio.max() > 1.05  # scaled


def test_train_a_few_steps_and_round_trip(tmp_path):
    data = build_tracks({"quadruped": [4]}, "train", per_motion=1, negatives=2)
    cfg = MotionJudgeConfig(labels=judge_labels(), frames=16, channels=TRACK_CHANNELS, width=16)
    judge, stats = train(data, cfg, seconds=2.0, batch=8, lr=1e-3, seed=0, device="cpu")
    assert stats["steps"] >= 1 and np.isfinite(stats["final_loss"])
    judge.save(tmp_path)
    again = MotionJudge.load(tmp_path)
    p = again.probabilities(data["tracks"][:2])
    assert p.shape == (2, len(cfg.labels)) and torch.allclose(p.sum(-1), torch.ones(2), atol=1e-5)
    assert again.cfg.labels == cfg.labels


@pytest.mark.parametrize("kind", ["biped", "quadruped", "bird", "hexapod"])
def test_every_kind_has_clips(kind):
    items = member_items(kind, 0, "train", 1, 0)
    clips = member_clips(kind, 0, items)
    assert len(clips) == len(items) > 3
    assert all(np.isfinite(c.rotations).all() for c in clips)
